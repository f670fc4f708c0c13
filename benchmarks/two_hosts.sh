#!/usr/bin/env bash
# Two hosts on one machine for a Dask cluster: network namespaces vhA (198.18.0.1) and vhB (198.18.0.2)
# on a bridge, a scheduler and a worker in vhA, a worker in vhB (the interop notes' "Two hosts for a
# cluster"). Needs root, iproute2 and Dask (pip install 'velhanet[cluster]').
#
#   sudo benchmarks/two_hosts.sh up [THREADS]    # THREADS per worker (default 2); prints the scheduler
#   sudo ip netns exec vhA velhanet-grade gambit CLASS --scheduler tcp://198.18.0.1:8786
#   sudo benchmarks/two_hosts.sh down
#
# Every address is pinned (--host), so Dask never looks for a route to find its own. The logs are in
# /tmp/velhanet-two-hosts/.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
python=${PYTHON:-$here/.venv/bin/python}
dask="$(dirname "$python")/dask"
logs=/tmp/velhanet-two-hosts

down() {
    for pidfile in "$logs"/*.pid; do
        [ -e "$pidfile" ] && kill "$(cat "$pidfile")" 2>/dev/null || true
    done
    rm -f "$logs"/*.pid
    ip netns del vhA 2>/dev/null || true
    ip netns del vhB 2>/dev/null || true
    ip netns del vhbr 2>/dev/null || true
}

up() {
    threads=${1:-2}
    down
    mkdir -p "$logs"
    ip netns add vhbr
    ip -n vhbr link add br0 type bridge
    ip -n vhbr link set br0 up
    for pair in "vhA 198.18.0.1" "vhB 198.18.0.2"; do
        set -- $pair
        ip netns add "$1"
        ip link add "$1-eth" netns "$1" type veth peer name "$1-port" netns vhbr
        ip -n vhbr link set "$1-port" master br0 up
        ip -n "$1" addr add "$2/24" dev "$1-eth"
        ip -n "$1" link set "$1-eth" up
        ip -n "$1" link set lo up
        ip -n "$1" route add default dev "$1-eth"
    done
    start() {  # NAMESPACE NAME COMMAND...
        local namespace=$1 name=$2
        shift 2
        ip netns exec "$namespace" "$@" >"$logs/$name.log" 2>&1 &
        echo $! >"$logs/$name.pid"
    }
    start vhA scheduler "$dask" scheduler --host 198.18.0.1 --port 8786 --no-dashboard
    sleep 3
    start vhA workerA "$dask" worker tcp://198.18.0.1:8786 --host 198.18.0.1 --nthreads "$threads" --name hostA --no-dashboard
    start vhB workerB "$dask" worker tcp://198.18.0.1:8786 --host 198.18.0.2 --nthreads "$threads" --name hostB --no-dashboard
    for _ in $(seq 60); do
        grep -q "Starting established connection" "$logs/workerA.log" "$logs/workerB.log" 2>/dev/null \
            && [ "$(grep -l "Starting established connection" "$logs"/worker?.log | wc -l)" -eq 2 ] && break
        sleep 1
    done
    echo "tcp://198.18.0.1:8786"
}

case "${1:-}" in
    up) up "${2:-2}" ;;
    down) down ;;
    *) echo "usage: $0 up [THREADS] | down" >&2; exit 2 ;;
esac
