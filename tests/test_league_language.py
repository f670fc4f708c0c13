"""``velhanet-league`` and the sandbox in the students' languages.

The standings table of ``velhanet-league standings --language de`` and its
errors, the league's site answering a browser's ``Accept-Language`` (or, with
none, in the command's language), the causes the sandbox gives when a program
breaks a limit, in Portuguese, and the language of a run reaching its games:
carried in each game's spec from the command, never taken from a worker.
"""

from __future__ import annotations

import pickle
import subprocess
from pathlib import Path
from typing import Any

from twisted.internet.address import IPv4Address
from twisted.internet.task import Clock
from twisted.internet.testing import StringTransport
from twisted.trial.unittest import SynchronousTestCase

from tests.languages import environment, speaking
from tests.processes import ENVIRONMENT, PYTHON, ROOT
from tests.test_league_site import scheduledLeague
from velhanet import i18n
from velhanet.cluster.workers import WrongVersion
from velhanet.league.config import League, Player
from velhanet.league.runner import specOf
from velhanet.league.schedule import schedule
from velhanet.league.site import LeagueGames, StandingsCache, leagueSite
from velhanet.league.standings import asText, standingsOf
from velhanet.league.store import Outcome, Store
from velhanet.sandbox import network
from velhanet.sandbox.limits import MIB, ProgramLimits, SandboxSettings
from velhanet.sandbox.monitor import Supervision
from velhanet.sandbox.verdict import CPU, MEMORY, limitCause
from velhanet.web.hub import GameHub

RESULTS = [
    ("ana", "bo", "ana", "", "ana has the larger swarm"),
    ("ana", "bo", "ana", "time", "bo took 2.41 s for a move"),
    ("ana", "bo", None, "", "both swarms are as large"),
    ("ana", "cy", "ana", "rule", "cy sent an illegal move"),
    ("ana", "cy", "cy", "crash", "ana exited with status 1"),
    ("bo", "cy", "bo", "time", "cy took 2.2 s for a move"),
]
"""(a, b, winner, loss kind, reason) of the games played: the first of each pairing's that come, in order."""


def filledLeague(testCase: SynchronousTestCase) -> tuple[League, list[Player]]:
    """Three players, six games finished (a draw, losses on time, by an illegal move, a crash), six to play."""
    league, players, store, games = scheduledLeague(
        testCase, ("ana", "bo", "cy"), 'name = "Klasse A"\npairs = 2\nseed = 3\n'
    )
    left = list(RESULTS)
    for gameId, game in store.pending(games):
        found = next((r for r in left if (r[0], r[1]) == (game.a.name, game.b.name)), None)
        if found is None:
            continue
        left.remove(found)
        _, _, winner, kind, reason = found
        store.finish(gameId, Outcome(winner, False, kind, reason, 30, 4.5, "w"), game.a.name)
    store.close()
    return league, players


def league(command: str, leagueFile: Path, *options: str, env: dict[str, str] | None = None) -> Any:
    """``velhanet-league COMMAND LEAGUE.toml OPTIONS``, done."""
    arguments = [PYTHON, "-m", "velhanet.league.cli", command, str(leagueFile), *options]
    return subprocess.run(
        arguments, cwd=ROOT, env=env or ENVIRONMENT, capture_output=True, text=True, timeout=120, check=False
    )


class StandingsCommandTests(SynchronousTestCase):
    def test_theStandingsInGerman(self) -> None:
        leagueFile = filledLeague(self)[0].path
        done = league("standings", leagueFile, "--language", "de")
        self.assertEqual(done.returncode, 0, done.stderr)
        header = done.stdout.splitlines()[0].split()
        self.assertEqual(header[:3], ["#", "Spieler", "Version"])
        self.assertEqual(header[-3:], ["Niederlagen", "nach", "Ursache"])
        self.assertIn("Quote", header)
        self.assertIn("direkter Vergleich (Quote der Zeile gegen die Spalte", done.stdout)
        self.assertIn("6 Spiele gewertet, 6 noch zu spielen, 0 ungültig", done.stdout)
        bo = next(line for line in done.stdout.splitlines() if line.split()[1:2] == ["bo"])
        self.assertTrue(bo.rstrip().endswith("1 Spielfeld, 1 Zeit"), bo)  # its causes, in German words
        self.assertNotIn("games counted", done.stdout)

    def test_theLocaleAndTheSameTableInEnglish(self) -> None:
        """The environment's language when no ``--language`` is given; English is the league's own words."""
        leagueFile = filledLeague(self)[0].path
        spanish = league("standings", leagueFile, env={**environment("es"), "PYTHONPATH": str(ROOT)})
        self.assertIn("6 partidas contadas, 6 por jugar, nulas: 0", spanish.stdout)
        english = league("standings", leagueFile, "--language", "en")
        self.assertIn("losses by cause", english.stdout)
        self.assertIn("6 games counted, 6 still to play, 0 void", english.stdout)

    def test_aLeagueFileErrorInGerman(self) -> None:
        root = Path(self.mktemp()).resolve()
        root.mkdir()
        (root / "league.toml").write_text("format = 'swiss'\n")
        done = league("standings", root / "league.toml", "--language", "de")
        self.assertEqual(done.returncode, 1)
        self.assertEqual(
            done.stderr,
            "velhanet-league: format muss eines von round-robin, gauntlet, sprt sein, nicht 'swiss'\n",
        )

    def test_aTableInTheLanguageAskedForWhateverTheProcessSpeaks(self) -> None:
        league, players = filledLeague(self)
        speaking(self, "de")
        store = Store(league.databasePath)
        self.addCleanup(store.close)
        portuguese = asText(standingsOf(store, players), i18n.language("pt"))
        self.assertIn("derrotas por causa", portuguese)
        self.assertIn("6 partidas contadas, 6 ainda por jogar, anuladas: 0", portuguese)


class SitePageTests(SynchronousTestCase):
    """The standings page in the browser's language, else the command's."""

    def setUp(self) -> None:
        league, players = filledLeague(self)
        clock = Clock()
        hub = GameHub(clock, keepFinished=0)
        games = LeagueGames(hub, league.logs)
        self.site = leagueSite(hub, league, StandingsCache(league, players), games, running=True)
        self.site.timeOut = None
        self.site.reactor = clock

    def get(self, path: str, acceptLanguage: str | None = None) -> tuple[dict[str, str], str]:
        channel: Any = self.site.buildProtocol(IPv4Address("TCP", "127.0.0.1", 40000))
        transport = StringTransport(peerAddress=IPv4Address("TCP", "127.0.0.1", 40000))
        channel.makeConnection(transport)
        asked = f"Accept-Language: {acceptLanguage}\r\n" if acceptLanguage else ""
        channel.dataReceived(f"GET {path} HTTP/1.1\r\nHost: localhost\r\n{asked}\r\n".encode())
        head, _, body = transport.value().partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        self.assertIn(" 200 ", lines[0])
        return dict(line.lower().split(": ", 1) for line in lines[1:]), body.decode("utf-8")

    def test_theStandingsForABrowserThatAsksForGerman(self) -> None:
        headers, page = self.get("/", "de-DE,de;q=0.9,en;q=0.8")
        self.assertIn('<html lang="de">', page)
        self.assertIn("<title>Klasse A: Tabelle</title>", page)
        self.assertIn("<th>Spieler</th>", page)
        self.assertIn("<th>Niederlagen nach Ursache</th>", page)
        self.assertIn("6 Spiele gewertet, 6 noch zu spielen, 0 ungültig", page)
        self.assertIn("lädt alle 5 s neu, solange die Liga läuft", page)
        self.assertIn("auf dem Spielfeld 1", page)
        self.assertIn("<h2>Direkter Vergleich</h2>", page)
        self.assertNotIn("games counted", page)
        self.assertEqual((headers["content-language"], headers["vary"]), ("de", "accept-language"))  # lowered by get()

    def test_theGamesForABrowserThatAsksForSpanish(self) -> None:
        _, page = self.get("/games?player=bo", "es-ES,es;q=0.9")
        self.assertIn('<html lang="es">', page)
        self.assertIn("Klasse A: las partidas de bo", page)
        self.assertIn("<td>tablas</td>", page)
        self.assertIn("<td>ana ganó</td>", page)
        self.assertIn("bo: tiempo", page)
        self.assertIn("bo took 2.41 s for a move", page)  # the reason as the run recorded it

    def test_withoutAcceptLanguageTheCommandsLanguage(self) -> None:
        speaking(self, "pt")
        _, page = self.get("/")
        self.assertIn('<html lang="pt-BR">', page)
        self.assertIn("Klasse A: classificação", page)
        _, page = self.get("/", "fr-FR,fr;q=0.9")  # a language velhanet does not speak: the command's
        self.assertIn("derrotas por causa", page)
        speaking(self, "en")
        _, page = self.get("/")
        self.assertIn('<html lang="en">', page)
        self.assertIn("<th>losses by cause</th>", page)


class VerdictTests(SynchronousTestCase):
    """What a student reads when the sandbox stopped the program, in Portuguese."""

    limits = ProgramLimits(memory=256 * MIB, cpu=5, processes=32, disk=16 * MIB, output=64 * 1024)

    def test_theCausesInPortuguese(self) -> None:
        speaking(self, "pt")
        supervision = Supervision(self.limits, None, [])
        supervision.pid = 1
        verdict = supervision.verdict(128 + 24)  # SIGXCPU: what setrlimit sends past the CPU limit
        self.assertEqual(verdict.limit, CPU)
        self.assertEqual(verdict.cause, "interrompido: 5 s de CPU usados")
        self.assertEqual(limitCause(MEMORY, self.limits), "interrompido: limite de memória de 256 MiB excedido")
        outOfMemory = Supervision(self.limits, None, []).verdict(1, tail=b"MemoryError\n")
        self.assertEqual(outOfMemory.cause, "limite de memória de 256 MiB atingido: uma alocação foi recusada")
        left = Supervision(self.limits, None, []).verdict(0, leftovers=1, outputCut=64 * 1024)
        self.assertEqual(
            left.summary(), "saída cortada em 64 KiB; deixou 1 processo rodando depois de terminar (encerrado)"
        )

    def test_aForbiddenAddressInPortuguese(self) -> None:
        speaking(self, "pt")
        attempt = network.Forbidden("tcp", "198.18.0.9", 80)
        supervision = Supervision(self.limits, None, [])
        supervision.forbidden.append(attempt.cause())
        supervision.breaks("network", attempt.cause())
        verdict = supervision.verdict(None)
        self.assertEqual(
            verdict.cause, "interrompido: conexão a 198.18.0.9:80 recusada: só o servidor da partida é acessível"
        )
        self.assertEqual(verdict.notes(), [])  # the address is in the cause, not said twice


class RunLanguageTests(SynchronousTestCase):
    """A game's texts are in the language of the command that started the run, not in a worker's."""

    def test_theSpecCarriesTheCommandsLanguage(self) -> None:
        league, players = filledLeague(self)
        speaking(self, "de")
        spec = specOf(league, schedule(league, players)[0], SandboxSettings("off"), live=False)
        self.assertEqual(spec["language"], "de")

    def test_aWorkerOfAnotherVersionIsNamedInTheCommandsLanguage(self) -> None:
        """The worker raises the facts; the command, reading them, says them in its own language."""
        raised = pickle.loads(pickle.dumps(WrongVersion("tcp://198.18.0.2:40002", "0.0.9+0123456789", "0.1.0+abc")))
        speaking(self, "de")
        self.assertEqual(
            str(raised), "der Worker unter tcp://198.18.0.2:40002 hat velhanet 0.0.9+0123456789, der Lauf 0.1.0+abc"
        )
