"""The admin client's side of the Software-Challenge protocol, for ``socha-admin``.


    socha-admin [--host H] [--port P] --password PW prepare --name alice --name bob [--paused] [--observe]
    socha-admin [--host H] [--port P] --password PW observe|pause|resume|step|cancel ROOM

Every command authenticates first. The server answers a right password with
nothing and a wrong one with an ``<errorpacket>``, so the password is sent
with the command in one write and the first answer tells which it was:

- ``prepare``: ``<prepare>`` with two reserved slots; the answer
  ``<prepared>`` holds the room id and a reservation code per slot, in slot
  order (the first slot plays team ONE). With ``--observe`` it goes on as
  ``observe`` does.
- ``observe``: ``<observe>``, answered by ``<observed>``; from then on the
  room's mementos, errors, pauses and result come to us, until ``<left/>``.
  A memento carries the move just played (``lastMove``) and the number of
  moves so far (``turn``), which is all a move line needs.
- ``pause``, ``resume``, ``step``, ``cancel`` get no answer when they work and
  an errorpacket for an unknown room, so each is sent after an ``<observe>``
  of the same room: ``<observed>`` (or the errorpacket) says whether the room
  exists, and what the room then sends observers confirms the command: the
  ``paused`` data for pause and resume, the memento of the one move allowed
  for step, the result and ``<left/>`` for cancel.

L{AdminProtocol} is the Twisted side (it reads with ``wire.py``'s
L{XmlStreamReader}); L{RoomReport} turns room packets into the lines printed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from xml.etree.ElementTree import Element

from twisted.internet.defer import Deferred
from twisted.internet.interfaces import IDelayedCall, IReactorTime
from twisted.internet.protocol import Protocol
from twisted.python.failure import Failure

from velhanet.i18n import N_, _
from velhanet.socha.games import DEFAULT_GAME
from velhanet.socha.wire import XmlError, XmlStreamReader, render, tag

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 13050
DEFAULT_TIMEOUT = 30.0
PASSWORD_VARIABLE = "SOCHA_ADMIN_PASSWORD"
TEAMS = ("ONE", "TWO")
ROOM_COMMANDS = ("observe", "pause", "resume", "step", "cancel")
CONFIRMATIONS = {"step": N_("no move"), "cancel": N_("no end of the game")}
"""What did not come when a room command's confirmation is overdue (else "no confirmation")."""


class AdminError(Exception):
    """What went wrong, as one line for the user."""


@dataclass
class Command:
    """What to do: a subcommand and its arguments."""

    name: str
    """``prepare`` or one of L{ROOM_COMMANDS}."""
    roomId: str = ""
    names: tuple[str, ...] = ()
    gameType: str = DEFAULT_GAME
    paused: bool = False
    timeouts: bool = True
    observe: bool = False
    """``prepare --observe``: watch the prepared room to its end."""
    seed: int | None = None
    """``prepare --seed``: the start position's seed (velhanet's ``seed`` attribute; other servers ignore it)."""

    def requests(self) -> list[Element]:
        """The requests sent after ``<authenticate>``, in one write."""
        if self.name == "prepare":
            slots = [
                tag("slot", {"displayName": name, "canTimeout": _bool(self.timeouts), "reserved": "true"})
                for name in self.names
            ]
            attributes: dict[str, str | int | None] = {
                "gameType": self.gameType,
                "pause": _bool(self.paused),
                "seed": self.seed,
            }
            return [tag("prepare", attributes, *slots)]
        observe = tag("observe", {"roomId": self.roomId})
        if self.name == "observe":
            return [observe]
        if self.name in ("pause", "resume"):
            return [observe, tag("pause", {"roomId": self.roomId, "pause": _bool(self.name == "pause")})]
        return [observe, tag(self.name, {"roomId": self.roomId})]


def _bool(value: bool) -> str:
    return "true" if value else "false"


@dataclass
class RoomReport:
    """A room's packets as lines a person reads: moves, pauses, errors, the result."""

    names: dict[str, str] = field(default_factory=dict)
    """Display name by team (``ONE``/``TWO``), when known: from ``prepare``, or from the result."""

    def player(self, team: str) -> str:
        name = self.names.get(team)
        return f"{name} ({team})" if name else team

    def memento(self, data: Element) -> str | None:
        """``move N by PLAYER: MOVE`` for the move a memento shows, ``the game starts`` for the first one."""
        state = data.find("state")
        if state is None:
            return None
        turn = int(state.get("turn", "0"))
        if turn == 0:
            return _("the game starts")
        start = state.get("startTeam", "ONE")
        other = TEAMS[1 - TEAMS.index(start)] if start in TEAMS else start
        mover = start if turn % 2 == 1 else other
        return _("move {turn} by {player}: {move}").format(
            turn=turn, player=self.player(mover), move=describeMove(state.find("lastMove"))
        )

    def verdict(self, data: Element) -> str:
        """The result in a sentence: ``ONE wins: reason`` (the reason as the server sent it); learns the names."""
        entries = data.findall("scores/entry")
        for entry in entries:
            player = entry.find("player")
            if player is not None and player.get("name") and player.get("team"):
                self.names[player.get("team", "")] = player.get("name", "")
        winner = data.find("winner")
        team = winner.get("team") if winner is not None else None
        reason = oneLine(winner.get("reason", "")) if winner is not None else ""
        regular = winner is not None and winner.get("regular", "true") == "true"
        if team is not None:
            verdict = (_("{player} wins") if regular else _("{player} wins (irregular end)")).format(
                player=self.player(team)
            )
        else:
            verdict = _("draw") if regular else _("no winner")
        return _("{verdict}: {reason}").format(verdict=verdict, reason=reason) if reason else verdict

    def result(self, data: Element) -> list[str]:
        """The winner and why, then each player's score parts (named by the result's definition)."""
        fragments = [fragment.get("name", "?") for fragment in data.findall("definition/fragment")]
        entries = data.findall("scores/entry")
        lines = [_("result: {verdict}").format(verdict=self.verdict(data))]
        for entry in entries:
            player = entry.find("player")
            label = self.player(player.get("team", "?")) if player is not None else "?"
            parts = [part.text or "" for part in entry.findall("score/part")]
            named = ", ".join(f"{name} {part}" for name, part in zip(fragments, parts, strict=False))
            lines.append(f"  {label}: {named or ' '.join(parts)}")
        return lines

    def packet(self, data: Element) -> list[str]:
        """The lines for one ``<room><data class="…">``."""
        kind = data.get("class")
        if kind == "memento":
            line = self.memento(data)
            return [line] if line else []
        if kind == "result":
            return self.result(data)
        if kind == "paused":
            return [_("paused") if data.get("paused") == "true" else _("resumed")]
        if kind == "error":
            return [_("invalid move: {message}").format(message=oneLine(data.get("message", "")))]
        return [f"{kind}: {oneLine(render(data, 0))}"]


def describeMove(lastMove: Element | None) -> str:
    """A move as a person reads it: ``(0, 3) DOWN_RIGHT`` (Piranhas), ``place (7, 7)``, ``pass``."""
    if lastMove is None:
        return _("pass")
    origin, direction, place = lastMove.find("from"), lastMove.findtext("direction"), lastMove.find("place")
    if origin is not None and direction:
        return f"({origin.get('x')}, {origin.get('y')}) {direction.strip()}"
    if place is not None:
        return _("place ({x}, {y})").format(x=place.get("x"), y=place.get("y"))
    return oneLine("".join(render(child, 0) for child in lastMove))


def oneLine(text: str) -> str:
    return " ".join(text.split())


class AdminProtocol(Protocol):
    """One administrator connection: authenticate, send the command, print what it leads to.

    ``done`` fires once the connection is closed: with None when the
    command worked, with an L{AdminError} when it did not. ``timeout``
    bounds every wait for an answer the server owes (``<prepared>``,
    ``<observed>``, the confirmation of pause, step and cancel); watching a
    game once ``<observed>`` came has no bound, a game takes its time.
    """

    def __init__(
        self,
        password: str,
        command: Command,
        clock: IReactorTime,
        say: Callable[[str], None],
        timeout: float = DEFAULT_TIMEOUT,
        trace: Callable[[str], None] | None = None,
    ) -> None:
        self.password, self.command, self.clock, self.say = password, command, clock, say
        self.timeout, self.trace = timeout, trace
        self.reader = XmlStreamReader()
        self.roomId = command.roomId
        self.report = RoomReport()
        self.watching = False
        """Every packet of the room is printed (``observe``, ``prepare --observe``)."""
        self.done: Deferred[None] = Deferred()
        self._outcome: AdminError | None = None
        self._finished = False
        self._timer: IDelayedCall | None = None

    # -- out -----------------------------------------------------------------------

    def connectionMade(self) -> None:
        authenticate = tag("authenticate", {"password": self.password})
        self._write([authenticate, *self.command.requests()], prefix="<protocol>")
        self._awaitAnswer(_("no answer to <{request}>").format(request=self.command.name))

    def _write(self, requests: list[Element], prefix: str = "") -> None:
        text = prefix + "".join(render(request) for request in requests) + "\n"
        if self.trace is not None:
            for request in requests:
                # The password is not traced: a trace is for pasting into an issue.
                traced = tag(request.tag, {"password": "…"}) if request.tag == "authenticate" else request
                self.trace(f"→ {oneLine(render(traced, 0))}")
        self.transport.write(text.encode("utf-8"))  # type: ignore[union-attr]

    def _awaitAnswer(self, what: str) -> None:
        self._disarm()
        self._timer = self.clock.callLater(self.timeout, self._noAnswer, what)

    def _disarm(self) -> None:
        if self._timer is not None and self._timer.active():
            self._timer.cancel()
        self._timer = None

    def _noAnswer(self, what: str) -> None:
        self._timer = None
        if self.command.name == "step":
            text = _("{what} within {seconds:g} s (a room still waiting for its players ignores step)")
        else:
            text = _("{what} within {seconds:g} s")
        self.finish(AdminError(text.format(what=what, seconds=self.timeout)))

    def finish(self, error: AdminError | None = None) -> None:
        """The command is done (or failed): say goodbye and close; ``done`` fires when closed."""
        if self._finished:
            return
        self._finished, self._outcome = True, error
        self._disarm()
        if self.transport is not None:
            self.transport.write(b"<close/>\n")
            self.transport.loseConnection()

    # -- in ------------------------------------------------------------------------

    def dataReceived(self, data: bytes) -> None:
        try:
            messages = self.reader.feed(data)
        except XmlError as error:
            self.finish(AdminError(_("the server sent bad XML: {error}").format(error=error)))
            return
        for message in messages:
            if self._finished:
                return
            if self.trace is not None:
                self.trace(f"← {oneLine(render(message, 0))}")
            self.handle(message)

    def handle(self, message: Element) -> None:
        kind = message.tag
        if kind == "errorpacket":
            self._refused(message)
        elif kind == "prepared":
            self._prepared(message)
        elif kind == "observed" and message.get("roomId") == self.roomId:
            self._observed()
        elif kind == "joinedGameRoom" and message.get("roomId") == self.roomId and self.watching:
            self.say(_("a player joined ({count} of 2)").format(count=message.get("playerCount", "?")))
        elif kind == "room" and message.get("roomId") == self.roomId:
            data = message.find("data")
            if data is not None:
                self._roomData(data)
        elif kind == "left" and message.get("roomId") == self.roomId:
            self._left()

    def _refused(self, message: Element) -> None:
        original = message.find("originalRequest")
        request = original.get("class", "?") if original is not None else "?"
        text = oneLine(message.get("message", ""))
        if request == "authenticate":
            self.finish(AdminError(_("authentication failed: {reason}").format(reason=text)))
        else:  # the refusal of an <observe> sent before pause, step or cancel is theirs
            self.finish(AdminError(_("{command} refused: {reason}").format(command=self.command.name, reason=text)))

    def _prepared(self, message: Element) -> None:
        self.roomId = message.get("roomId", "")
        codes = [reservation.text or "" for reservation in message.findall("reservation")]
        self.say(_("room {room}").format(room=self.roomId))
        for index, code in enumerate(codes):
            team = TEAMS[index] if index < len(TEAMS) else str(index + 1)
            name = self.command.names[index] if index < len(self.command.names) else ""
            self.report.names[team] = name
            if name:
                self.say(_("reservation for {name} ({team}): {code}").format(name=name, team=team, code=code))
            else:
                self.say(_("reservation for {team}: {code}").format(team=team, code=code))
        if self.command.observe:
            self._write([tag("observe", {"roomId": self.roomId})])
            self._awaitAnswer(_("no answer to <{request}>").format(request="observe"))
        else:
            self.finish()

    def _observed(self) -> None:
        name = self.command.name
        if name in ("observe", "prepare"):
            self._disarm()
            self.watching = True
            self.say(_("observing room {room}").format(room=self.roomId))
        else:
            overdue = CONFIRMATIONS.get(name)
            self._awaitAnswer(_(overdue) if overdue else _("no confirmation"))

    def _roomData(self, data: Element) -> None:
        lines = self.report.packet(data)
        kind, name = data.get("class"), self.command.name
        if self.watching:
            for line in lines:
                self.say(line)
        elif name in ("pause", "resume"):
            if kind == "paused":
                paused = data.get("paused") == "true"
                self.say((_("room {room} paused") if paused else _("room {room} resumed")).format(room=self.roomId))
                self.finish()
        elif name == "cancel":
            if kind == "result":
                for line in lines:
                    self.say(line)
        elif name == "step":
            moved = kind == "memento" and lines != [_("the game starts")]
            if moved or kind in ("result", "error"):
                for line in lines:
                    self.say(line)
            if moved or kind == "result":  # after an invalid move's error, its result follows
                self.finish()

    def _left(self) -> None:
        if self.command.name == "cancel":
            self.say(_("room {room} cancelled").format(room=self.roomId))
            self.finish()
        elif self.watching:
            self.say(_("room {room} is over").format(room=self.roomId))
            self.finish()
        elif self.command.name == "step":
            self.finish()  # the game ended (a step into a timeout): its result was printed

    def connectionLost(self, reason: Failure = Failure(ConnectionError("closed"))) -> None:  # noqa: B008
        self._disarm()
        if not self._finished:
            self._finished, self._outcome = True, AdminError(_("the server closed the connection"))
        if self._outcome is None:
            self.done.callback(None)
        else:
            self.done.errback(self._outcome)


# -- the command line ------------------------------------------------------------------
