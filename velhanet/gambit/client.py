"""``gambit-client``: play chess on a Gambit server from the terminal, or let a bot play.

    gambit-client --user alice                 # create a game, print its id
    gambit-client --user bob --game e215       # join it
    gambit-client --user carol --bot           # the computer plays
    gambit-client --user dave --engine /usr/games/stockfish --skill 5   # a UCI engine plays

Works with velhanet's server and with the original Go server: moves go out
as ``<gameid>:<uci>`` like the original client's, one message at a time;
incoming moves are accepted as ``id:uci``, UCI, SAN or FEN. Moves are
checked locally (python-chess) before they are sent.

With ``--engine PATH`` (which implies ``--bot``) a UCI engine chooses the
bot's moves (``engine.py``): it is started in the sandbox before the client
connects, and stopped when the client ends.
"""

from __future__ import annotations

import argparse
import getpass
import random
import sys
from collections.abc import Callable
from typing import Any

from twisted.internet.defer import Deferred, ensureDeferred
from twisted.internet.endpoints import TCP4ClientEndpoint
from twisted.internet.interfaces import IReactorTime
from twisted.internet.protocol import Factory, Protocol
from twisted.internet.stdio import StandardIO
from twisted.python.failure import Failure

from velhanet.console import LineConsole
from velhanet.gambit.engine import Engine, EngineFailure
from velhanet.gambit.movesource import Bot, EnginePlayer
from velhanet.gambit.session import ClientSession
from velhanet.gambit.wire import JsonStreamDecoder, MalformedMessage, Message, encode
from velhanet.i18n import _
from velhanet.sandbox import Sandbox, SandboxUnavailable, addSandboxArguments, settingsFrom
from velhanet.sandbox.userns import enterUserNamespace
from velhanet.sendnow import noDelay
from velhanet.startup import ArgumentParser
from velhanet.tracing import IN, OUT, Tracer, arrow, noTrace

DEFAULT_HOST = "localhost"
DEFAULT_PORT = 22022
SERVER = "server"
"""The peer a client traces: it has only one."""
DEFAULT_MOVETIME = 100
"""Milliseconds an engine thinks per move when ``--movetime`` is not given."""


def consoleTracer(say: Callable[[str], None]) -> Tracer:
    """``--trace``: each message in and out, raw and decoded, on the screen between brackets."""

    def trace(direction: str, peer: str, raw: bytes | str, decoded: object) -> None:
        text = raw.decode().rstrip() if isinstance(raw, bytes) else raw
        described = decoded.describe() if isinstance(decoded, Message) else decoded
        say(f"[{arrow(direction)} {text}]  {described}")

    return trace


class GambitClientProtocol(Protocol):
    """Bytes in and out for one session; sends one message at a time."""

    def __init__(
        self, session: ClientSession, trace: Tracer = noTrace, onClosed: Callable[[], None] = lambda: None
    ) -> None:
        self.session = session
        self.trace = trace
        self.onClosed = onClosed
        self.decoder = JsonStreamDecoder()

    def connectionMade(self) -> None:
        noDelay(self.transport)
        self.session.connected()

    def send(self, message: Message) -> None:
        raw = encode(message)
        self.trace(OUT, SERVER, raw, message)
        assert self.transport is not None
        self.transport.write(raw)

    def dataReceived(self, data: bytes) -> None:
        for raw, item in self.decoder.feed(data):
            self.trace(IN, SERVER, raw, item)
            if isinstance(item, MalformedMessage):
                self.session.say(_("The server sent something unreadable: {reason}").format(reason=item))
                continue
            self.session.received(item)

    def connectionLost(self, reason: Failure = Failure(ConnectionError("closed"))) -> None:  # noqa: B008
        self.session.connectionLost(reason.getErrorMessage())
        self.onClosed()


def parseArguments(argv: list[str]) -> argparse.Namespace:
    parser = ArgumentParser(
        prog="gambit-client",
        description="Play chess on a Gambit server (velhanet's or the original Go one). "
        "Moves are typed in SAN or UCI; with standard input from a file or a pipe, each line is played "
        "when it is your turn.",
    )
    parser.add_argument("--user", "-u", default=None, help="your name (default: your login name)")
    parser.add_argument("--game", "-g", default=None, help="join this game id (default: create a game)")
    parser.add_argument("--host", default=DEFAULT_HOST, help="server host (default: %(default)s)")
    parser.add_argument("--port", "-p", type=int, default=DEFAULT_PORT, help="server port (default: %(default)s)")
    parser.add_argument("--bot", action="store_true", help="the computer plays")
    parser.add_argument(
        "--bot-delay", type=float, default=0.5, help="with --bot: seconds before each move (default: %(default)s)"
    )
    parser.add_argument(
        "--seed", type=int, default=None, help="with --bot: seed for its choices, to replay a game (default: random)"
    )
    parser.add_argument(
        "--pgn", metavar="FILE", default=None, help="add the finished game to this PGN file (default: none)"
    )
    parser.add_argument("--trace", action="store_true", help="show every message in and out, raw and decoded")
    engine = parser.add_argument_group(
        "engine", "a UCI engine (Stockfish: apt-get install stockfish) plays instead of the built-in bot"
    )
    engine.add_argument(
        "--engine",
        metavar="PATH",
        default=None,
        help="the engine's program; implies --bot (default: the built-in bot, which is not strong)",
    )
    engine.add_argument(
        "--skill",
        type=skillLevel,
        default=None,
        metavar="N",
        help="with --engine: its 'Skill Level', 0 (weakest) to 20 (full strength), as Stockfish has it; an "
        "engine without that option plays at its own strength (default: the engine's own)",
    )
    engine.add_argument(
        "--movetime",
        type=milliseconds,
        default=None,
        metavar="MS",
        help=f"with --engine: milliseconds it thinks per move (default: {DEFAULT_MOVETIME})",
    )
    addSandboxArguments(parser)
    arguments = parser.parse_args(argv)
    if arguments.engine is None and (arguments.skill is not None or arguments.movetime is not None):
        parser.error(_("--skill and --movetime are options of --engine"))
    if arguments.engine is not None:
        arguments.bot = True
    if arguments.movetime is None:
        arguments.movetime = DEFAULT_MOVETIME
    try:
        arguments.sandboxSettings = settingsFrom(arguments)
    except ValueError as error:
        parser.error(str(error))
    if arguments.user is None:
        arguments.user = getpass.getuser()
    return arguments


def skillLevel(text: str) -> int:
    if not text.isdigit() or not 0 <= int(text) <= 20:
        raise argparse.ArgumentTypeError(_("{text!r} is not a skill level from 0 to 20").format(text=text))
    return int(text)


def milliseconds(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(_("{text!r} is not a number of milliseconds (at least 1)").format(text=text))
    return int(text)


def serverOptions(arguments: argparse.Namespace) -> str:
    """``--host``/``--port`` as an opponent must give them to reach the same server."""
    options = ""
    if arguments.host != DEFAULT_HOST:
        options += f" --host {arguments.host}"
    if arguments.port != DEFAULT_PORT:
        options += f" --port {arguments.port}"
    return options


def pgnKeeper(path: str, say: Callable[[str], None]) -> Callable[[str], None]:
    """Append each finished game to the PGN file ``path`` (a file of many games, as PGN allows)."""

    def keep(text: str) -> None:
        try:
            with open(path, "a", encoding="utf-8") as file:
                file.write(text + "\n")
        except OSError as error:
            say(_("Cannot write the game to {path}: {error}").format(path=path, error=error.strerror or error))
        else:
            say(_("The game is in {path}").format(path=path))

    return keep


def run(reactor: object, arguments: argparse.Namespace, sandbox: Sandbox | None = None) -> Deferred[None]:
    """The client's whole life: with ``--engine``, the engine first (in ``sandbox``), then the game, then its end."""
    if arguments.engine is None:
        return play(reactor, arguments, random.Random(arguments.seed) if arguments.bot else None)
    return ensureDeferred(playWithEngine(reactor, arguments, sandbox))


def complain(line: str) -> None:
    print(f"gambit-client: {line}", file=sys.stderr, flush=True)


def engineSandbox(arguments: argparse.Namespace) -> Sandbox:
    """The sandbox the engine runs in (``--sandbox``), or SystemExit(1) with its one line."""
    try:
        return Sandbox.forCommand(arguments.sandboxSettings, say=complain)
    except SandboxUnavailable as error:
        complain(str(error))
        raise SystemExit(1) from None


async def playWithEngine(reactor: Any, arguments: argparse.Namespace, sandbox: Sandbox | None) -> None:
    """Start the engine before connecting: one line and exit status 1 if it cannot; stop it however the game ends."""
    try:
        sandbox = sandbox or engineSandbox(arguments)
        engine = await Engine.start(reactor, sandbox, [arguments.engine], skill=arguments.skill)
    except EngineFailure as failure:
        complain(str(failure))
        raise SystemExit(1) from None
    for note in engine.notes:
        complain(note)
    shuttingDown: list[bool] = []

    def stopEngine() -> Deferred[None]:
        shuttingDown.append(True)
        return engine.quit()

    trigger = reactor.addSystemEventTrigger("before", "shutdown", stopEngine)  # ^C: it stops too
    try:
        await play(reactor, arguments, EnginePlayer(engine, arguments.movetime / 1000))
    finally:
        if not shuttingDown:  # a trigger that ran is no longer there to remove
            reactor.removeSystemEventTrigger(trigger)
        await engine.quit()
    if engine.failure is not None:
        raise SystemExit(1)  # the bot resigned because of it: said in the game


def play(reactor: object, arguments: argparse.Namespace, bot: Bot | None) -> Deferred[None]:
    """Connect and play one game (the bot's moves from ``bot``); fires when the connection is gone."""
    done: Deferred[None] = Deferred()
    out = sys.stdout
    exitCode: list[int] = []
    protocolHolder: list[GambitClientProtocol] = []

    def say(text: str) -> None:
        out.write(text + "\n")
        out.flush()

    def closed() -> None:
        """The connection is gone: now the process may end, with the code finish() chose."""
        if not done.called:
            code = exitCode[0] if exitCode else 0
            if code:
                done.errback(SystemExit(code))
            else:
                done.callback(None)

    def finish(code: int) -> None:
        """End the session: close the connection cleanly first, so that what we sent is delivered."""
        if exitCode:
            return
        exitCode.append(code)
        transport = protocolHolder[0].transport if protocolHolder else None
        if transport is None:
            closed()
        else:
            transport.loseConnection()

    session = ClientSession(
        arguments.user,
        arguments.game,
        send=lambda message: protocolHolder[0].send(message),
        say=say,
        finish=finish,
        clock=IReactorTime(reactor),
        bot=bot,
        botDelay=arguments.bot_delay,
        serverOptions=serverOptions(arguments),
        keepPgn=pgnKeeper(arguments.pgn, say) if arguments.pgn else None,
        site=f"{arguments.host}:{arguments.port}",
    )
    endpoint = TCP4ClientEndpoint(reactor, arguments.host, arguments.port, timeout=10)

    def connected(protocol: GambitClientProtocol) -> None:
        if arguments.bot:
            return
        if sys.stdin.isatty():
            StandardIO(LineConsole(session.command, lambda: session.command("quit")), reactor=reactor)
        else:
            StandardIO(LineConsole(session.scriptedLine, session.scriptEnded), reactor=reactor)

    def failed(failure: Failure) -> None:
        cannot = _("Cannot reach the Gambit server at {host}:{port}: {reason}")
        say(cannot.format(host=arguments.host, port=arguments.port, reason=failure.getErrorMessage()))
        exitCode.append(2)
        closed()

    def build() -> GambitClientProtocol:
        protocol = GambitClientProtocol(session, consoleTracer(say) if arguments.trace else noTrace, onClosed=closed)
        protocolHolder.append(protocol)
        return protocol

    endpoint.connect(Factory.forProtocol(build)).addCallbacks(connected, failed)
    return done


def main(argv: list[str] | None = None) -> None:
    from twisted.internet.task import react

    arguments = parseArguments(sys.argv[1:] if argv is None else argv)
    sandbox = None
    if arguments.engine is not None:
        if arguments.sandbox != "off":
            enterUserNamespace()  # before the reactor starts a thread: an ordinary user's sandboxes need it
        sandbox = engineSandbox(arguments)
    react(run, (arguments, sandbox))
