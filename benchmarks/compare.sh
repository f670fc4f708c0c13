#!/usr/bin/env bash
# benchmarks/compare.sh gambit|socha [GAMES...]
#
# The side-by-side comparison of docs/performance.md, in one run: every server
# under the same independent load generator (the course's bench tools: each
# server pinned to core 0 in a private network namespace, the load generator
# on core 1, server CPU read from /proc). Needs root (unshare -n) and:
#
#   BENCH=DIR        the bench tools (gambit-bench, socha-bench; default ../shared/bench)
#   GAMBITSRV=FILE   the original Go server, built from sdemingo/gambitsrv
#                    (optional: without it only velhanet's rows are measured)
#
# gambit rows: original, velhanet (validation, default pacing), velhanet
# --no-validate, and the floor (benchmarks/gambit_floor.py: the least a
# Twisted relay can do). socha rows: velhanet --no-timeout.
# Numbers are only comparable within one run; compare ratios.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
bench=${BENCH:-$here/../shared/bench}
twistd="$here/.venv/bin/twistd"
python="$here/.venv/bin/python"
family=${1:?gambit or socha}
shift
run() {
    echo "## $1"
    shift
    "$@" 2>&1 | grep -E '^(rep|games)='
}
case $family in
gambit)
    games=${*:-10 100 1000}
    port=22022
    export XDG_CACHE_HOME=${XDG_CACHE_HOME:-$here/.cache}
    if [ -n "${GAMBITSRV:-}" ]; then
        run "original Go server" "$bench/gambit-bench" $port "$games" "$GAMBITSRV" -p $port
    fi
    served="--pidfile= --logfile=/dev/null gambit-server --listen tcp:$port:interface=127.0.0.1"
    run "velhanet (validation, default pacing)" "$bench/gambit-bench" $port "$games" "$twistd" -n $served
    run "velhanet --no-validate" "$bench/gambit-bench" $port "$games" "$twistd" -n $served --no-validate
    run "floor: minimal Twisted relay" "$bench/gambit-bench" $port "$games" "$python" "$here/benchmarks/gambit_floor.py" $port
    ;;
socha)
    games=${*:-1 10 100 200}
    port=13050
    export SOCHA_LOAD_PYTHON=${SOCHA_LOAD_PYTHON:-$python}
    run "velhanet socha-server --no-timeout" "$bench/socha-bench" $port "$games" \
        "$twistd" -n --pidfile= --logfile=/dev/null socha-server --listen tcp:$port:interface=127.0.0.1 --no-timeout
    ;;
*)
    echo "usage: $0 gambit|socha [GAMES...]" >&2
    exit 2
    ;;
esac
