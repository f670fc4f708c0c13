"""velhanet against a scripted stand-in of the original Java program (situations A–G of
the interop report), and the ways out of every waiting state."""

from __future__ import annotations

from types import SimpleNamespace

from twisted.internet.protocol import Protocol, ServerFactory
from twisted.internet.task import Clock
from twisted.internet.testing import StringTransport
from twisted.python import usage
from twisted.trial.unittest import SynchronousTestCase

from velhanet.games.kinarow import KInARowState
from velhanet.velha import wire
from velhanet.velha.frontends import ConsoleFrontEnd
from velhanet.velha.peer import Peer
from velhanet.velha.room import START_GRACE, MatchSettings
from velhanet.velha.tap import Options

from .velha_harness import BotRecorder, FakeLan, Recorder
from .velha_match_fakes import RecordingPeer, newMatch
from .velha_original import OriginalProgram, onlyKinds

VELHA, JAVA, THIRD = "198.18.0.1", "198.18.0.2", "198.18.0.3"


def consoleFrontEnd() -> tuple[ConsoleFrontEnd, StringTransport]:
    """velhanet's console on a string transport. Its peer is a stand-in with only a nick: these tests
    drive the console through its match events and commands that never reach the peer."""
    console = ConsoleFrontEnd(exit=lambda: None)
    console.attach(SimpleNamespace(nick="Bo"))  # type: ignore[arg-type]
    transport = StringTransport()
    console.makeConnection(transport)
    return console, transport


class Scenario(SynchronousTestCase):
    """velhanet's bot 'Bo' and the original 'javaP' on one in-memory LAN."""

    def setUp(self) -> None:
        self.lan = FakeLan()
        self.bo = BotRecorder(self.lan.clock, seed=5)
        self.velha = self.lan.addPeer("Bo", VELHA, self.bo, announceTargets=["255.255.255.255"], acceptPolicy="always")

    def original(self, **kwargs: object) -> OriginalProgram:
        java = OriginalProgram(self.lan, "javaP", JAVA, **kwargs)  # type: ignore[arg-type]
        self.velha.datagramReceived(b"01010javaP", JAVA)  # its MSG01 at start; Bo answers MSG02
        self.lan.run(0.1)
        return java

    def boEvents(self, kind: str) -> list[tuple[object, ...]]:
        return [event for event in self.bo.events if event[0] == kind]

    def notices(self) -> list[str]:
        return [str(event[1]) for event in self.boEvents("notice")]

    def assertBackInLobby(self) -> None:
        """Nothing of the match or the handshakes is left on velhanet's side, and it accepts again."""
        self.lan.run(70, step=0.05)
        self.assertIsNone(self.velha.matchProtocol)
        self.assertEqual(self.velha.supersededProtocols, [])
        self.assertEqual((self.velha.inviters, self.velha.invitees), ({}, {}))
        self.assertFalse(self.velha.busy())
        self.assertEqual([port for port in self.lan.openListeners() if port.host == VELHA], [])

    def velhaWire(self) -> list[str]:
        """Every datagram velhanet sent, decoded to text."""
        return [raw.decode() for source, _, raw in self.lan.log if source == VELHA]


class SlowAcceptTests(Scenario):
    """A: velhanet invites; the Java user clicks 'Sim' late."""

    def test_twelveSecondAcceptOneDialog(self) -> None:
        java = self.original(clickDelay=12)
        self.velha.invite("javaP")
        self.lan.run(120, step=0.05)
        self.assertEqual(java.dialogs, 1)
        self.assertEqual(len(onlyKinds(self.velhaWire(), 4)), 1)
        self.assertEqual(len(self.boEvents("seriesOver")), 1)
        self.assertIn("series starts, my turn: False", java.events)
        self.assertBackInLobby()

    def test_twentyFiveSecondAcceptAtMostTwoDialogs(self) -> None:
        """Its listener is held by the dialog, so our MSG01 probes go unanswered: no copy but the one at 15 s."""
        java = self.original(clickDelay=25)
        self.velha.invite("javaP")
        self.lan.run(120, step=0.05)
        self.assertLessEqual(java.dialogs, 2)
        self.assertLessEqual(len(onlyKinds(self.velhaWire(), 4)), 2)
        self.assertEqual(len(self.boEvents("seriesOver")), 1)
        self.assertBackInLobby()

    def test_firstInvitationLostThenOneDialog(self) -> None:
        """The first MSG04 is lost: the original's listener answers our MSG01, so a copy goes at once.

        Its user then answers 12 s after the one dialog it shows, and the
        match begins within 16 s of the invitation (with copies only at 0
        and 15 s it began at 27 s).
        """
        java = self.original(clickDelay=12)
        dropped: list[bytes] = []

        def loseFirstInvite(datagram: tuple[str, str, bytes]) -> int:
            if datagram[2].startswith(b"04") and not dropped:
                dropped.append(datagram[2])
                return 0
            return 1

        self.lan.filter = loseFirstInvite
        self.velha.invite("javaP")
        began = None
        while began is None and self.lan.clock.seconds() < 60:
            self.lan.run(0.05)
            if self.boEvents("match"):
                began = self.lan.clock.seconds()
        self.assertEqual(len(dropped), 1)
        assert began is not None
        self.assertLess(began, 16)
        self.lan.run(120, step=0.05)
        self.assertEqual(java.dialogs, 1)
        self.assertEqual(len(self.boEvents("seriesOver")), 1)
        self.assertBackInLobby()

    def test_secondDialogMovesTheMatchToTheNewPort(self) -> None:
        """After 15 s velhanet resends MSG04; the original answers twice and waits on the newer port."""
        java = self.original(clickDelay=17)
        self.velha.invite("javaP")
        self.lan.run(200, step=0.05)
        self.assertEqual(java.dialogs, 2)
        ports = {text for text in java.sent if text.startswith("05")}
        self.assertEqual(len(ports), 2)
        self.assertEqual(len(self.lan.pumps), 2)  # one connection per port
        self.assertTrue(any("opened a new port" in n for n in self.notices()))
        self.assertEqual(len(self.boEvents("seriesOver")), 1)
        self.assertEqual(self.boEvents("ended"), [])
        self.assertBackInLobby()

    def test_noMsg07IsReportedAndEndsTheMatch(self) -> None:
        """An invitee that accepts the connection but never sends MSG07: MSG10 after 30 s, free again."""
        received: list[bytes] = []

        class Mute(Protocol):
            def dataReceived(self, data: bytes) -> None:
                received.append(data)

        mute = ServerFactory()
        mute.protocol = Mute
        port = self.lan.network(JAVA).listen(mute)
        self.velha.datagramReceived(b"02010javaP", JAVA)
        self.velha.invite("javaP")
        self.lan.run(0.5)
        self.velha.datagramReceived(wire.encode(wire.InviteAnswer("javaP", port.portNumber)), JAVA)
        self.lan.run(29)
        self.assertIsNotNone(self.velha.matchProtocol)
        self.lan.run(3)
        self.assertEqual(b"".join(received), b"10005\n")
        ended = [str(e[1]) for e in self.boEvents("ended")]
        self.assertTrue(ended and "sent no MSG07 within 30 s" in ended[0], ended)
        self.assertIsNone(self.velha.matchProtocol)
        # A stuck match never makes velhanet refuse: a new invitation is accepted.
        self.velha.datagramReceived(b"04008Ana", THIRD)
        self.lan.run(1)
        answers = self.lan.sent(VELHA, wire.InviteAnswer)
        self.assertEqual(len(answers), 1)
        self.assertNotEqual(answers[0].port, 0)  # type: ignore[attr-defined]


class DrawTests(Scenario):
    """B: the original never sends MSG09 after a draw; five draws must still end the series."""

    def fiveDraws(self, velhaInvites: bool) -> OriginalProgram:
        java = self.original(strategy="perfect", msg07=1)
        if velhaInvites:
            self.velha.invite("javaP")
        else:
            java.invite("Bo", VELHA)
        self.lan.run(300, step=0.05)
        results = [event[1] for event in self.boEvents("gameOver")]
        self.assertEqual(results, ["draw"] * 5)
        self.assertEqual(self.boEvents("seriesOver"), [("seriesOver", "draw", (0, 0))])
        self.assertEqual(java.results, ["draw"] * 5)
        self.assertIn("series over", java.events)
        self.assertNotIn("09005", java.sent)  # the original never sent MSG09
        return java

    def test_fiveDrawsAsInvitee(self) -> None:
        java = self.fiveDraws(velhaInvites=False)
        # After a draw it started the original moves again without MSG09; velhanet held its
        # own first move and followed, so no move was lost under its result dialog.
        self.assertTrue(any("made the first move of game 2" in n for n in self.notices()))
        self.assertEqual(java.lostMoves, [])
        self.assertBackInLobby()

    def test_fiveDrawsAsInviter(self) -> None:
        java = self.fiveDraws(velhaInvites=True)
        self.assertEqual(java.lostMoves, [])
        self.assertBackInLobby()

    def test_fiveDrawsWithAFragileReader(self) -> None:
        """Nothing reaches the original while the result dialog of a game it ended opens (from game 3 on).

        The original invites, starts every game, and ends every one with its
        ninth move; velhanet's MSG09 then reached its reader as its dialog
        opened (seen for real: its UI thread crashing as the MSG09 was read;
        once, its reader never reading again in game 5, velhanet's answer to
        its first move lost and both sides silent). Once the peer has shown
        it starts those games itself, velhanet sends no MSG09 at that moment.
        """
        java = self.original(strategy="perfect", msg07=1, fragileReaderAtGame=5)
        java.invite("Bo", VELHA)
        self.lan.run(300, step=0.05)
        self.assertEqual([event[1] for event in self.boEvents("gameOver")], ["draw"] * 5)
        self.assertEqual(java.results, ["draw"] * 5)
        self.assertIn("series over", java.events)
        self.assertFalse([e for e in java.events if e.startswith("reader died")])
        self.assertEqual(java.arrived.count("09005"), 1)  # only after game 1, before it was known
        self.assertBackInLobby()

    def test_deadReaderIsSaidWithin20s(self) -> None:
        """The reader dies on the one MSG09 still sent (after game 1): the wait is explained within 20 s."""
        java = self.original(strategy="perfect", msg07=1, fragileReaderAtGame=2)
        java.invite("Bo", VELHA)

        def runUntil(condition: object, limit: float = 60) -> float:
            end = self.lan.clock.seconds() + limit
            while not condition() and self.lan.clock.seconds() < end:  # type: ignore[operator]
                self.lan.run(0.05)
            self.assertTrue(condition())  # type: ignore[operator]
            return self.lan.clock.seconds()

        def ourMovesInGame2() -> int:
            game2 = self.bo.events.index(("game", 2, False))
            return sum(1 for e in self.bo.events[game2:] if e[0] == "moved" and e[2])

        runUntil(lambda: ("game", 2, False) in self.bo.events and ourMovesInGame2() == 1)
        answered = self.lan.clock.seconds()
        died = [e for e in java.events if e.startswith("reader died")]
        self.assertEqual(died, ["reader died on 09005 under the result dialog"])
        warned = runUntil(lambda: any("no answer to your move" in n for n in self.notices()), limit=30)
        self.assertLessEqual(round(warned - answered, 2), 20)
        warning = next(n for n in self.notices() if "no answer to your move" in n)
        self.assertIn("stopped reading", warning)
        self.assertEqual(java.board.count(1), 1)  # game 2 on its side: its own first move only
        self.lan.run(130, step=0.05)
        ended = [str(e[1]) for e in self.boEvents("ended")]
        self.assertTrue(ended and "match given up (MSG10 sent)" in ended[0], ended)
        self.assertBackInLobby()

    def test_slowPersonLosesNoMove(self) -> None:
        """The original's user takes 6 s to close each result dialog (within the 8 s grace)."""
        java = self.original(strategy="perfect", msg07=1, clickDelay=6)
        self.velha.invite("javaP")
        self.lan.run(400, step=0.05)
        self.assertEqual(java.results, ["draw"] * 5)
        self.assertEqual(java.lostMoves, [])
        self.assertEqual(self.boEvents("seriesOver"), [("seriesOver", "draw", (0, 0))])

    def test_personSlowerThanTheGrace(self) -> None:
        """12 s on each result dialog (more than the 8 s grace): moves get lost under the original's
        dialog and the boards part; its MSG09 in the middle of a game shows it, that game is void, the
        next starts with the original, and the series still ends on both sides, no rule broken."""
        java = self.original(clickDelay=12, strategy="perfect")
        java.invite("Bo", VELHA)
        self.lan.run(600, step=0.05)
        self.assertTrue(java.lostMoves)
        self.assertTrue(any("is void; the next game starts with javaP" in n for n in self.notices()))
        self.assertEqual(len(self.boEvents("seriesOver")), 1)
        self.assertEqual(self.boEvents("ended"), [])
        self.assertIn("Conexão com jogador remoto caiu.", java.events)  # its end, when velhanet closes
        self.assertBackInLobby()

    def test_lostFirstMoveIsRecovered(self) -> None:
        """A person slower than the grace: our first move of game 2 is lost under the original's
        result dialog; its MSG09 reveals it, and game 2 restarts with its move on both sides."""
        person = Recorder()
        velha = self.lan.addPeer("Cy", THIRD, person, announceTargets=[JAVA], acceptPolicy="always")
        velha.settings.startGrace = 1.0
        java = OriginalProgram(self.lan, "javaP", JAVA, msg07=1, clickDelay=3)
        velha.datagramReceived(b"02010javaP", JAVA)
        velha.invite("javaP")
        script = [4, 5, 9, 7, 8]  # game 1: never blocks 1-2-3, so the original wins it with its own move
        for _ in range(600):
            self.lan.run(0.1)
            if script and person.events and person.events[-1] == ("turn",):
                velha.play(script.pop(0))
        self.assertEqual(java.results[0], "won")
        self.assertEqual(len(java.lostMoves), 1)
        notices = [str(e[1]) for e in person.events if e[0] == "notice"]
        self.assertTrue(any("it never saw that move" in n for n in notices), notices)
        games = [e for e in person.events if e[0] == "game"]
        self.assertIn(("game", 2, False), games)  # game 2 restarted as the original's, as on its side
        self.assertFalse(any(e[0] == "ended" for e in person.events))


class ScriptedPerson(Recorder):
    """A person at velhanet's console: plays its script, then the first free cell of its board."""

    def __init__(self, script: list[int]) -> None:
        super().__init__()
        self.script = script
        self.board: KInARowState | None = None
        self.asked = False

    def yourTurn(self, board: KInARowState) -> None:
        self.board = board
        self.asked = True
        super().yourTurn(board)

    def nextMove(self) -> int:
        self.asked = False
        if self.script:
            return self.script.pop(0)
        board = self.board
        assert board is not None
        return next(p for p in range(1, 10) if board.stoneAt((p - 1) % 3, (p - 1) // 3) is None)


class SlowerThanTheGraceTests(Scenario):
    """The original's user takes 3 s on each result dialog, velhanet's grace is 1 s: velhanet's first
    move of a game can reach the original too early (scenario 8 of the real runs, with 12 s and 8 s)."""

    def play(self, java: OriginalProgram, person: ScriptedPerson, seconds: float) -> Peer:
        velha = self.lan.addPeer("Cy", THIRD, person, announceTargets=[JAVA], acceptPolicy="always")
        velha.settings.startGrace = 1.0
        velha.datagramReceived(b"02010javaP", JAVA)
        velha.invite("javaP")
        for _ in range(round(seconds / 0.1)):
            self.lan.run(0.1)
            if person.asked:
                velha.play(person.nextMove())
        return velha

    def test_collisionOnTheLostCellIsALostMove(self) -> None:
        """The original started game 1 and drew it with its own last move; velhanet's first move of game 2
        (1) is lost under its dialog; the original then starts game 2 itself, on 1. Before: "javaP broke a
        rule: position 1 is already taken"; now game 2 goes on as the original sees it."""
        java = OriginalProgram(self.lan, "javaP", JAVA, msg07=1, clickDelay=3, strategy="first")
        person = ScriptedPerson([2, 4, 7, 9, 1])  # game 1 (a draw, the original's move last), then 1
        self.play(java, person, 60)
        self.assertEqual(java.results[0], "draw")
        self.assertEqual(java.lostMoves, [1])
        notices = [str(e[1]) for e in person.events if e[0] == "notice"]
        self.assertTrue(any("where our first move of game 2 is" in n for n in notices), notices)
        self.assertFalse(any(e[0] == "ended" for e in person.events), person.events)
        ours = [e[1] for e in person.events if e[0] == "gameOver"]
        theirs = {"won": "lost", "lost": "won", "draw": "draw"}
        self.assertEqual([theirs[r] for r in java.results[: len(ours)]], ours)  # every game ends alike on both sides

    def test_msg09CrossingOurFirstMoveIsNotALostMove(self) -> None:
        """velhanet started game 1 and drew it with its own last move: the original's dialog blocks its
        reader, so velhanet's MSG09 and first move of game 2 wait, and its own MSG09 crosses them. Before:
        velhanet restarted game 2 and the boards parted (both waited 120 s); now the MSG09 is ignored."""
        java = OriginalProgram(self.lan, "javaP", JAVA, msg07=2, clickDelay=3, strategy="first")
        person = ScriptedPerson([2, 4, 5, 7, 9])  # game 1: a draw, velhanet's move last
        self.play(java, person, 120)
        self.assertEqual(java.results[0], "draw")
        game2 = java.events[java.events.index("game 1: draw") : java.events.index("game 2: lost")]
        self.assertFalse(any("lost under the result dialog" in event for event in game2), java.events)
        notices = [str(e[1]) for e in person.events if e[0] == "notice"]
        self.assertTrue(any("after our first move of game 2; it crossed ours" in n for n in notices), notices)
        self.assertFalse(any("game 2: it never saw that move" in n for n in notices), notices)
        self.assertEqual(len([e for e in person.events if e[0] == "seriesOver"]), 1, person.events)
        self.assertFalse(any(e[0] == "ended" for e in person.events), person.events)
        ours = [e[1] for e in person.events if e[0] == "gameOver"]
        theirs = {"won": "lost", "lost": "won", "draw": "draw"}
        self.assertEqual([theirs[r] for r in java.results], ours)


class SilentNonStarterTests(SynchronousTestCase):
    """After a draw we started, a peer that never sends MSG09 (the original's stale flag): we start."""

    def test_weStartAfterTheGrace(self) -> None:
        clock, peer = Clock(), RecordingPeer()
        match = newMatch(peer, clock, settings=MatchSettings(startGrace=1.0), peerNick="javaP")
        match.awaitStart()
        match.startReceived(2)  # we start game 1
        for mine, theirs in ((1, 2), (3, 5), (4, 6), (8, 7)):
            match.localMove(mine)
            match.remoteMove(theirs)
        match.localMove(9)  # a draw; the peer should start game 2
        self.assertIn(("gameOver", "draw", (0, 0)), peer.events)
        clock.advance(0.9)
        self.assertNotIn(wire.NewGame(), peer.sent())
        clock.advance(0.2)
        self.assertEqual(peer.sent()[-1], wire.NewGame())
        self.assertTrue(any("did not start game 2 within 1 s after the draw" in str(e[-1]) for e in peer.events))
        self.assertEqual(peer.events[-1], ("turn",))


class BusyRefusalTests(Scenario):
    """C: the original refuses a busy invitation with the inviter's nick."""

    def test_refusalWithOurNickIsADecline(self) -> None:
        java = self.original()
        java.playing = True
        self.velha.invite("javaP")
        self.lan.run(1)
        self.assertIn("05009Bo|0", java.sent)
        self.assertIn(("invite", "javaP", "declined"), self.bo.events)
        self.assertTrue(any("carried our nick" in n for n in self.notices()))
        self.assertBackInLobby()

    def test_nickDifferingOnlyInCaseIsAnotherPlayer(self) -> None:
        other = Recorder()
        self.lan.addPeer("bo", THIRD, other, announceTargets=[VELHA]).start()
        self.lan.run(0.5)
        self.assertIn("bo", self.velha.roster)
        self.assertIn(("online", "bo", THIRD), self.bo.events)


class SecondMsg07Tests(Scenario):
    """D: an original that was once invitee sends a MSG07 of its own when it invites."""

    def test_invitedByAnOriginalThatWasInvitee(self) -> None:
        java = self.original()
        self.velha.invite("javaP")
        self.lan.run(120, step=0.05)
        self.assertEqual(len(self.boEvents("seriesOver")), 1)
        self.lan.run(40, step=0.05)
        sentBefore = len(java.sent)
        java.invite("Bo", VELHA)
        self.lan.run(120, step=0.05)
        self.assertTrue(any(text.startswith("07") for text in java.sent[sentBefore:]))
        self.assertTrue(any("sent a MSG07 of its own" in n for n in self.notices()))
        self.assertEqual(len(self.boEvents("seriesOver")), 2)
        self.assertFalse(any("broke a rule" in str(e[1]) for e in self.boEvents("ended")))
        self.assertBackInLobby()


class PacingTests(Scenario):
    """E: answers the original cannot take at once."""

    def test_refusalReachesAFreshOriginal(self) -> None:
        self.velha.acceptPolicy = "never"
        java = self.original(flagLag=0.05)
        java.invite("Bo", VELHA)
        self.lan.run(2)
        self.assertIn("Bo recusou o convite.", java.events)

    def test_busyRefusalReachesAFreshOriginal(self) -> None:
        carla = BotRecorder(self.lan.clock, seed=9)
        self.lan.addPeer("Cy", THIRD, carla, announceTargets=[VELHA], acceptPolicy="always")
        self.velha.datagramReceived(b"02007Cy", THIRD)
        self.velha.invite("Cy")
        self.lan.run(2)
        self.assertTrue(self.velha.busy())
        java = self.original(flagLag=0.05)
        java.invite("Bo", VELHA)
        self.lan.run(2)
        self.assertIn("Bo recusou o convite.", java.events)

    def test_connectionAfterTheOriginalIsReady(self) -> None:
        """MSG06 first, the connection 0.2 s later: one MSG07, and no 30 s timeout ends the match on its side."""
        java = self.original(flagLag=0.05)
        self.velha.invite("javaP")
        self.lan.run(150, step=0.05)
        self.assertEqual(len([text for text in java.sent if text.startswith("07")]), 1)
        self.assertNotIn("TIMEOUT: aguardando conexão remota.", java.events)
        self.assertEqual(len(self.boEvents("seriesOver")), 1)
        self.assertBackInLobby()


class DiscoveryTests(Scenario):
    """F: the original hears no broadcast; velhanet keeps it in the roster anyway."""

    def test_originalStaysInRoster(self) -> None:
        self.original()
        self.velha.start()
        self.lan.run(400, step=0.1)
        self.assertIn("javaP", self.velha.roster)
        hellos = [d for d in self.lan.log if d[0] == VELHA and d[1] == JAVA and d[2].startswith(b"01")]
        self.assertEqual(len(hellos), 3)  # at 0, 180 and 360 s: never more often than the text allows
        self.assertFalse(any(e[0] == "offline" for e in self.bo.events))


class QuitTests(Scenario):
    def test_originalQuitsMidGame(self) -> None:
        java = self.original(moveDelay=2)
        self.velha.invite("javaP")
        self.lan.run(3)
        self.assertIsNotNone(self.velha.matchProtocol)
        java.quit()
        self.lan.run(1)
        ended = [str(e[1]) for e in self.boEvents("ended")]
        self.assertEqual(len(ended), 1)
        self.assertTrue("left (MSG03)" in ended[0] or "connection to javaP was lost" in ended[0], ended)
        self.assertBackInLobby()


class SilentPeerTests(SynchronousTestCase):
    """Every waiting state of the match has a way out."""

    def setUp(self) -> None:
        self.lan = FakeLan()
        self.ana, self.bo = Recorder(), BotRecorder(self.lan.clock, seed=1)
        self.a = self.lan.addPeer("Ana", "198.18.0.1", self.ana, announceTargets=[])
        self.b = self.lan.addPeer("Bo", "198.18.0.2", self.bo, announceTargets=[], acceptPolicy="always")
        self.a.datagramReceived(b"02007Bo", "198.18.0.2")

    def test_noMoveFromPeer(self) -> None:
        """Ana (a recorder that never plays) falls silent: Bo warns at 60 s and gives up at 120 s."""
        self.a.invite("Bo")
        self.lan.run(2)
        self.assertIsNotNone(self.b.matchProtocol)
        self.lan.run(200, step=0.05)
        notices = [str(e[1]) for e in self.bo.events if e[0] == "notice"]
        self.assertTrue(any("still waiting for" in n and "Ana" in n for n in notices), notices)
        ended = [str(e[1]) for e in self.bo.events if e[0] == "ended"]
        self.assertTrue(any("for 120 s; match given up (MSG10 sent)" in e for e in ended), ended)
        self.assertTrue(any("gave up (MSG10)" in str(e[1]) for e in self.ana.events if e[0] == "ended"))
        self.assertIsNone(self.b.matchProtocol)
        self.assertIsNone(self.a.matchProtocol)

    def test_peerTimeoutZeroWaitsForever(self) -> None:
        self.b.settings.peer = 0
        self.a.invite("Bo")
        self.lan.run(1000, step=0.5)
        self.assertIsNotNone(self.b.matchProtocol)


class InsideVelhanetTests(SynchronousTestCase):
    """G: what was found reading the code and at the console."""

    def test_cancelWhileConnecting(self) -> None:
        lan = FakeLan(connectLatency=1.0)
        ana, cy = Recorder(), Recorder()
        a = lan.addPeer("Ana", "198.18.0.1", ana, announceTargets=["198.18.0.3"])
        lan.addPeer("Cy", "198.18.0.3", cy, announceTargets=[], acceptPolicy="always")
        a.datagramReceived(b"02007Cy", "198.18.0.3")
        a.invite("Cy")
        lan.run(0.8)  # MSG05 arrived, MSG06 sent, the connect is under way
        self.assertEqual(len(lan.sent("198.18.0.1", wire.InviteAck)), 1)
        self.assertEqual(lan.pumps, [])
        a.stop()
        self.assertIn(wire.Goodbye("Ana"), lan.sent("198.18.0.1", wire.Goodbye))
        lan.run(40)
        self.assertEqual(lan.pumps, [])
        self.assertEqual(a.inviters, {})
        a.datagramReceived(b"02007Cy", "198.18.0.3")

    def test_connectingStateHoldsUntilTheConnection(self) -> None:
        lan = FakeLan(connectLatency=1.0)
        ana, cy = BotRecorder(lan.clock, seed=1), BotRecorder(lan.clock, seed=2)
        a = lan.addPeer("Ana", "198.18.0.1", ana, announceTargets=[])
        lan.addPeer("Cy", "198.18.0.3", cy, announceTargets=[], acceptPolicy="always")
        a.datagramReceived(b"02007Cy", "198.18.0.3")
        a.invite("Cy")
        lan.run(1.2)
        self.assertIsNone(a.matchProtocol)
        self.assertTrue(a.busy())
        lan.run(1)
        self.assertIsNotNone(a.matchProtocol)

    def test_newGamePromptShowsTheRightSymbol(self) -> None:
        """The loser of game 1 starts game 2 as X, and the console says so before asking."""
        console, transport = consoleFrontEnd()
        console.opponent = "Ana"
        clock, peer = Clock(), RecordingPeer()
        match = newMatch(peer, clock, peerNick="Ana", observer=console)
        match.awaitStart()
        match.startReceived(1)  # Ana (invitee) starts game 1 as X; we are O
        for theirs, mine in ((1, 4), (2, 5)):
            match.remoteMove(theirs)
            match.localMove(mine)
        transport.clear()
        match.remoteMove(3)  # Ana wins; we start game 2 (our first move waits for the start grace)
        clock.advance(START_GRACE)
        out = transport.value().decode()
        self.assertIn("game 2: you start; you play X", out)
        self.assertIn("your move (X)", out)
        self.assertLess(out.index("you play X"), out.index("your move (X)"))
        self.assertEqual(peer.sent()[-1], wire.NewGame())

    def test_nickWithOuterSpaceRefused(self) -> None:
        for nick in ("Bo ", " Bo"):
            with self.assertRaises(usage.UsageError) as raised:
                Options().parseOptions(["--nick", nick])
            self.assertIn("must not begin or end with a space", str(raised.exception))

    def test_redeclinedInvitationIsReported(self) -> None:
        lan = FakeLan()
        bo = Recorder()
        b = lan.addPeer("Bo", "198.18.0.2", bo, announceTargets=[], acceptPolicy="never")
        b.datagramReceived(b"04008Ana", "198.18.0.1")
        lan.run(10)
        b.datagramReceived(b"04008Ana", "198.18.0.1")
        lan.run(1)
        updates = [e for e in bo.events if e[0] == "invite"]
        self.assertEqual([e[2] for e in updates], ["declined", "redeclined"])

    def test_inviteWithoutNick(self) -> None:
        console, transport = consoleFrontEnd()
        transport.clear()
        console.dataReceived(b"invite\n")
        self.assertIn("usage: invite NICK", transport.value().decode())
