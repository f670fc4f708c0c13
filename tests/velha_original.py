"""A scripted stand-in for the original Java JogoVelha program on the in-memory LAN.

It reproduces, on the wire and in time, what tiowillians/JogoVelhaSocket
(``TabuleiroFrame.java`` and its listener threads) does, bugs included, as
read from its source and seen against the real program under Xvfb:

- the UDP listener thread shows the invitation dialog itself, so while a
  person decides, every further datagram waits; each MSG04 it reads when not
  playing opens a new dialog, and each "yes" opens a new TCP port, sends
  MSG05 and re-arms its two "waiting" flags; a busy MSG04 is refused with the
  *inviter's* nick; MSG06 and the accepted connection each clear one flag and
  MSG07 goes out when both are clear (a connection that comes before the
  flags are set after a MSG05 starts the match early, and its one 30 s timer
  then ends it on its side only);
- as inviter it sets "waiting for an answer" only after MSG04 is out, sends
  MSG06 and connects in the same instant, ignores MSG07 ``1``, and — once it
  has been invitee (a flag never reset) — sends a MSG07 of its own;
- ``inicieiUltimoJogo``: after any decided game both sides send MSG09 and
  the winner moves first; after a draw only a side that believes it did not
  start sends MSG09, and that belief is stale after the first decided game,
  so in practice nobody sends MSG09 after a draw and the drawn game's starter
  moves again if the last move was its own;
- remote moves are applied whenever the cell is free (no turn check); the
  result dialog of a game the remote ended blocks that connection's reader
  until someone clicks OK; the series never stops at 3 wins, and after game 5
  the connection is left open; it never sends MSG10;
- its listener is bound to its unicast address (``lan.deaf``): it hears no
  broadcast, but answers a unicast MSG01 with MSG02;
- its TCP reader thread adds every message it reads to a Swing table while
  its UI thread may be opening a result dialog over that table: two threads
  on one unsynchronised Swing structure. Seen for real: velhanet's MSG09,
  read at the instant the dialog of a game the original ended opened, and
  the UI thread failing with a NullPointerException in its painting; and
  once a series in which the original read nothing more from game 5 on.
  ``fragileReaderAtGame`` makes that race happen on purpose: a message that
  arrives while the result dialog before that game is open kills the reader,
  which then reads nothing more (the UI thread still plays its own moves).

Time is the LAN's ``task.Clock``; a "person" answers dialogs after
``clickDelay`` seconds with ``answer`` and plays with ``strategy`` after
``moveDelay``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from twisted.internet.interfaces import IAddress, IDelayedCall
from twisted.internet.protocol import ClientFactory, Protocol, ServerFactory
from twisted.protocols.basic import LineOnlyReceiver
from twisted.python.failure import Failure

from velhanet.bots.tictactoe import PerfectBot
from velhanet.games.kinarow import TICTACTOE, KInARowState
from velhanet.velha.room import placeToPosition, positionToPlace

from .velha_harness import FakeLan

LOCAL, REMOTE = 1, 2
EMPTY = 0
LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))


class _Connection(LineOnlyReceiver):
    """ConexaoTCP: readLine over the socket; a modal dialog can block this reader."""

    delimiter = b"\n"

    def __init__(self, program: OriginalProgram) -> None:
        self.program = program
        self.blocked: list[bytes] = []
        self.isBlocked = False
        self.dead = False
        """The reader thread died (see ``OriginalProgram.fragileReaderAtGame``): nothing more is read."""

    def connectionMade(self) -> None:
        self.program.connections.append(self)

    def lineReceived(self, line: bytes) -> None:
        program = self.program
        program.arrived.append(line.decode("latin-1"))
        if self.dead:
            return
        if program.resultDialogOpen and program.gameNumber + 1 == program.fragileReaderAtGame:
            self.dead = True
            program.events.append(f"reader died on {line.decode('latin-1')} under the result dialog")
            return
        if self.isBlocked:
            self.blocked.append(line)
            return
        self.program.tcpLine(self, line.decode("latin-1"))

    def unblock(self) -> None:
        self.isBlocked = False
        while self.blocked and not self.isBlocked:
            self.program.tcpLine(self, self.blocked.pop(0).decode("latin-1"))

    def sendMessage(self, number: int, body: str = "") -> None:
        assert self.transport is not None
        self.transport.write(f"{number:02d}{5 + len(body):03d}{body}\n".encode("latin-1"))

    def connectionLost(self, reason: Failure = Failure(ConnectionError("closed"))) -> None:  # noqa: B008
        if self in self.program.connections:
            self.program.connections.remove(self)
        self.program.connectionClosed(self)


class _Acceptor(ServerFactory):
    """EscutaTCP: accepts one connection from the invited peer's address, then stops accepting."""

    def __init__(self, program: OriginalProgram, remote: str) -> None:
        self.program, self.remote = program, remote
        self.done = False

    def buildProtocol(self, addr: IAddress | None) -> Protocol | None:
        if self.done or getattr(addr, "host", None) != self.remote:
            return None
        self.done = True
        connection = _Connection(self.program)
        self.program.clock.callLater(0, self.program.remoteConnected, connection)
        return connection


class _Dialer(ClientFactory):
    def __init__(self, program: OriginalProgram) -> None:
        self.program = program

    def buildProtocol(self, addr: IAddress | None) -> Protocol:
        connection = _Connection(self.program)
        self.program.connection = connection
        return connection


@dataclass
class OriginalProgram:
    """One original program on the LAN; ``events`` records what its user would see."""

    lan: FakeLan
    nick: str
    host: str
    clickDelay: float = 0.2
    answer: bool = True
    moveDelay: float = 0.2
    strategy: str = "first"
    """"first": the first free cell (the test driver's ``auto on``); "perfect": never loses."""
    flagLag: float = 0.0
    """Seconds between sending MSG04/MSG05 and setting its waiting flags (a freshly started JVM)."""
    autoPlay: bool = True
    msg07: int = 2
    """What it sends in MSG07 (random in the original): 1 it starts, 2 the inviter starts."""
    fragileReaderAtGame: int | None = None
    """A message arriving while the result dialog of the game before this one is open kills its reader."""
    events: list[str] = field(default_factory=list)
    sent: list[str] = field(default_factory=list)
    arrived: list[str] = field(default_factory=list)
    """Every TCP line that reached it, read or not."""

    def __post_init__(self) -> None:
        self.clock = self.lan.clock
        self.network = self.lan.network(self.host)
        self.lan.peers[self.host] = self
        self.lan.deaf.add(self.host)
        self.udpQueue: list[tuple[bytes, str]] = []
        self.udpBusyUntil = 0.0
        self.udpBusy = False
        self.playing = False  # estaJogando
        self.myTurn = False  # minhaVez
        self.startedLast = False  # inicieiUltimoJogo
        self.wasInvited = False  # fuiConvidado: never reset
        self.waitingConnection = self.waitingConfirmation = False
        self.waitingAnswer = False  # esperandoRespostaConvite
        self.remoteAddress: str | None = None
        self.remoteNick: str | None = None
        self.connection: _Connection | None = None  # conexaoTCP
        self.connections: list[_Connection] = []
        self.listeners: list[object] = []
        self.timer: IDelayedCall | None = None  # timeoutAguardandoJogadorRemoto (30 s, no restart)
        self.gameNumber = 0
        self.board = [EMPTY] * 9
        self.results: list[str] = []
        self.bot = PerfectBot(7)
        self.pendingMove: IDelayedCall | None = None
        self.dialogs = 0
        self.resultDialogOpen = False
        """Its own move ended a game: the modal result dialog is up on its UI thread."""
        self.lostMoves: list[int] = []

    # -- UDP -----------------------------------------------------------------------

    def sendUdp(self, address: str, number: int, body: str) -> None:
        text = f"{number:02d}{5 + len(body):03d}{body}"
        self.sent.append(text)
        self.lan.sendFrom(self.host, text.encode(), address)

    def datagramReceived(self, data: bytes, host: str) -> None:
        self.udpQueue.append((data, host))
        if not self.udpBusy:
            self._drainUdp()

    def _drainUdp(self) -> None:
        while self.udpQueue and not self.udpBusy:
            data, host = self.udpQueue.pop(0)
            self._datagram(data.decode().strip(), host)

    def _resumeUdp(self) -> None:
        self.udpBusy = False
        self._drainUdp()

    def _datagram(self, text: str, host: str) -> None:
        if len(text) < 5 or int(text[2:5]) != len(text) or host == self.host:
            return
        number, body = int(text[:2]), text[5:]
        if number in (1, 2):
            if number == 1:
                self.sendUdp(host, 2, self.nick)
        elif number == 3:
            if self.playing and self.remoteNick is not None and body.lower() == self.remoteNick.lower():
                self.endSeries("Jogador remoto desistiu do jogo.")
        elif number == 4:
            self._invited(body, host)
        elif number == 5:
            self._answered(body, host)
        elif number == 6 and host == self.remoteAddress:
            self.waitingConfirmation = False
            self._startSeries()

    def _invited(self, nick: str, host: str) -> None:
        """jogadorMeConvidou, run on the UDP thread: a modal dialog blocks it."""
        if self.playing:
            self.events.append(f"refused {nick} automatically")
            self.sendUdp(host, 5, f"{nick}|0")
            return
        self.wasInvited = True
        self.remoteAddress = None
        self.dialogs += 1
        self.events.append(f"dialog: {nick} invites")
        self.udpBusy = True
        self.clock.callLater(self.clickDelay, self._inviteAnswered, nick, host)

    def _inviteAnswered(self, nick: str, host: str) -> None:
        if not self.answer:
            self.sendUdp(host, 5, f"{self.nick}|0")
            self._resumeUdp()
            return
        acceptor = _Acceptor(self, host)
        port = self.network.listen(acceptor)
        self.listeners.append(port)
        self.remoteAddress, self.remoteNick = host, nick
        self.sendUdp(host, 5, f"{self.nick}|{port.portNumber}")
        self.clock.callLater(self.flagLag, self._armInvitee) if self.flagLag else self._armInvitee()

    def _armInvitee(self) -> None:
        self.waitingConnection = self.waitingConfirmation = True
        self._startTimer()
        self._resumeUdp()

    def _startTimer(self) -> None:
        if self.timer is None or not self.timer.active():
            self.timer = self.clock.callLater(30, self._timeout)

    def _timeout(self) -> None:
        if self.waitingAnswer:
            self.waitingAnswer = False
            self.events.append(f"Timeout: {self.remoteNick} não respondeu convite.")
        else:
            self.endSeries("TIMEOUT: aguardando conexão remota.")

    def remoteConnected(self, connection: _Connection) -> None:
        """jogadorRemotoConectou (EscutaTCP thread)."""
        self.waitingConnection = False
        self.connection = connection
        self._startSeries()

    def _startSeries(self) -> None:
        """iniciarSerieJogos: only once neither flag is set."""
        if self.waitingConnection or self.waitingConfirmation:
            return
        if self.timer is not None and self.timer.active():
            self.timer.cancel()
        if self.wasInvited and self.connection is not None:
            who = self.msg07
            self.myTurn = self.startedLast = who == LOCAL
            self.connection.sendMessage(7, str(who))
            self.sent.append(f"07006{who}")
        self.playing = True
        self.gameNumber = 1
        self.results = []
        self.board = [EMPTY] * 9
        self.events.append(f"series starts, my turn: {self.myTurn}")
        self._maybePlay()

    # -- as inviter --------------------------------------------------------------------

    def invite(self, nick: str, address: str) -> None:
        self.remoteNick, self.remoteAddress = nick, address
        self.sendUdp(address, 4, self.nick)
        self.clock.callLater(self.flagLag, self._armInviter) if self.flagLag else self._armInviter()

    def _armInviter(self) -> None:
        self.waitingAnswer = True
        self._startTimer()

    def _answered(self, body: str, host: str) -> None:
        """respostaConvite."""
        nick, _, port = body.partition("|")
        if not self.waitingAnswer or host != self.remoteAddress or (self.remoteNick or "").lower() != nick.lower():
            return
        self.waitingAnswer = False
        if self.timer is not None and self.timer.active():
            self.timer.cancel()
        if int(port) == 0:
            self.events.append(f"{self.remoteNick} recusou o convite.")
            return
        self.sendUdp(host, 6, "Ok")
        self.network.connect(host, int(port), _Dialer(self))

    # -- TCP ------------------------------------------------------------------------------

    def tcpLine(self, connection: _Connection, line: str) -> None:
        if len(line) < 5 or int(line[2:5]) != len(line):
            return
        number, body = int(line[:2]), line[5:]
        if number == 7:
            self._startReceived(int(body))
        elif number == 8 and self.resultDialogOpen:
            # Applied to the old board, which novaPartida clears when the dialog closes: lost.
            self.lostMoves.append(int(body))
            self.events.append(f"move {body} lost under the result dialog")
        elif number == 8:
            self.mark(REMOTE, int(body), connection)
        elif number == 9:
            self.events.append("remote starts a new game")
        elif number == 10:
            self.endSeries("Jogador remoto desistiu do jogo.")

    def _startReceived(self, who: int) -> None:
        """quemIniciaJogo: whatever N says, it believes it may move (and, once invited, sends MSG07 too)."""
        self._startSeries()
        self.myTurn = self.startedLast = True
        self._maybePlay()

    def connectionClosed(self, connection: _Connection) -> None:
        """Any reader that sees the end of its stream ends the series (and forgets the current connection)."""
        self.endSeries("Conexão com jogador remoto caiu.")

    def endSeries(self, why: str) -> None:
        """encerrarConexaoTCP: stops the series but never closes the socket itself."""
        self.events.append(why)
        self.playing = False
        self.connection = None
        self.waitingConnection = self.waitingConfirmation = False
        if self.pendingMove is not None and self.pendingMove.active():
            self.pendingMove.cancel()

    def quit(self) -> None:
        """Closing the window: MSG03, and the JVM exit closes every socket."""
        self.sendUdp("255.255.255.255", 3, self.nick)
        for connection in list(self.connections):
            assert connection.transport is not None
            connection.transport.loseConnection()
        self.playing = False

    # -- the game -----------------------------------------------------------------------

    def winner(self) -> int:
        for a, b, c in LINES:
            if self.board[a] != EMPTY and self.board[a] == self.board[b] == self.board[c]:
                return self.board[a]
        return EMPTY

    def mark(self, who: int, position: int, connection: _Connection | None = None) -> None:
        """marcaPosicao: a remote move is applied whenever the cell is free."""
        if not 1 <= position <= 9 or self.board[position - 1] != EMPTY:
            return
        self.board[position - 1] = who
        if who == LOCAL:
            assert self.connection is not None
            self.connection.sendMessage(8, str(position))
            self.sent.append(f"08006{position}")
        winner = self.winner()
        if winner != EMPTY or EMPTY not in self.board:
            result = "draw" if winner == EMPTY else ("won" if winner == LOCAL else "lost")
            self.results.append(result)
            self.events.append(f"game {self.gameNumber}: {result}")
            if who == REMOTE and connection is not None:
                connection.isBlocked = True  # the result dialog runs on the reader thread
            else:
                self.resultDialogOpen = True  # on its UI thread: the reader goes on
            self.clock.callLater(
                self.clickDelay, self._afterResultDialog, result, connection if who == REMOTE else None
            )
            return
        self.myTurn = who == REMOTE
        self._maybePlay()

    def _afterResultDialog(self, result: str, connection: _Connection | None) -> None:
        self.resultDialogOpen = False
        self._newGame(result)
        if connection is not None:
            connection.unblock()

    def _newGame(self, result: str) -> None:
        """novaPartida(ultimoGanhador): the coded winner never equals LOCAL, so decided games always send MSG09."""
        if self.gameNumber == 5:
            self.endSeries("Fim do jogo")
            self.events.append("series over")
            return
        self.board = [EMPTY] * 9
        self.gameNumber += 1
        send = not self.startedLast if result == "draw" else True
        if send and self.connection is not None:
            self.connection.sendMessage(9)
            self.sent.append("09005")
            self.myTurn = self.startedLast = True
        self._maybePlay()

    def _maybePlay(self) -> None:
        if not (self.autoPlay and self.playing and self.myTurn):
            return
        if self.pendingMove is None or not self.pendingMove.active():
            self.pendingMove = self.clock.callLater(self.moveDelay, self._play)

    def _play(self) -> None:
        if not (self.playing and self.myTurn) or self.connection is None or EMPTY not in self.board:
            return
        if self.strategy == "perfect":
            position = placeToPosition(self.bot.chooseMove(self._engineBoard()))
        else:
            position = self.board.index(EMPTY) + 1
        self.mark(LOCAL, position)

    def _engineBoard(self) -> KInARowState:
        """Our board as the engine's state, the side to move being whoever has fewer stones."""
        mine = self.board.count(LOCAL)
        theirs = self.board.count(REMOTE)
        toMove = 0 if mine == theirs else 1
        me = toMove
        stones = []
        for index, owner in enumerate(self.board):
            if owner != EMPTY:
                place = positionToPlace(index + 1)
                stones.append((place.x, place.y, me if owner == LOCAL else 1 - me))
        return TICTACTOE.position(stones, toMove=toMove)


def onlyKinds(sent: list[str], number: int) -> list[str]:
    return [text for text in sent if text.startswith(f"{number:02d}")]


def after(clock: object, seconds: float, call: Callable[[], None]) -> None:
    clock.callLater(seconds, call)  # type: ignore[attr-defined]
