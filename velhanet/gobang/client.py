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
from typing import TextIO

from twisted.internet.defer import Deferred
from twisted.internet.error import ConnectionDone
from twisted.internet.interfaces import IDelayedCall, IReactorCore, IReactorFDSet, IReactorTime
from twisted.internet.stdio import StandardIO
from twisted.python.failure import Failure

from velhanet.console import LineConsole
from velhanet.gobang import fifo, fifotransport
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
from velhanet.i18n import N_, _
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


ROLES = {
    "black": (ClientOp.SIGNON_BLACK, N_("Playing the black stones.")),
    "white": (ClientOp.SIGNON_WHITE, N_("Playing the white stones.")),
    "kibitz": (ClientOp.SIGNON_KIBITZ, N_("Watching a game.")),
}


def roleOf(arguments: argparse.Namespace) -> tuple[int, int, str]:
    """The signon opcode, the server's pid and what to say, from ``-b``, ``-w`` or ``-k``."""
    for option, (role, text) in ROLES.items():
        pid = getattr(arguments, option)
        if pid is not None:
            return role, pid, text
    raise ValueError("one of -b, -w or -k is required")  # argparse's group makes sure of it


class GobangClient:
    """One run of ``gobang-client``: our FIFO, the server's, the screen, and the session between them.

    ``done`` fires (or fails with L{SystemExit} and the exit status) once the
    session has finished and everything opened has been closed again.
    """

    def __init__(self, reactor: object, arguments: argparse.Namespace, out: TextIO = sys.stdout) -> None:
        self.reactor, self.arguments, self.out = reactor, arguments, out
        self.clock = IReactorTime(reactor)
        self.fds = IReactorFDSet(reactor)
        self.role, self.serverPid, self.roleText = roleOf(arguments)
        self.order: ByteOrder = byteOrder(arguments.byte_order)
        self.directory = Path(arguments.fifo_dir)
        self.ownPid = os.getpid()
        self.ownPath = fifo.fifoPath(self.directory, "gbc", self.ownPid)
        self.trace: Tracer = self.consoleTrace if arguments.trace else noTrace
        self.done: Deferred[None] = Deferred()
        self.cleanup: list[Callable[[], None]] = []
        """What to close when the session finishes, closed last first."""
        self.words = WordReader(SERVER_WORD)
        self.writer: fifotransport.FifoWriter | None = None
        self.answerTimeout: IDelayedCall | None = None
        self.session = GobangSession(
            self.role,
            self.sendWord,
            self.say,
            self.finish,
            clock=self.clock,
            bot=random.Random(arguments.seed) if arguments.bot else None,
            botDelay=arguments.bot_delay,
            onFirstAnswer=self.firstAnswer,
        )

    def say(self, text: str) -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def start(self) -> Deferred[None]:
        self.say(_(self.roleText))
        self.say(_("Trying to contact server #{pid} ...").format(pid=self.serverPid))
        try:
            fifo.createFifo(self.ownPath)
            self.cleanup.append(lambda: fifo.removeFifo(self.ownPath))
            readFd = fifo.openForReading(self.ownPath)
            serverFd = fifo.openForWriting(fifo.fifoPath(self.directory, "gbs", self.serverPid))
        except (Refused, OSError) as error:
            reason = (
                str(error)
                if self.directory.is_dir()
                else _("the FIFO directory {directory} does not exist").format(directory=self.directory)
            )
            self.say(_("Cannot contact server #{pid}: {reason}").format(pid=self.serverPid, reason=reason))
            self.finish(1)
            return self.done
        # Many clients share the server FIFO, and one of them may keep it full: a
        # word that does not fit now waits (buffered, written when the pipe has
        # room), as a blocking write in a C client would. Only a server that has
        # closed its FIFO (EPIPE) is gone.
        self.writer = fifotransport.FifoWriter(serverFd, self.serverGone, reactor=self.fds)
        self.cleanup.append(self.writer.discard)
        self.answerTimeout = self.clock.callLater(ANSWER_TIMEOUT, self.noAnswer)
        self.cleanup.append(self.stopWaitingForAnAnswer)
        reader = fifotransport.FifoReader(readFd, self.dataReceived, reactor=self.fds)
        reader.startReading()
        self.cleanup.append(lambda: self.closeReader(reader))
        self.sendWord(self.role, self.arguments.game_number if self.role == ClientOp.SIGNON_KIBITZ else 0, 0)
        # A kibitzer only reads the terminal when there is one (so it can watch in
        # the background); a player without --bot always does.
        if not self.arguments.bot and (self.role != ClientOp.SIGNON_KIBITZ or sys.stdin.isatty()):
            StandardIO(LineConsole(self.session.command, self.session.signoff), reactor=self.fds)
        IReactorCore(self.reactor).addSystemEventTrigger("before", "shutdown", self.session.signoff)
        return self.done

    def finish(self, code: int) -> None:
        while self.cleanup:
            self.cleanup.pop()()
        if self.done.called:
            return
        if code:
            self.done.errback(SystemExit(code))
        else:
            self.done.callback(None)

    def sendWord(self, opcode: int, x: int, y: int) -> None:
        assert self.writer is not None, "no word goes out before the server's FIFO is open"
        word = ClientWord(self.ownPid & 0xFFFF, opcode, x, y)
        raw = encodeClient(word, self.order)
        self.trace(OUT, SERVER, raw, word)
        self.writer.writeNow(raw)

    def dataReceived(self, data: bytes) -> None:
        for raw in self.words.feed(data):
            word = decodeServer(raw, self.order)
            self.trace(IN, SERVER, raw, word)
            self.session.received(word)
        self.session.endOfRead()

    def consoleTrace(self, direction: str, peer: str, raw: bytes | str, decoded: object) -> None:
        """``--trace``: each word in and out, in hex and decoded, on the screen."""
        assert isinstance(raw, bytes) and isinstance(decoded, (ClientWord, ServerWord))
        self.say(f"[{arrow(direction)} {raw.hex(' ')}] {decoded.describe()}")

    def firstAnswer(self) -> None:
        self.stopWaitingForAnAnswer()
        fifo.removeFifo(self.ownPath)  # the text: remove the name once the server has answered

    def stopWaitingForAnAnswer(self) -> None:
        if self.answerTimeout is not None and self.answerTimeout.active():
            self.answerTimeout.cancel()
        self.answerTimeout = None

    def noAnswer(self) -> None:
        self.answerTimeout = None
        self.say(_("No answer from server #{pid}.").format(pid=self.serverPid))
        self.finish(1)

    def serverGone(self) -> None:
        self.say(_("The server is gone: server #{pid} no longer reads its FIFO.").format(pid=self.serverPid))
        self.finish(1)

    @staticmethod
    def closeReader(reader: fifotransport.FifoReader) -> None:
        reader.stopReading()
        reader.connectionLost(Failure(ConnectionDone("gobang-client ends")))


def run(reactor: object, arguments: argparse.Namespace) -> Deferred[None]:
    return GobangClient(reactor, arguments).start()


def main(argv: list[str] | None = None) -> None:
    from twisted.internet.task import react

    arguments = parseArguments(sys.argv[1:] if argv is None else argv)
    react(run, (arguments,))
