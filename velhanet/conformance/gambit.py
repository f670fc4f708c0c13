"""Gambit server conformance: every command path, ERROR answers, relaying, disconnects, framing.

The target is a server at HOST:PORT. Each rule is stated in
``docs/gambit.md`` (the anchor given with ``@rule``).
"""

from __future__ import annotations

import json
import re
import time

from velhanet.conformance.base import ConformanceCase, StreamClient, Target, rule, tcpReachable
from velhanet.gambit.wire import Cmd, JsonStreamDecoder, MalformedMessage, Message


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
                self.undecoded.append(f"malformed: {item} ({raw[:80]!r})")
            else:
                messages.append(item)
        return messages

    def describe(self, item: Message) -> str:
        return item.describe()

    def describeSent(self, data: bytes) -> str:
        """Each object this write completes, as the server should read the stream (split objects included)."""
        meanings = []
        for _, item in self.sentDecoder.feed(data):
            meanings.append(f"malformed: {item}" if isinstance(item, MalformedMessage) else item.describe())
        if not meanings:
            return "part of an object" if data.strip() else "white space"
        return "; ".join(meanings) + (f" ({len(meanings)} objects in one write)" if len(meanings) > 1 else "")

    def send(self, cmd: int, user: str = "", args: str = "") -> None:
        self.raw(json.dumps({"Cmd": cmd, "User": user, "Args": args}).encode())

    def raw(self, data: bytes) -> None:
        self.sendBytes(data)


def describe(message: Message | None) -> str:
    return "nothing" if message is None else message.describe()


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
            self.precondition(False, f"no new connection to the server: {error}")
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
            f"needs a game: CREATE was answered by {describe(answer)}",
            dependsOn="gambit-create",
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
            f"needs a game with two players: JOIN was answered by {describe(first)} to the joiner"
            f" and {describe(second)} to White",
            dependsOn="gambit-join",
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
            f"CREATE must be answered by OK with a game id; got {describe(answer)}",
        )
        assert answer is not None
        if not re.fullmatch(r"[0-9a-f]{4}", answer.args):
            self.deviation(f"game ids are 4 lowercase hex digits (the original's form); got {answer.args!r}")

    @rule("gambit-join")
    def test_joinTellsBothPlayers(self) -> None:
        """JOIN: the joiner gets OK with White's name, White gets OK with the joiner's name."""
        white, gameId = self.created("alice")
        black = self.client()
        black.send(Cmd.JOIN, "bob", gameId)
        toBlack, toWhite = black.receive(), white.receive()
        self.require(
            toBlack is not None and toBlack.cmd == Cmd.OK and toBlack.args == "alice",
            f"the joiner must get OK with the opponent's name 'alice'; got {describe(toBlack)}",
        )
        self.require(
            toWhite is not None and toWhite.cmd == Cmd.OK and toWhite.args == "bob",
            f"White must get OK with the opponent's name 'bob'; got {describe(toWhite)}",
        )

    @rule("gambit-join-unknown")
    def test_joinUnknownGameIsAnError(self) -> None:
        """JOIN of a game that does not exist is answered by ERROR."""
        client = self.client()
        client.send(Cmd.JOIN, "bob", "zzzz")
        answer = client.receive()
        self.require(
            answer is not None and answer.cmd == Cmd.ERROR,
            f"JOIN of unknown game 'zzzz' must get ERROR; got {describe(answer)}",
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
            f"JOIN with the opponent's name must get ERROR; got {describe(first)}",
        )
        later = black.receive(timeout=self.target.seconds(0.5))
        if later is not None and later.cmd == Cmd.OK:
            self.deviation("after the ERROR the join happened anyway (an OK followed), as in the original server")

    @rule("gambit-keys")
    def test_keysAreCaseInsensitive(self) -> None:
        """Keys are matched case-insensitively: {"cmd":2,"user":…} creates a game."""
        client = self.client()
        client.raw(b'{"cmd":2,"user":"lower","args":""}')
        answer = client.receive()
        self.require(
            answer is not None and answer.cmd == Cmd.OK,
            f"lowercase keys must work like the original's Go decoder; got {describe(answer)}",
        )

    # -- moves and ends ------------------------------------------------------------------------

    @rule("gambit-move-relay")
    def test_moveIsRelayedUnchangedToTheOpponentOnly(self) -> None:
        """MOVE goes unchanged to the opponent, to nobody else, and is not answered."""
        white, black, gameId = self.game()
        bystander, _ = self.created("bystander")
        white.send(Cmd.MOVE, "white", f"{gameId}:e2e4")
        relayed = black.receive()
        self.require(
            relayed is not None and relayed.cmd == Cmd.MOVE and relayed.args == f"{gameId}:e2e4",
            f"the opponent must get MOVE with args '{gameId}:e2e4' unchanged; got {describe(relayed)}",
        )
        echo = white.receive(timeout=self.target.seconds(0.5))
        self.require(echo is None, f"the server does not answer a MOVE; the sender got {describe(echo)}")
        leak = bystander.receive(timeout=self.target.seconds(0.5))
        self.require(leak is None, f"a player of another game must not see the MOVE; it got {describe(leak)}")

    @rule("gambit-end")
    def test_endIsForwarded(self) -> None:
        """END is forwarded to the other player."""
        white, black, _ = self.game()
        black.send(Cmd.END, "black", "")
        answer = white.receive()
        self.require(
            answer is not None and answer.cmd == Cmd.END,
            f"the opponent must get END after an abandon; got {describe(answer)}",
        )

    @rule("gambit-disconnect")
    def test_disconnectSendsEnd(self) -> None:
        """A connection that closes mid-game makes the server send END to the other player."""
        white, black, _ = self.game()
        white.close()
        answer = black.receive()
        self.require(
            answer is not None and answer.cmd == Cmd.END,
            f"the opponent of a closed connection must get END; got {describe(answer)}",
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
            f"a CREATE sent in two pieces must be answered by OK; got {describe(answer)}",
        )

    @rule("gambit-back-to-back")
    def test_backToBackObjects(self) -> None:
        """Two objects in one write are both handled: two CREATEs get two answers."""
        client = self.client()
        create = json.dumps({"Cmd": Cmd.CREATE, "User": "twice", "Args": ""}).encode()
        client.raw(create + create)
        first, second = client.receive(), client.receive()
        self.require(first is not None, "the first of two back-to-back objects must be answered; got nothing")
        self.require(
            second is not None,
            f"the second of two back-to-back objects must not be lost: after {describe(first)} came nothing",
        )

    # -- robustness (may stop a fragile server: they run last) ----------------------------------------

    def assertServerAlive(self, after: str) -> None:
        stopped = probe(self.target)
        self.require(stopped is None, f"the server must keep serving after {after}; {stopped}")

    @rule("gambit-move-outside", last=True)
    def test_moveBeforeJoinIsAnErrorNotACrash(self) -> None:
        """A MOVE outside any game gets ERROR, and the server keeps serving."""
        client = self.client()
        client.send(Cmd.MOVE, "nobody", "abcd:e2e4")
        answer = client.receive()
        self.assertServerAlive("a MOVE outside a game")
        if answer is None or answer.cmd != Cmd.ERROR:
            self.deviation(f"a MOVE outside a game should get ERROR; got {describe(answer)}")

    @rule("gambit-bad-json", last=True)
    def test_invalidJsonIsAnErrorNotACrash(self) -> None:
        """Invalid JSON gets ERROR, and the server keeps serving."""
        client = self.client()
        client.raw(b'{"Cmd": oops}\n')
        answer = client.receive()
        self.assertServerAlive("invalid JSON")
        if answer is None or answer.cmd != Cmd.ERROR:
            self.deviation(f"invalid JSON should get ERROR; got {describe(answer)}")

    @rule("gambit-empty-user")
    def test_serverMessagesHaveAnEmptyUser(self) -> None:
        """Messages sent by the server carry an empty user field."""
        client = self.client()
        client.send(Cmd.CREATE, "someone", "")
        answer = client.receive()
        self.precondition(answer is not None, "needs an answer to CREATE", dependsOn="gambit-create")
        assert answer is not None
        if answer.user:
            self.deviation(f"the server's OK carries user {answer.user!r} (the original server fills it in)")
