"""The JogoVelha checks' means: the checker's UDP port, asking, inviting, connecting, playing a series.

``VelhaCase`` is what every rule of ``velhanet.checks.velha.rules`` stands on. Every answer it waits for
is in the check's exchange, and what came instead of it (a malformed datagram, with why) is what the
rule reports, never "nothing". Refusals are kept for the rule that grades them (velha-busy), whichever
check received them.
"""

from __future__ import annotations

import contextlib
import socket
import time

from velhanet.checks import exchange
from velhanet.checks.base import ConformanceCase
from velhanet.checks.velha.player import SeriesDriver, Udp, streamMeaning
from velhanet.checks.velha.probe import DEAF_WAIT, NICK, PROBE_NICKS
from velhanet.i18n import _
from velhanet.velha import wire
from velhanet.velha.invite import CONNECT_DELAY

OTHER_NICK = "vcheck2"
INVITED_NICK = "vinvite"
"""The nick the target must invite for the series with the target as inviter; the checker uses it
nowhere else, so a peer started with ``--invite vinvite`` invites it whenever that check runs."""


INVITE_WAIT = 30.0
"""Seconds a MSG04 waits for its MSG05 (the rule velha-invite's own limit)."""

BACK_IN_LOBBY = 0.5
"""Seconds a peer that keeps the connection after its match gets to be back in its lobby."""


class VelhaCase(ConformanceCase):
    family = "velha"

    def setUp(self) -> None:
        super().setUp()
        self.peer = self.target.host
        try:
            self.udp = Udp(self.target.extra.get("local", "127.0.0.1"), self.target.port)
        except OSError as error:
            self.precondition(False, _("cannot bind our own UDP port: {error}").format(error=error))
        self.addCleanup(self.udp.close)

    def nothingOr(self) -> str:
        """What came from the target instead of the answer awaited (L{Udp.instead})."""
        return self.udp.instead()

    def hello(self, timeout: float | None = None) -> wire.HelloReply | None:
        """MSG01, and its MSG02 within ``timeout`` (default: ``--timeout``).

        A peer that did not answer the MSG01 of L{canTest} is deaf to it: the
        MSG01 every check sends first then waits only L{DEAF_WAIT}, so that
        one broken rule costs its own wait once, not once per check (its rule,
        velha-hello, still waits its full 15 s).
        """
        if timeout is None:
            timeout = DEAF_WAIT if self.target.extra.get("answersHello") is False else self.target.timeout
        self.udp.send(self.peer, wire.encode(wire.Hello(NICK)))
        return self.udp.receive(wire.HelloReply, self.peer, self.target.seconds(timeout))  # type: ignore[return-value]

    def answeredAnother(self) -> str:
        """After a MSG01 went unanswered: if one of another form sent right after gets MSG02, say so."""
        again = next((nick for nick in PROBE_NICKS if self.helloAs(nick)), None)
        if again is None:
            return ""
        return _(
            " (a MSG01 sent right after, {hello!r}, was answered: the peer drops some"
            " datagrams; one shorter than the datagram before it, read with a reused buffer?)"
        ).format(hello=wire.encode(wire.Hello(again)))

    def helloAs(self, nick: str) -> bool:
        """MSG01 as ``nick``: did MSG02 come?"""
        self.udp.send(self.peer, wire.encode(wire.Hello(nick)))
        return self.udp.receive(wire.HelloReply, self.peer, self.target.seconds(DEAF_WAIT * 2)) is not None

    def inviteAnswer(self) -> wire.InviteAnswer | None:
        """MSG04, and its MSG05 within 30 s; once one MSG04 of this run went unanswered, within L{DEAF_WAIT}
        (the check still shows what it sent and what came)."""
        wait = DEAF_WAIT if self.target.extra.get("invitesUnanswered") else INVITE_WAIT
        self.udp.send(self.peer, wire.encode(wire.Invite(NICK)))
        answer = self.udp.receive(wire.InviteAnswer, self.peer, self.target.seconds(wait))
        if answer is None:
            self.target.extra["invitesUnanswered"] = True
        return answer  # type: ignore[return-value]

    def invite(self) -> wire.InviteAnswer:
        """Invite the target; it must answer (a precondition: the answer itself has its own rule).

        A refusal may mean the peer is still closing the previous check's match:
        invite again a few seconds later. Never a MSG06 to a refusal: the
        original program's UDP listener dies on a MSG06 it does not expect.
        """
        self.hello()
        answer: wire.InviteAnswer | None = None
        for _attempt in range(3):
            received = self.inviteAnswer()
            self.precondition(
                received is not None,
                _("needs an answer to MSG04: in {limit} came {came}").format(
                    limit=self.target.limit(INVITE_WAIT), came=self.nothingOr()
                ),
                dependsOn="velha-invite",
                seen="MSG04",
            )
            assert isinstance(received, wire.InviteAnswer)
            answer = received
            if answer.accepted:
                return answer
            self.refused(answer)
            time.sleep(self.target.seconds(5))
        assert answer is not None
        self.precondition(
            False,
            _(
                "needs the peer to accept an invitation; it refused three times ({answer!r}): start it"
                " to accept invitations automatically, and it must be back in the lobby after a match"
            ).format(answer=wire.encode(answer)),
            dependsOn="velha-invite",
            seen="MSG04",
        )
        raise AssertionError("unreachable")

    def refused(self, answer: wire.InviteAnswer) -> None:
        """A refusal, kept for the rule that grades refusals (velha-busy) whichever check received it."""
        check = getattr(getattr(self, self._testMethodName, None), "ruleAnchor", "")
        self.target.extra.setdefault("refusals", []).append((check, answer))

    def refusingSince(self) -> str:
        """Which check's invitation the peer refused first, when one before this check's was refused."""
        first = next((check for check, _answer in self.target.extra.get("refusals", []) if check), "")
        return _(" (it has refused every invitation since the check {check})").format(check=first) if first else ""

    def connect(self, answer: wire.InviteAnswer, sendAck: bool = True) -> socket.socket:
        if sendAck:
            self.udp.send(self.peer, wire.encode(wire.InviteAck()))
            # As velhanet's inviter: the original program can take the
            # connection only a moment after its MSG05 (docs/velha.md).
            time.sleep(self.target.seconds(CONNECT_DELAY))
        try:
            connection = socket.create_connection((self.peer, answer.port), timeout=10)
        except OSError as error:
            why = error.strerror or error
            noConnection = _("no connection to {host}:{port}: {error}")
            exchange.current().event("tcp", noConnection.format(host=self.peer, port=answer.port, error=why))
            needs = _("needs a connection to the port in MSG05 ({port}): {error}")
            self.precondition(False, needs.format(port=answer.port, error=error))
            raise
        connected = _("connected to {host}:{port}, the port of MSG05").format(host=self.peer, port=answer.port)
        exchange.current().event("tcp", connected)
        self.addCleanup(connection.close)
        return connection

    def streamReply(self, connection: socket.socket) -> list[object]:
        """The messages of the next read of a match connection (recorded)."""
        data = connection.recv(64)
        exchange.current().received("tcp", data, streamMeaning(data) if data else _("the target closed the connection"))
        return [item for _raw, item in wire.StreamDecoder().feed(data)]

    def giveUp(self, connection: socket.socket) -> None:
        """End a match we opened the way the text ends one: MSG10, then close.

        The next check starts once the peer is back in its lobby: when it has
        closed its side too, or (a peer that keeps the connection) 0.5 s later.
        """
        with contextlib.suppress(OSError):
            giveUp = wire.encodeStream(wire.GiveUp())
            exchange.current().sent("tcp", giveUp, _("MSG10, and we close our side: the check is over"))
            connection.sendall(giveUp)
            connection.shutdown(socket.SHUT_WR)
        deadline = time.monotonic() + self.target.seconds(BACK_IN_LOBBY)
        with contextlib.suppress(OSError):  # a timeout, or a reset: the wait is over either way
            while (remaining := deadline - time.monotonic()) > 0:
                connection.settimeout(remaining)
                if not connection.recv(4096):
                    break  # the peer closed: its match is over
        connection.close()

    def playSeries(self, connection: socket.socket, isInvitee: bool) -> SeriesDriver:
        driver = SeriesDriver(connection, isInvitee, self.target.extra.get("moveDelay", 0.3))
        settings = driver.settings
        settings.startGrace = self.target.seconds(self.target.extra.get("startGrace", settings.startGrace))
        settings.start, settings.peer = self.target.seconds(settings.start), self.target.seconds(settings.peer)
        if isInvitee:
            driver.machine.begin()
        else:
            driver.machine.awaitStart()
        driver.run(timeout=self.target.seconds(300))
        connection.close()
        if not driver.peerClosed:
            time.sleep(self.target.seconds(BACK_IN_LOBBY))  # a peer that keeps the connection (the original)
        return driver

    def checkSeries(self, driver: SeriesDriver) -> None:
        # Sorted by their English words (a match's reasons keep it, velhanet.velha.said), shown as translated.
        noStart = [str(reason) for reason in driver.recorder.of("ended") if "sent no MSG07" in english(reason)]
        self.precondition(
            not noStart,
            _("needs a match that starts: {reason}").format(reason=noStart[0] if noStart else ""),
            "velha-invite",
            "MSG07",
        )
        broken = [str(reason) for reason in driver.recorder.of("ended") if "broke a rule" in english(reason)]
        self.require(
            not broken, _("the target broke a rule of the match: {reason}").format(reason=broken[0] if broken else "")
        )
        self.require(
            not driver.malformed,
            _("the target sent malformed TCP frames: {frames}").format(frames=driver.malformed[:2]),
        )
        ended = [str(reason) for reason in driver.recorder.of("ended")]
        self.require(not ended, _("the match ended early: {reason}").format(reason=ended[0] if ended else ""))
        over = driver.recorder.of("seriesOver")
        self.require(
            over,
            _("the series must end at a third win or after the fifth game; events: {events}").format(
                events=driver.recorder.events[-3:]
            ),
        )
        found = []  # every deviation of the series, in one WARN
        if driver.afterTheEnd:
            playedOn = ", ".join(driver.afterTheEnd[:3])
            found.append(_("after the series was decided the target went on playing ({moves})").format(moves=playedOn))
        if not driver.peerClosed:
            found.append(_("after the series the target kept the connection open (the text closes it automatically)"))
        notices = [str(n) for n in driver.recorder.of("notice") if "text MSG" in english(n) or "original" in english(n)]
        butSo = _("the game stayed well defined, but: {notice}")
        found += [butSo.format(notice=notice) for notice in dict.fromkeys(notices)]
        if found:
            self.deviation("; ".join(found))


def english(text: object) -> str:
    """A match's reason or notice in English, whatever the process speaks (its ``english``, if it kept one)."""
    return str(getattr(text, "english", text))
