"""Gambit server conformance: every command path, ERROR answers, relaying, disconnects, framing.

The target is a server at HOST:PORT. Each rule is stated in
``docs/gambit.md`` (the anchor given with ``@rule``).
"""

from __future__ import annotations

import json
import re
import socket
import time

from velhanet.checks.base import ConformanceCase, StreamClient, Target, rule, tcpReachable
from velhanet.gambit.wire import Cmd, JsonStreamDecoder, MalformedMessage, Message
from velhanet.i18n import _


class JsonClient(StreamClient[Message]):
    """A Gambit client: JSON objects out, velhanet's stream decoder in."""

    def __init__(self, host: str, port: int, timeout: float) -> None:
        super().__init__(host, port, timeout)
        self.decoder = JsonStreamDecoder()
        self.sentDecoder = JsonStreamDecoder()
        """Our own stream as the server reads it: what each write means in the exchange."""

    def decode(self, data: bytes) -> list[Message]:
        messages = []
        for raw, item in self.decoder.feed(data):
            if isinstance(item, MalformedMessage):
                self.undecoded.append(_("malformed: {error} ({raw!r})").format(error=item, raw=raw[:80]))
            else:
                messages.append(item)
        return messages

    def describe(self, item: Message) -> str:
        return item.describe()

    def describeSent(self, data: bytes) -> str:
        """Each object this write completes, as the server should read the stream (split objects included)."""
        meanings = []
        for _raw, item in self.sentDecoder.feed(data):
            if isinstance(item, MalformedMessage):
                meanings.append(_("malformed: {error}").format(error=item))
            else:
                meanings.append(item.describe())
        if not meanings:
            return _("part of an object") if data.strip() else _("white space")
        if len(meanings) > 1:
            return _("{meanings} ({n} objects in one write)").format(meanings="; ".join(meanings), n=len(meanings))
        return meanings[0]

    def send(self, cmd: int, user: str = "", args: str = "") -> None:
        self.raw(json.dumps({"Cmd": cmd, "User": user, "Args": args}).encode())

    def raw(self, data: bytes) -> None:
        self.sendBytes(data)


def describe(message: Message | None) -> str:
    return _("nothing") if message is None else message.describe()


DYING_WAIT = 1.0
"""Seconds a server that closed the connection which sent it a bad message is watched for dying."""


def quietlyReachable(target: Target) -> bool:
    """A new TCP connection is accepted (not recorded: the check records the probe that decides)."""
    try:
        socket.create_connection((target.host, target.port), timeout=target.timeout).close()
    except OSError:
        return False
    return True


def canTest(target: Target) -> str | None:
    return tcpReachable(target.host, target.port, target.timeout)


def probe(target: Target) -> str | None:
    """Still serving: a new TCP connection is accepted."""
    return tcpReachable(target.host, target.port, target.timeout)


class GambitConformance(ConformanceCase):
    family = "gambit"

    def client(self) -> JsonClient:
        try:
            client = JsonClient(self.target.host, self.target.port, self.target.seconds(self.target.timeout))
        except OSError as error:
            self.precondition(False, _("no new connection to the server: {error}").format(error=error))
            raise
        self.addCleanup(client.close)
        return client

    def created(self, name: str = "white") -> tuple[JsonClient, str]:
        """A game created by ``name`` (a precondition: CREATE is checked by its own rule)."""
        white = self.client()
        white.send(Cmd.CREATE, name, "")
        answer = white.receive()
        self.precondition(
            answer is not None and answer.cmd == Cmd.OK and answer.args,
            _("needs a game: CREATE was answered by {answer}").format(answer=describe(answer)),
            dependsOn="gambit-create",
            seen="CREATE",
        )
        assert answer is not None
        return white, answer.args

    def game(self) -> tuple[JsonClient, JsonClient, str]:
        """Two players in one game (a precondition: JOIN is checked by its own rule)."""
        white, gameId = self.created("white")
        black = self.client()
        black.send(Cmd.JOIN, "black", gameId)
        first, second = black.receive(), white.receive()
        self.precondition(
            first is not None and first.cmd == Cmd.OK and second is not None and second.cmd == Cmd.OK,
            _("needs a game with two players: JOIN was answered by {first} to the joiner and {second} to White").format(
                first=describe(first), second=describe(second)
            ),
            dependsOn="gambit-join",
            seen="JOIN",
        )
        return white, black, gameId

    # -- creation and joining ----------------------------------------------------------------

    @rule("gambit-create")
    def test_createAnswersOkWithGameId(self) -> None:
        """CREATE is answered by OK with a game id."""
        white = self.client()
        white.send(Cmd.CREATE, "white", "")
        answer = white.receive()
        self.require(
            answer is not None and answer.cmd == Cmd.OK and answer.args,
            _("CREATE must be answered by OK with a game id; got {answer}").format(answer=describe(answer)),
        )
        assert answer is not None
        if not re.fullmatch(r"[0-9a-f]{4}", answer.args):
            self.deviation(
                _("game ids are 4 lowercase hex digits (the original's form); got {gameId!r}").format(
                    gameId=answer.args
                )
            )

    @rule("gambit-join")
    def test_joinTellsBothPlayers(self) -> None:
        """JOIN: the joiner gets OK with White's name, White gets OK with the joiner's name."""
        white, gameId = self.created("alice")
        black = self.client()
        black.send(Cmd.JOIN, "bob", gameId)
        toBlack, toWhite = black.receive(), white.receive()
        self.require(
            toBlack is not None and toBlack.cmd == Cmd.OK and toBlack.args == "alice",
            _("the joiner must get OK with the opponent's name 'alice'; got {answer}").format(answer=describe(toBlack)),
        )
        self.require(
            toWhite is not None and toWhite.cmd == Cmd.OK and toWhite.args == "bob",
            _("White must get OK with the opponent's name 'bob'; got {answer}").format(answer=describe(toWhite)),
        )

    @rule("gambit-join-unknown")
    def test_joinUnknownGameIsAnError(self) -> None:
        """JOIN of a game that does not exist is answered by ERROR."""
        client = self.client()
        client.send(Cmd.JOIN, "bob", "zzzz")
        answer = client.receive()
        self.require(
            answer is not None and answer.cmd == Cmd.ERROR,
            _("JOIN of unknown game 'zzzz' must get ERROR; got {answer}").format(answer=describe(answer)),
        )

    @rule("gambit-join-same-name")
    def test_joinWithTheSameNameIsRefused(self) -> None:
        """JOIN with White's own name gets ERROR and does not join."""
        white, gameId = self.created("same")
        black = self.client()
        black.send(Cmd.JOIN, "same", gameId)
        first = black.receive()
        self.require(
            first is not None and first.cmd == Cmd.ERROR,
            _("JOIN with the opponent's name must get ERROR; got {answer}").format(answer=describe(first)),
        )
        later = black.receive(timeout=self.target.seconds(0.5))
        if later is not None and later.cmd == Cmd.OK:
            self.deviation(_("after the ERROR the join happened anyway (an OK followed), as in the original server"))

    @rule("gambit-keys")
    def test_keysAreCaseInsensitive(self) -> None:
        """Keys are matched case-insensitively: {"cmd":2,"user":…} creates a game."""
        client = self.client()
        client.raw(b'{"cmd":2,"user":"lower","args":""}')
        answer = client.receive()
        self.require(
            answer is not None and answer.cmd == Cmd.OK,
            _("lowercase keys must work like the original's Go decoder; got {answer}").format(answer=describe(answer)),
        )

    # -- moves and ends ------------------------------------------------------------------------

    @rule("gambit-move-relay")
    def test_moveIsRelayedUnchangedToTheOpponentOnly(self) -> None:
        """MOVE goes unchanged to the opponent, to nobody else, and is not answered."""
        white, black, gameId = self.game()
        bystander, _otherGame = self.created("bystander")
        white.send(Cmd.MOVE, "white", f"{gameId}:e2e4")
        relayed = black.receive()
        self.require(
            relayed is not None and relayed.cmd == Cmd.MOVE and relayed.args == f"{gameId}:e2e4",
            _("the opponent must get MOVE with args '{args}' unchanged; got {answer}").format(
                args=f"{gameId}:e2e4", answer=describe(relayed)
            ),
        )
        echo = white.receive(timeout=self.target.seconds(0.5))
        self.require(
            echo is None, _("the server does not answer a MOVE; the sender got {answer}").format(answer=describe(echo))
        )
        leak = bystander.receive(timeout=self.target.seconds(0.5))
        self.require(
            leak is None,
            _("a player of another game must not see the MOVE; it got {answer}").format(answer=describe(leak)),
        )

    @rule("gambit-end")
    def test_endIsForwarded(self) -> None:
        """END is forwarded to the other player."""
        white, black, _gameId = self.game()
        black.send(Cmd.END, "black", "")
        answer = white.receive()
        self.require(
            answer is not None and answer.cmd == Cmd.END,
            _("the opponent must get END after an abandon; got {answer}").format(answer=describe(answer)),
        )

    @rule("gambit-disconnect")
    def test_disconnectSendsEnd(self) -> None:
        """A connection that closes mid-game makes the server send END to the other player."""
        white, black, _gameId = self.game()
        white.close()
        answer = black.receive()
        self.require(
            answer is not None and answer.cmd == Cmd.END,
            _("the opponent of a closed connection must get END; got {answer}").format(answer=describe(answer)),
        )

    # -- framing ----------------------------------------------------------------------------------

    @rule("gambit-split")
    def test_objectSplitAcrossWrites(self) -> None:
        """An object split across TCP writes is understood."""
        client = self.client()
        data = json.dumps({"Cmd": Cmd.CREATE, "User": "split", "Args": ""}).encode()
        client.raw(data[:7])
        time.sleep(0.2)
        client.raw(data[7:])
        answer = client.receive()
        self.require(
            answer is not None and answer.cmd == Cmd.OK,
            _("a CREATE sent in two pieces must be answered by OK; got {answer}").format(answer=describe(answer)),
        )

    @rule("gambit-back-to-back")
    def test_backToBackObjects(self) -> None:
        """Two objects in one write are both handled: two CREATEs get two answers."""
        client = self.client()
        create = json.dumps({"Cmd": Cmd.CREATE, "User": "twice", "Args": ""}).encode()
        client.raw(create + create)
        first, second = client.receive(), client.receive()
        self.require(first is not None, _("the first of two back-to-back objects must be answered; got nothing"))
        self.require(
            second is not None,
            _("the second of two back-to-back objects must not be lost: after {answer} came nothing").format(
                answer=describe(first)
            ),
        )

    # -- robustness (may stop a fragile server: they run last) ----------------------------------------

    def assertServerAlive(self, message: str, client: JsonClient) -> None:
        """``message``: what the server must keep doing, with ``{stopped}`` for why it did not.

        A server that closed ``client``'s connection may be closing it because it is dying (the original's
        panic): then the listening socket goes a moment after, so it is asked until it refuses or for
        L{DYING_WAIT} seconds, whichever comes first — a verdict that waits for the event, not one that
        depends on which came first on a busy machine."""
        if client.closedByPeer:
            deadline = time.monotonic() + self.target.seconds(DYING_WAIT)
            while time.monotonic() < deadline and quietlyReachable(self.target):
                time.sleep(0.05)
        stopped = probe(self.target)
        self.require(stopped is None, message.format(stopped=stopped))

    @rule("gambit-move-outside", last=True)
    def test_moveBeforeJoinIsAnErrorNotACrash(self) -> None:
        """A MOVE outside any game gets ERROR, and the server keeps serving."""
        client = self.client()
        client.send(Cmd.MOVE, "nobody", "abcd:e2e4")
        answer = client.receive()
        self.assertServerAlive(_("the server must keep serving after a MOVE outside a game; {stopped}"), client)
        if answer is None or answer.cmd != Cmd.ERROR:
            self.deviation(_("a MOVE outside a game should get ERROR; got {answer}").format(answer=describe(answer)))

    @rule("gambit-bad-json", last=True)
    def test_invalidJsonIsAnErrorNotACrash(self) -> None:
        """Invalid JSON gets ERROR, and the server keeps serving."""
        client = self.client()
        client.raw(b'{"Cmd": oops}\n')
        answer = client.receive()
        self.assertServerAlive(_("the server must keep serving after invalid JSON; {stopped}"), client)
        if answer is None or answer.cmd != Cmd.ERROR:
            self.deviation(_("invalid JSON should get ERROR; got {answer}").format(answer=describe(answer)))

    @rule("gambit-empty-user")
    def test_serverMessagesHaveAnEmptyUser(self) -> None:
        """Messages sent by the server carry an empty user field."""
        client = self.client()
        client.send(Cmd.CREATE, "someone", "")
        answer = client.receive()
        self.precondition(answer is not None, _("needs an answer to CREATE"), dependsOn="gambit-create", seen="CREATE")
        assert answer is not None
        if answer.user:
            self.deviation(
                _("the server's OK carries user {user!r} (the original server fills it in)").format(user=answer.user)
            )
