"""``gobang-client``: play or watch a game on a Gobang FIFO server.

    gobang-client -b PID          # play black on server #PID
    gobang-client -w PID --bot    # the computer plays white
    gobang-client -k PID          # watch (kibitz)

Exit status: 0 after a finished game, 1 when the server cannot be reached,
3 when the game ended unexpectedly (opcode 3: a player left or the server
stopped).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
from collections.abc import Callable
from pathlib import Path

from twisted.internet.defer import Deferred
from twisted.internet.stdio import StandardIO

from velhanet.console import LineConsole
from velhanet.gobang import fifo
from velhanet.gobang.session import ANSWER_TIMEOUT, SERVER, GobangSession
from velhanet.gobang.wire import (
    SERVER_WORD,
    ByteOrder,
    ClientOp,
    ClientWord,
    Refused,
    ServerWord,
    WordReader,
    byteOrder,
    decodeServer,
    encodeClient,
)
from velhanet.startup import ArgumentParser
from velhanet.tracing import IN, OUT, Tracer, arrow, noTrace


def parseArguments(argv: list[str]) -> argparse.Namespace:
    parser = ArgumentParser(prog="gobang-client", description="Play or watch Gobang on a FIFO server.")
    role = parser.add_mutually_exclusive_group(required=True)
    role.add_argument("-b", dest="black", type=int, metavar="PID", help="play black on server PID")
    role.add_argument("-w", dest="white", type=int, metavar="PID", help="play white on server PID")
    role.add_argument("-k", dest="kibitz", type=int, metavar="PID", help="watch a game on server PID")
    parser.add_argument(
        "--game-number",
        type=int,
        default=0,
        help="with -k: the game to watch, as the server numbers them; 0 is the oldest (default: %(default)s)",
    )
    parser.add_argument(
        "--fifo-dir", default="/tmp", help="directory of the FIFOs, the server's too (default: %(default)s)"
    )
    parser.add_argument(
        "--byte-order",
        default="native",
        choices=("native", "big", "little"),
        help="byte order of the words, as the server's --byte-order (default: %(default)s)",
    )
    parser.add_argument("--bot", action="store_true", help="the computer plays")
    parser.add_argument(
        "--bot-delay", type=float, default=0.2, help="with --bot: seconds before each move (default: %(default)s)"
    )
    parser.add_argument(
        "--seed", type=int, default=None, help="with --bot: seed for its choices, to replay a game (default: random)"
    )
    parser.add_argument("--trace", action="store_true", help="print every word in and out, raw and decoded")
    return parser.parse_args(argv)


def run(reactor: object, arguments: argparse.Namespace) -> Deferred[None]:
    done: Deferred[None] = Deferred()
    out = sys.stdout

    def say(text: str) -> None:
        out.write(text + "\n")
        out.flush()

    if arguments.black is not None:
        role, serverPid = ClientOp.SIGNON_BLACK, arguments.black
        say("Playing the black stones.")
    elif arguments.white is not None:
        role, serverPid = ClientOp.SIGNON_WHITE, arguments.white
        say("Playing the white stones.")
    else:
        role, serverPid = ClientOp.SIGNON_KIBITZ, arguments.kibitz
        say("Watching a game.")
    order: ByteOrder = byteOrder(arguments.byte_order)
    directory = Path(arguments.fifo_dir)
    ownPid = os.getpid()
    ownPath = fifo.fifoPath(directory, "gbc", ownPid)
    say(f"Trying to contact server #{serverPid} ...")

    cleanup: list[Callable[[], None]] = []

    def finish(code: int) -> None:
        for step in reversed(cleanup):
            step()
        cleanup.clear()
        if not done.called:
            if code:
                done.errback(SystemExit(code))
            else:
                done.callback(None)

    try:
        fifo.createFifo(ownPath)
        cleanup.append(lambda: fifo.removeFifo(ownPath))
        readFd = fifo.openForReading(ownPath)
        serverFd = fifo.openForWriting(fifo.fifoPath(directory, "gbs", serverPid))
    except (Refused, OSError) as error:
        reason = f"the FIFO directory {directory} does not exist" if not directory.is_dir() else error
        say(f"Cannot contact server #{serverPid}: {reason}")
        finish(1)
        return done

    def serverGone() -> None:
        say(f"The server is gone: server #{serverPid} no longer reads its FIFO.")
        finish(1)

    # Many clients share the server FIFO, and one of them may keep it full: a
    # word that does not fit now waits (buffered, written when the pipe has
    # room), as a blocking write in a C client would. Only a server that has
    # closed its FIFO (EPIPE) is gone.
    writer = fifo.FifoWriter(serverFd, serverGone, reactor=reactor)  # type: ignore[arg-type]
    cleanup.append(writer.discard)

    def consoleTrace(direction: str, peer: str, raw: bytes | str, decoded: object) -> None:
        """``--trace``: each word in and out, in hex and decoded, on the screen."""
        assert isinstance(raw, bytes) and isinstance(decoded, (ClientWord, ServerWord))
        say(f"[{arrow(direction)} {raw.hex(' ')}] {decoded.describe()}")

    trace: Tracer = consoleTrace if arguments.trace else noTrace

    def sendWord(opcode: int, x: int, y: int) -> None:
        word = ClientWord(ownPid & 0xFFFF, opcode, x, y)
        raw = encodeClient(word, order)
        trace(OUT, SERVER, raw, word)
        writer.writeNow(raw)

    def noAnswer() -> None:
        say(f"No answer from server #{serverPid}.")
        finish(1)

    timeout = reactor.callLater(ANSWER_TIMEOUT, noAnswer)  # type: ignore[attr-defined]

    def firstAnswer() -> None:
        if timeout.active():
            timeout.cancel()
        fifo.removeFifo(ownPath)  # the text: remove the name once the server has answered

    session = GobangSession(
        role,
        sendWord,
        say,
        finish,
        clock=reactor,  # type: ignore[arg-type]
        bot=random.Random(arguments.seed) if arguments.bot else None,
        botDelay=arguments.bot_delay,
        onFirstAnswer=firstAnswer,
    )
    words = WordReader(SERVER_WORD)

    def dataReceived(data: bytes) -> None:
        for raw in words.feed(data):
            word = decodeServer(raw, order)
            trace(IN, SERVER, raw, word)
            session.received(word)
        session.endOfRead()

    reader = fifo.FifoReader(readFd, dataReceived, reactor=reactor)  # type: ignore[arg-type]
    reader.startReading()
    cleanup.append(lambda: (reader.stopReading(), reader.connectionLost(None)))  # type: ignore[arg-type,func-returns-value]
    sendWord(role, arguments.game_number if role == ClientOp.SIGNON_KIBITZ else 0, 0)
    # A kibitzer only reads the terminal when there is one (so it can watch in
    # the background); a player without --bot always does.
    if not arguments.bot and (role != ClientOp.SIGNON_KIBITZ or sys.stdin.isatty()):
        StandardIO(LineConsole(session.command, session.signoff), reactor=reactor)
    reactor.addSystemEventTrigger("before", "shutdown", session.signoff)  # type: ignore[attr-defined]
    return done


def main(argv: list[str] | None = None) -> None:
    from twisted.internet.task import react

    arguments = parseArguments(sys.argv[1:] if argv is None else argv)
    react(run, (arguments,))
