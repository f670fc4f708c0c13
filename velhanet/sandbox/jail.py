"""The bubblewrap command line of one sandboxed program, and the supervisor that runs first inside it.

Pure: a L{Jail} says what the program sees, L{bwrapArgv} turns it into the
``bwrap`` argv. What the program sees:

- the system read-only: ``/usr`` (and ``/bin``, ``/lib`` … as the host has
  them), ``/etc`` without its secrets (``shadow``, ``sudoers``, ssh host keys),
  ``/opt``, the Python that runs velhanet (its prefix and base prefix) and
  velhanet's own package, nothing else of velhanet's files;
- its own folder as a private, writable copy at the folder's own path (so
  relative and absolute paths in its command work), on a tmpfs as large as
  the disk limit, and a private ``/tmp`` of the same size;
- folders it shares with its checker, read-write (the Gobang FIFO directory);
- no home directory, no other submission, its own ``/proc``, a minimal
  ``/dev``, and a clean environment (``PATH``, ``LANG``, ``HOME`` = its folder).

It runs in new user, PID, network, IPC, UTS and cgroup namespaces, as
uid 65534, with no capabilities; its network namespace has only loopback
(``network.py`` makes every other address refuse at once, and names it).

The supervisor (L{SUPERVISOR}, POSIX ``sh``) is the namespace's PID 1, which
the program cannot signal: it makes the private copy, starts the program with
the status descriptor closed (and its standard input ``/dev/null``, unless
the jail passes velhanet's pipe through, as a UCI engine needs), waits for
it, counts what it left running (a process whose parent is outside the
namespace, parent 0 there, is a helper velhanet joined to it, not the
program's), writes ``exit N left M`` on the status descriptor, and kills
the rest. When
bwrap dies (velhanet stops the program) the kernel kills the whole
namespace: nothing is left running, no mount outlives it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import velhanet

SANDBOX_UID = 65534
"""The program's uid and gid inside: ``nobody``."""

SOURCE = "/run/velhanet/source"
"""Where the original of the program's folder is seen (read-only) while the supervisor copies it."""

STATUS_FD = 3
"""The descriptor on which the supervisor reports; closed for the program itself."""

SYSTEM_DIRS = ("/usr", "/etc", "/opt")
LINKABLE = ("/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32")
SECRETS = (
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/sudoers",
    "/etc/security/opasswd",
)
SECRET_DIRS = ("/etc/ssh", "/etc/sudoers.d", "/etc/ssl/private")
KEPT_ENVIRONMENT = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TZ", "JAVA_HOME", "PYTHONPATH", "VIRTUAL_ENV")

SUPERVISOR = r"""
if [ -n "${VELHANET_COPY:-}" ]; then
    if ! cp -a "$VELHANET_SOURCE"/. "$VELHANET_COPY"/ 2>/dev/null; then
        echo "copyfailed" >&3
        exit 125
    fi
fi
cd "$VELHANET_CWD" || exit 126
if [ -n "${VELHANET_STDIN:-}" ]; then
    unset VELHANET_COPY VELHANET_SOURCE VELHANET_CWD VELHANET_STDIN
    exec 9<&0
    "$@" 3>&- 0<&9 9<&- &
else
    unset VELHANET_COPY VELHANET_SOURCE VELHANET_CWD
    "$@" 3>&- </dev/null &
fi
child=$!
wait "$child"
code=$?
left=0
for entry in /proc/[0-9]*; do
    [ "$entry" = /proc/1 ] && continue
    while read -r key value; do
        if [ "$key" = "PPid:" ]; then
            [ "$value" != 0 ] && left=$((left + 1))
            break
        fi
    done <"$entry/status" 2>/dev/null
done
echo "exit $code left $left" >&3
kill -KILL -1 2>/dev/null
exit "$code"
"""


@dataclass(frozen=True)
class Jail:
    """What one program sees and runs: the L{bwrapArgv} of it."""

    command: Sequence[str]
    """The program's argv (a shell command line is ``["/bin/sh", "-c", line]``)."""
    folder: Path | None = None
    """Its own folder: copied, private and writable, at the same path."""
    cwd: Path | None = None
    """Where it starts: its folder by default; else an empty directory at this path."""
    shared: Sequence[Path] = ()
    """Directories it shares read-write with velhanet (a FIFO directory)."""
    diskBytes: int = 256 * 1024 * 1024
    environment: dict[str, str] = field(default_factory=dict)
    """Variables set for it on top of the kept ones (``KEPT_ENVIRONMENT``)."""
    rlimits: Sequence[str] = ()
    """``prlimit`` options (``--data=N`` …) when no cgroup enforces the limits."""
    stdin: bool = False
    """Whether the program reads velhanet's pipe (a UCI engine); else its standard input is ``/dev/null``."""

    def workingDirectory(self) -> Path:
        return self.cwd or self.folder or Path("/tmp")


def pythonPaths() -> list[Path]:
    """The running Python and velhanet's own package (and plugins): what a ``python -m velhanet…`` imports."""
    package = Path(velhanet.__file__).resolve().parent
    paths = [Path(sys.base_prefix), Path(sys.prefix), package]
    plugins = package.parent / "twisted" / "plugins"  # an editable install's twistd plugins
    if (plugins / "velhanet_plugins.py").exists():
        paths.append(plugins)
    return sorted({path for path in paths if not _under(path, SYSTEM_DIRS)})


def _under(path: Path, roots: Sequence[str]) -> bool:
    return any(path == Path(root) or Path(root) in path.parents for root in roots)


def _systemArgs() -> list[str]:
    args: list[str] = []
    for directory in SYSTEM_DIRS:
        if os.path.isdir(directory):
            args += ["--ro-bind", directory, directory]
    for name in LINKABLE:
        if os.path.islink(name):
            args += ["--symlink", os.readlink(name), name]
        elif os.path.isdir(name):
            args += ["--ro-bind", name, name]
    for secret in SECRETS:
        if os.path.exists(secret):
            args += ["--ro-bind", "/dev/null", secret]
    for secret in SECRET_DIRS:
        if os.path.isdir(secret):
            args += ["--tmpfs", secret]
    return args


def programFolder(command: Sequence[str], cwd: Path) -> Path | None:
    """The folder of the first file a command names (its program, or the script its interpreter runs).

    ``python3 standins/hostile/snoop/player.py`` → ``standins/hostile/snoop``; ``./bot --port 1`` → ``.``;
    ``python3 -m velhanet.socha.example`` names no file: None (it needs no folder of its own).
    A file inside the system directories (``/usr/bin/python3``) is the interpreter, not the program.
    """
    for word in command:
        path = (cwd / word) if not os.path.isabs(word) else Path(word)
        if word.startswith("-") or not path.is_file():
            continue
        resolved = path.resolve()
        if _under(resolved, SYSTEM_DIRS) or _under(resolved, [str(p) for p in pythonPaths()]):
            continue
        return resolved.parent
    return None


def environmentOf(jail: Jail, hostEnvironment: dict[str, str]) -> dict[str, str]:
    """What the program's environment holds: a few kept variables, ``HOME`` its folder, ``python3`` velhanet's.

    The directory of the Python that runs velhanet comes first on ``PATH``, so a
    command saying ``python3`` finds the libraries velhanet's Python has, and
    velhanet's own package is on ``PYTHONPATH`` (a player may build on it).
    """
    kept = {name: hostEnvironment[name] for name in KEPT_ENVIRONMENT if name in hostEnvironment}
    path = kept.get("PATH", "/usr/local/bin:/usr/bin:/bin")
    kept["PATH"] = f"{os.path.dirname(sys.executable)}:{path}"
    package = str(Path(velhanet.__file__).resolve().parent.parent)
    kept["PYTHONPATH"] = ":".join(filter(None, [kept.get("PYTHONPATH"), package]))
    home = jail.folder or Path("/tmp")
    return {**kept, "HOME": str(home), "TMPDIR": "/tmp", **jail.environment}


def bwrapArgv(
    jail: Jail,
    *,
    bwrap: str = "bwrap",
    infoFd: int,
    blockFd: int,
    hostEnvironment: dict[str, str] | None = None,
) -> list[str]:
    """The whole ``bwrap`` command line; ``infoFd``/``blockFd`` are bwrap's own descriptors."""
    size = str(jail.diskBytes)
    args = [bwrap, "--die-with-parent", "--new-session", "--unshare-all", "--hostname", "sandbox"]
    args += ["--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID), "--cap-drop", "ALL"]
    args += ["--proc", "/proc", "--dev", "/dev", "--size", size, "--tmpfs", "/tmp"]
    args += _systemArgs()
    for path in pythonPaths():
        if path.exists():
            args += ["--ro-bind", str(path), str(path)]
    environment = environmentOf(jail, dict(os.environ) if hostEnvironment is None else hostEnvironment)
    cwd = jail.workingDirectory()
    if jail.folder is not None:
        args += ["--ro-bind", str(jail.folder), SOURCE, "--size", size, "--tmpfs", str(jail.folder)]
        environment.update(VELHANET_COPY=str(jail.folder), VELHANET_SOURCE=SOURCE)
    if cwd != jail.folder and cwd != Path("/tmp"):
        args += ["--dir", str(cwd)]
    for shared in jail.shared:
        args += ["--bind", str(shared), str(shared)]
    environment["VELHANET_CWD"] = str(cwd)
    if jail.stdin:
        environment["VELHANET_STDIN"] = "1"  # a background job's standard input is /dev/null unless redirected
    args.append("--clearenv")
    for name, value in sorted(environment.items()):
        args += ["--setenv", name, value]
    args += ["--remount-ro", "/"]  # the root and its skeleton directories: only the tmpfs mounts stay writable
    args += ["--info-fd", str(infoFd), "--block-fd", str(blockFd), "--as-pid-1"]
    command = list(jail.command)
    if jail.rlimits:
        command = ["prlimit", *jail.rlimits, "--", *command]
    return [*args, "--", "/bin/sh", "-c", SUPERVISOR, "velhanet-supervisor", *command]


def parseStatus(text: str) -> tuple[int | None, int, bool]:
    """The supervisor's last word: (the program's exit status, processes it left, the copy failed)."""
    words = text.split()
    if "copyfailed" in words:
        return None, 0, True
    if len(words) >= 4 and words[0] == "exit" and words[2] == "left":
        try:
            return int(words[1]), max(0, int(words[3])), False
        except ValueError:
            pass
    return None, 0, False
