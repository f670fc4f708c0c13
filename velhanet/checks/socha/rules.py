"""Software-Challenge server conformance: lobby and room messages, full games, violations, ``left``.

The target is a server at HOST:PORT offering ``swc_2026_piranhas`` with the
official time limits. Each rule is stated in ``docs/socha.md`` (the anchor
given with ``@rule``).
"""

from __future__ import annotations

import random
import re
from xml.etree.ElementTree import Element

from velhanet.checks import exchange
from velhanet.checks.base import ConformanceCase, StreamClient, Target, rule, tcpReachable
from velhanet.games.piranhas import Direction, PiranhaMove, PiranhasState
from velhanet.i18n import _
from velhanet.socha import games
from velhanet.socha.wire import XmlError, XmlStreamReader


def describeXml(message: Element) -> str:
    """``joined roomId=…``, ``room … memento turn=3``, ``room … result winner=ONE``: a message in a few words."""
    attributes = " ".join(f"{key}={value}" for key, value in message.attrib.items())
    words = [message.tag, attributes] if attributes else [message.tag]
    data = message.find("data")
    if data is not None:
        words.append(str(data.get("class", "data")))
        words += [f"{key}={value}" for key, value in data.attrib.items() if key != "class"][:4]
        state = data.find("state")
        if state is not None and state.get("turn") is not None:
            words.append(f"turn={state.get('turn')}")
    return " ".join(words)


def sentXml(data: bytes) -> str:
    """What XML we send means: its elements' names (``protocol join``, ``room move``)."""
    names = re.findall(rb"<([A-Za-z][\w.-]*)", data)
    classes = re.findall(rb'class="([\w.-]+)"', data)
    words = [name.decode() for name in names[:4]] + [f"class={name.decode()}" for name in classes[:2]]
    return " ".join(words) or _("text, no element")


class XmlClient(StreamClient[Element]):
    """A protocol client: the server's stream is parsed with velhanet's reader."""

    def __init__(self, host: str, port: int, timeout: float) -> None:
        super().__init__(host, port, timeout)
        self.reader = XmlStreamReader()
        self.reader.feed(b"<protocol>")  # the server's stream may or may not start with it
        self.started = False
        self.skippedProtocolTag = False

    def send(self, text: str) -> None:
        if not self.started:
            text, self.started = "<protocol>" + text, True
        self.sendBytes(text.encode())

    def describe(self, item: Element) -> str:
        return describeXml(item)

    def describeSent(self, data: bytes) -> str:
        return sentXml(data)

    def decode(self, data: bytes) -> list[Element]:
        if not self.skippedProtocolTag:
            stripped = data.lstrip()
            if stripped.startswith(b"<protocol>"):
                data = stripped[len(b"<protocol>") :]
            if stripped:
                self.skippedProtocolTag = True
        try:
            return self.reader.feed(data)
        except XmlError as error:
            exchange.current().received(self.channel, data, _("not well-formed XML: {error}").format(error=error))
            raise AssertionError(_("the server's output is not well-formed XML: {error}").format(error=error)) from None

    def waitFor(self, kind: str, timeout: float | None = None) -> tuple[Element | None, list[Element]]:
        """The next message of ``kind`` (a tag, or a room data class), and what came before it."""
        return self.waitForAny((kind,), timeout)

    def waitForAny(self, kinds: tuple[str, ...], timeout: float | None = None) -> tuple[Element | None, list[Element]]:
        seen: list[Element] = []
        while True:
            message = self.receive(timeout)
            if message is None or kindOf(message) in kinds:
                return message, seen
            seen.append(message)

    def close(self) -> None:
        self.socket.close()


def kindOf(message: Element) -> str:
    if message.tag == "room":
        data = message.find("data")
        return data.get("class", "") if data is not None else ""
    return message.tag


def describe(message: Element | None) -> str:
    return _("nothing") if message is None else f"<{kindOf(message)}>"


def stateFromMemento(message: Element) -> PiranhasState:
    data = message.find("data")
    if data is None:
        raise AssertionError(_("a room message without <data>"))
    try:
        return games.stateFromMemento(data)
    except (ValueError, KeyError) as error:
        raise AssertionError(_("the memento cannot be read: {error}").format(error=error)) from None


def moveXml(roomId: str, move: PiranhaMove) -> str:
    return f'<room roomId="{roomId}">{games.moveData(move)}</room>'


def canTest(target: Target) -> str | None:
    return tcpReachable(target.host, target.port, target.timeout)


def probe(target: Target) -> str | None:
    """Still serving: a new TCP connection is accepted."""
    return tcpReachable(target.host, target.port, target.timeout)


class SochaConformance(ConformanceCase):
    family = "socha"

    def client(self) -> XmlClient:
        try:
            client = XmlClient(self.target.host, self.target.port, self.target.seconds(self.target.timeout))
        except OSError as error:
            self.precondition(False, _("no new connection to the server: {error}").format(error=error))
            raise
        self.addCleanup(client.close)
        return client

    def join(self) -> tuple[XmlClient, Element | None]:
        client = self.client()
        client.send("<join/>")
        return client, client.receive()

    def joined(self) -> tuple[XmlClient, str]:
        """A client in a room (a precondition: joining has its own rule)."""
        client, answer = self.join()
        self.precondition(
            answer is not None and answer.tag == "joined" and answer.get("roomId"),
            _("needs a player in a room: <join/> was answered by {answer}").format(answer=describe(answer)),
            dependsOn="socha-join",
            seen="<join/>",
        )
        assert answer is not None
        return client, answer.get("roomId", "")

    def started(self) -> tuple[XmlClient, XmlClient, str, PiranhasState]:
        """Two players in a started game, ONE asked to move (a precondition: the start has its own rule)."""
        one, roomId = self.joined()
        two, otherRoom = self.joined()
        self.precondition(
            otherRoom == roomId,
            _("needs two players in one room: the second <join/> entered {other!r}, not {room!r}").format(
                other=otherRoom, room=roomId
            ),
            dependsOn="socha-start",
            seen=_("a game's start"),
        )
        memento, _before = one.waitFor("memento")
        self.precondition(
            memento is not None,
            _("needs a started game: ONE got no memento"),
            dependsOn="socha-start",
            seen=_("a game's start"),
        )
        assert memento is not None
        request, _before = one.waitFor("moveRequest")
        self.precondition(
            request is not None,
            _("needs a started game: ONE got no moveRequest"),
            dependsOn="socha-start",
            seen=_("a game's start"),
        )
        two.waitFor("memento")
        try:
            state = stateFromMemento(memento)
        except AssertionError as error:
            self.precondition(
                False,
                _("needs a readable memento: {error}").format(error=error),
                dependsOn="socha-start",
                seen=_("a game's start"),
            )
            raise
        return one, two, roomId, state

    # -- a game ----------------------------------------------------------------------------------

    @rule("socha-join")
    def test_joinIsAnsweredWithJoined(self) -> None:
        """<join/> is answered by <joined roomId="…"/>."""
        _client, answer = self.join()
        self.require(
            answer is not None and answer.tag == "joined" and answer.get("roomId"),
            _("<join/> must be answered by <joined roomId=…/>; got {answer}").format(answer=describe(answer)),
        )

    @rule("socha-start")
    def test_startSequence(self) -> None:
        """Start: welcome ONE/TWO, memento to both, moveRequest only to ONE."""
        one, roomId = self.joined()
        two, _room = self.joined()
        first = [one.receive() for _message in range(3)]
        self.require(
            [describe(m) for m in first] == ["<welcomeMessage>", "<memento>", "<moveRequest>"],
            _("player ONE must get welcomeMessage, memento, moveRequest; got {messages}").format(
                messages=[describe(m) for m in first]
            ),
        )
        assert first[0] is not None
        color = first[0].find("data").get("color")  # type: ignore[union-attr]
        self.require(
            color == "ONE", _("the first player is team ONE (official server); got color={color!r}").format(color=color)
        )
        second = [two.receive() for _message in range(2)]
        self.require(
            [describe(m) for m in second] == ["<welcomeMessage>", "<memento>"],
            _("player TWO must get welcomeMessage and memento; got {messages}").format(
                messages=[describe(m) for m in second]
            ),
        )
        assert second[0] is not None
        self.require(second[0].find("data").get("color") == "TWO", _("the second player is team TWO"))  # type: ignore[union-attr]
        extra = two.receive(timeout=self.target.seconds(0.5))
        self.require(
            extra is None, _("player TWO must not be asked to move first; got {answer}").format(answer=describe(extra))
        )

    @rule("socha-full-game")
    def test_fullGameEndsWithResultThenLeft(self) -> None:
        """A whole game ends with <result> and then <left/> to both, and the server lets the client close first."""
        one, two, roomId, state = self.started()
        players, rng, mover = [one, two], random.Random(4), 0
        gotResult = [False, False]
        for ply in range(200):
            if ply:
                message, seen = players[mover].waitForAny(("moveRequest", "result"))
                mementos = [m for m in seen if kindOf(m) == "memento"]
                self.require(mementos, _("every move must be followed by a memento to both players"))
                state = stateFromMemento(mementos[-1])
                self.require(
                    message is not None,
                    _("after turn {turn} the game must go on or end; got nothing").format(turn=state.turn),
                )
                assert message is not None
                if kindOf(message) == "result":
                    gotResult[mover] = True
                    break
            players[mover].send(moveXml(roomId, rng.choice(state.legalMoves())))
            mover = 1 - mover
        for index, client in enumerate(players):
            if not gotResult[index]:
                result, _before = client.waitForAny(("result",))
                self.require(result is not None, _("both players must get the <result>"))
            left, _before = client.waitForAny(("left",))
            self.require(left is not None, _("<left roomId/> must follow the result (the real client needs it)"))
            extra = client.receive(timeout=self.target.seconds(0.5))
            self.require(
                not client.closedByPeer,
                _("the server must let the client close first after <left/>; got {answer}").format(
                    answer=describe(extra)
                ),
            )

    # -- violations ------------------------------------------------------------------------------

    @rule("socha-invalid-move")
    def test_invalidMoveEndsTheGameAgainstTheMover(self) -> None:
        """An invalid move ends the game: a result with regular="false" and the other team as winner."""
        one, two, roomId, state = self.started()
        corner = PiranhaMove(0, 0, Direction.UP)  # the corners are empty at the start: WRONG_START
        self.precondition(state.field(0, 0) == "EMPTY", _("needs the official setup (empty corners)"))
        one.send(moveXml(roomId, corner))
        self.requireIrregularWin(
            one,
            "TWO",
            _("an invalid move must end the game with a result"),
            _('the result of an invalid move by ONE is regular="false" with TWO as winner'),
        )

    def requireIrregularWin(self, client: XmlClient, team: str, ended: str, named: str) -> None:
        """The game ends for ``client`` with a result whose winner is ``team``, not regularly."""
        result, _before = client.waitFor("result")
        self.require(result is not None, _("{ended}; got {answer}").format(ended=ended, answer=describe(result)))
        assert result is not None
        winner = result.find("data/winner")
        self.require(winner is not None and winner.get("regular") == "false" and winner.get("team") == team, named)

    @rule("socha-out-of-turn")
    def test_moveOutOfTurnEndsTheGame(self) -> None:
        """A move by the player who was not asked ends the game against it."""
        one, two, roomId, state = self.started()
        two.send(moveXml(roomId, state.legalMoves()[0]))
        self.requireIrregularWin(
            two,
            "ONE",
            _("a move out of turn must end the game"),
            _("the result names ONE as winner of a non-regular game"),
        )

    @rule("socha-hard-timeout")
    def test_hardTimeout(self) -> None:
        """No move within 10 s ends the game against the player asked."""
        one, two, roomId, state = self.started()
        result, _before = two.waitFor("result", timeout=self.target.seconds(13))
        self.require(
            result is not None,
            _("{limit} after the moveRequest the game must end with a result; got nothing").format(
                limit=self.target.limit(10)
            ),
        )

    # -- bad input -------------------------------------------------------------------------------

    @rule("socha-unknown-reservation")
    def test_unknownReservationIsAnErrorpacket(self) -> None:
        """<joinPrepared> with an unknown code gets an <errorpacket>."""
        client = self.client()
        client.send('<joinPrepared reservationCode="no-such-code"/>')
        answer = client.receive()
        self.require(
            answer is not None and answer.tag == "errorpacket",
            _("an unknown reservation must get <errorpacket>; got {answer}").format(answer=describe(answer)),
        )

    @rule("socha-bad-xml", last=True)
    def test_badXmlDoesNotHurtOthers(self) -> None:
        """Malformed XML from one client ends that client only; others can still join."""
        intruder = self.client()
        intruder.send("<!DOCTYPE boom [<!ENTITY a 'aaaa'>]><join/>")
        intruder.receive(timeout=self.target.seconds(1))
        stopped = probe(self.target)
        self.require(
            stopped is None, _("the server must keep serving after malformed XML; {stopped}").format(stopped=stopped)
        )
        _client, answer = self.join()
        self.require(
            answer is not None and answer.tag == "joined",
            _("after one client's malformed XML another must still join; got {answer}").format(answer=describe(answer)),
        )
