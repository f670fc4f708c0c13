"""Gambit server conformance: every command path, ERROR answers, relaying, disconnects, framing.

The target is a server at HOST:PORT. The rules are the text's sections
(``gambit-protocol.es.txt``) or velhanet's documented decisions
(``docs/gambit.md``), named in each docstring and failure message.
"""

from __future__ import annotations

import json
import re
import time

from velhanet.conformance.base import ConformanceCase, StreamClient
from velhanet.gambit.wire import Cmd, JsonStreamDecoder, MalformedMessage, Message


class JsonClient(StreamClient[Message]):
    """A Gambit client: JSON objects out, velhanet's stream decoder in."""

    def __init__(self, host: str, port: int, timeout: float) -> None:
        super().__init__(host, port, timeout)
        self.decoder = JsonStreamDecoder()

    def decode(self, data: bytes) -> list[Message]:
        return [m for _, m in self.decoder.feed(data) if not isinstance(m, MalformedMessage)]

    def send(self, cmd: int, user: str = "", args: str = "") -> None:
        self.raw(json.dumps({"Cmd": cmd, "User": user, "Args": args}).encode())

    def raw(self, data: bytes) -> None:
        self.sendBytes(data)


def describe(message: Message | None) -> str:
    return "nothing" if message is None else message.describe()


class GambitConformance(ConformanceCase):
    family = "gambit"

    def client(self) -> JsonClient:
        client = JsonClient(self.target.host, self.target.port, self.target.timeout)
        self.addCleanup(client.close)
        return client

    def created(self, name: str = "white") -> tuple[JsonClient, str]:
        white = self.client()
        white.send(Cmd.CREATE, name, "")
        answer = white.receive()
        self.require(
            answer is not None and answer.cmd == Cmd.OK and answer.args,
            f"CREATE must be answered by OK with a game id (text §2); got {describe(answer)}",
        )
        assert answer is not None
        return white, answer.args

    def game(self) -> tuple[JsonClient, JsonClient, str]:
        white, gameId = self.created("white")
        black = self.client()
        black.send(Cmd.JOIN, "black", gameId)
        first = black.receive()
        self.require(
            first is not None and first.cmd == Cmd.OK,
            f"JOIN of an open game must be answered by OK (text §3); got {describe(first)}",
        )
        second = white.receive()
        self.require(
            second is not None and second.cmd == Cmd.OK,
            f"White must get OK with its opponent's name after a JOIN (text §2); got {describe(second)}",
        )
        return white, black, gameId

    # -- creation and joining ----------------------------------------------------------------

    def test_createAnswersOkWithGameId(self) -> None:
        """CREATE is answered by OK with a game id (text §2)."""
        _, gameId = self.created()
        if not re.fullmatch(r"[0-9a-f]{4}", gameId):
            self.deviation(
                f"game ids are 4 lowercase hex digits (velhanet decision; the original's form); got {gameId!r}"
            )

    def test_joinTellsBothPlayers(self) -> None:
        """JOIN: the joiner gets OK with White's name, White gets OK with the joiner's name (text §2–3)."""
        white, gameId = self.created("alice")
        black = self.client()
        black.send(Cmd.JOIN, "bob", gameId)
        toBlack, toWhite = black.receive(), white.receive()
        self.require(
            toBlack is not None and toBlack.cmd == Cmd.OK and toBlack.args == "alice",
            f"the joiner must get OK with the opponent's name 'alice' (text §3); got {describe(toBlack)}",
        )
        self.require(
            toWhite is not None and toWhite.cmd == Cmd.OK and toWhite.args == "bob",
            f"White must get OK with the opponent's name 'bob' (text §2); got {describe(toWhite)}",
        )

    def test_joinUnknownGameIsAnError(self) -> None:
        """JOIN of a game that does not exist is answered by ERROR (text §3: 'En caso contrario … ERROR')."""
        client = self.client()
        client.send(Cmd.JOIN, "bob", "zzzz")
        answer = client.receive()
        self.require(
            answer is not None and answer.cmd == Cmd.ERROR,
            f"JOIN of unknown game 'zzzz' must get ERROR (text §3); got {describe(answer)}",
        )

    def test_joinWithTheSameNameIsRefused(self) -> None:
        """JOIN with White's own name gets ERROR and does not join (velhanet decision, docs/gambit.md)."""
        white, gameId = self.created("same")
        black = self.client()
        black.send(Cmd.JOIN, "same", gameId)
        first = black.receive()
        self.require(
            first is not None and first.cmd == Cmd.ERROR,
            f"JOIN with the opponent's name must get ERROR; got {describe(first)}",
        )
        later = black.receive(timeout=0.5)
        if later is not None and later.cmd == Cmd.OK:
            self.deviation("after the ERROR the join happened anyway (an OK followed), as in the original server")

    def test_keysAreCaseInsensitive(self) -> None:
        """Keys are matched case-insensitively: {"cmd":2,"user":…} creates a game (velhanet decision)."""
        client = self.client()
        client.raw(b'{"cmd":2,"user":"lower","args":""}')
        answer = client.receive()
        self.require(
            answer is not None and answer.cmd == Cmd.OK,
            f"lowercase keys must work like the original's Go decoder; got {describe(answer)}",
        )

    # -- moves and ends ------------------------------------------------------------------------

    def test_moveIsRelayedUnchangedToTheOpponentOnly(self) -> None:
        """MOVE goes unchanged to the opponent, to nobody else, and is not answered (text §4)."""
        white, black, gameId = self.game()
        bystander, _ = self.created("bystander")
        white.send(Cmd.MOVE, "white", f"{gameId}:e2e4")
        relayed = black.receive()
        self.require(
            relayed is not None and relayed.cmd == Cmd.MOVE and relayed.args == f"{gameId}:e2e4",
            f"the opponent must get MOVE with args '{gameId}:e2e4' unchanged (text §4); got {describe(relayed)}",
        )
        echo = white.receive(timeout=0.5)
        self.require(echo is None, f"the server does not answer a MOVE (text §4); the sender got {describe(echo)}")
        leak = bystander.receive(timeout=0.5)
        self.require(leak is None, f"a player of another game must not see the MOVE; it got {describe(leak)}")

    def test_endIsForwarded(self) -> None:
        """END is forwarded to the other player (text §5)."""
        white, black, _ = self.game()
        black.send(Cmd.END, "black", "")
        answer = white.receive()
        self.require(
            answer is not None and answer.cmd == Cmd.END,
            f"the opponent must get END after an abandon (text §5); got {describe(answer)}",
        )

    def test_disconnectSendsEnd(self) -> None:
        """A connection that closes mid-game makes the server send END to the other player (text §5)."""
        white, black, _ = self.game()
        white.close()
        answer = black.receive()
        self.require(
            answer is not None and answer.cmd == Cmd.END,
            f"the opponent of a closed connection must get END (text §5); got {describe(answer)}",
        )

    # -- framing ----------------------------------------------------------------------------------

    def test_objectSplitAcrossWrites(self) -> None:
        """An object split across TCP writes is understood (framing)."""
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

    def test_backToBackObjects(self) -> None:
        """Two objects in one write are both handled: MOVE then END reach the opponent (framing)."""
        white, black, gameId = self.game()
        move = {"Cmd": Cmd.MOVE, "User": "white", "Args": f"{gameId}:e2e4"}
        end = {"Cmd": Cmd.END, "User": "white", "Args": ""}
        white.raw(json.dumps(move).encode() + json.dumps(end).encode())
        first, second = black.receive(), black.receive()
        self.require(
            first is not None and first.cmd == Cmd.MOVE,
            f"the first of two back-to-back objects (MOVE) must be relayed; got {describe(first)}",
        )
        self.require(
            second is not None and second.cmd == Cmd.END,
            f"the second of two back-to-back objects (END) must not be lost; got {describe(second)}",
        )

    # -- robustness ---------------------------------------------------------------------------------

    def assertServerAlive(self, after: str) -> None:
        try:
            _, gameId = self.created("alive")
        except OSError as error:
            self.fail(f"the server must keep serving after {after}; a new connection failed: {error}")
        self.require(gameId, f"the server must keep serving after {after}")

    def test_moveBeforeJoinIsAnErrorNotACrash(self) -> None:
        """A MOVE outside any game gets ERROR, and the server keeps serving (robustness)."""
        client = self.client()
        client.send(Cmd.MOVE, "nobody", "abcd:e2e4")
        answer = client.receive()
        self.assertServerAlive("a MOVE outside a game")
        if answer is None or answer.cmd != Cmd.ERROR:
            self.deviation(f"a MOVE outside a game should get ERROR; got {describe(answer)}")

    def test_invalidJsonIsAnErrorNotACrash(self) -> None:
        """Invalid JSON gets ERROR, and the server keeps serving (robustness)."""
        client = self.client()
        client.raw(b'{"Cmd": oops}\n')
        answer = client.receive()
        self.assertServerAlive("invalid JSON")
        if answer is None or answer.cmd != Cmd.ERROR:
            self.deviation(f"invalid JSON should get ERROR; got {describe(answer)}")

    def test_serverMessagesHaveAnEmptyUser(self) -> None:
        """Messages sent by the server carry an empty user field (text §1)."""
        client = self.client()
        client.send(Cmd.CREATE, "someone", "")
        answer = client.receive()
        self.require(answer is not None, f"CREATE must be answered (text §2); got {describe(answer)}")
        assert answer is not None
        if answer.user:
            self.deviation(f"the server's OK carries user {answer.user!r} (the original server fills it in)")
