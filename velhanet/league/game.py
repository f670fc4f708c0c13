"""One game of a league, as a worker plays it: ``python -m velhanet.league.game`` with the game on stdin.

The worker's task (``task.py``) starts this in its own process, so that every
game has a fresh reactor and nothing of Twisted lives in Dask's worker. It
serves one room on an in-process velhanet socha server on loopback, plays
it with socha-match's own parts (``velhanet.socha.matchgame.playGame``: the room
prepared with the game's seed, both programs started sandboxed in their
folders, how the game ended judged the same way), and prints, last, one line
``RESULT {json}``; with ``live`` on, ``EVENT {json}`` lines as the game goes
(for the spectators' site of the run).

**A loss on time that the machine caused is not the player's.** At every
move the players' scheduler accounting is read (``/proc/…/schedstat``: the
time their threads ran, and the time they waited, runnable, for a CPU). When
a player loses on time, its last turn is looked at: if it waited for a CPU
for a quarter of that turn or more, and ran for less than three quarters of
it, it got much less than a core while it was ready to use one — the machine
was overloaded — and the result says ``overloaded``: the league plays that
game again instead of counting it. A player that slept or hung past its
time waited for nothing, and loses.
"""

from __future__ import annotations

import json
import secrets
import sys
import time
from pathlib import Path
from typing import Any
from xml.etree.ElementTree import Element

from twisted.internet import task
from twisted.internet.defer import Deferred, ensureDeferred

from velhanet import i18n
from velhanet.cluster.workers import dieWithParent
from velhanet.i18n import _
from velhanet.sandbox.limits import ProgramLimits, SandboxSettings
from velhanet.sandbox.sandbox import Sandbox
from velhanet.sandbox.userns import enterUserNamespace
from velhanet.socha.matchgame import GameSetup, ObservingAdmin, playGame
from velhanet.socha.matchoptions import MatchSettings
from velhanet.socha.protocol import SochaFactory
from velhanet.watching import Score
from velhanet.web.boards import drawPosition

OVERLOAD_WAIT = 0.25
"""Runnable-but-waiting share of the timed-out turn from which the machine, not the player, is to blame."""
OVERLOAD_RUN = 0.75


def fill(template: str, host: str, port: int, reservation: str, seed: int) -> str:
    values = {"{host}": host, "{port}": str(port), "{reservation}": reservation, "{seed}": str(seed)}
    for placeholder, value in values.items():
        template = template.replace(placeholder, value)
    return template


def named(text: str, teams: list[dict[str, Any]]) -> str:
    """socha-match says p1 and p2 (team ONE and TWO here): the league says the players' names."""
    for index, team in enumerate(teams):
        text = text.replace(f"p{index + 1} ", f"{team['name']} ").replace(f"p{index + 1}: ", f"{team['name']}: ")
    return text


def overloaded(turnWall: float, ran: float, waited: float) -> bool:
    """Did a player that timed out get much less than a core while it was ready to run?"""
    return turnWall > 0 and waited >= OVERLOAD_WAIT * turnWall and ran < OVERLOAD_RUN * turnWall


async def playOne(reactor: Any, spec: dict[str, Any], say: Any) -> dict[str, Any]:
    teams = spec["teams"]
    settings = SandboxSettings(spec["sandbox"], ProgramLimits(**spec["limits"]))
    sandbox = Sandbox.forCommand(settings, say=lambda line: say("WARNING", {"text": line}))
    password = secrets.token_hex(8)
    watcherOfRoom = LiveWatcher(say) if spec.get("live") else None
    factory = SochaFactory(reactor, password=password, timeouts=spec["moveTimeout"], showPrepared=True)
    if watcherOfRoom is not None:
        factory.lobby.watcher = watcherOfRoom
    port = reactor.listenTCP(0, factory, interface="127.0.0.1")
    samples: list[list[tuple[float, float, float]]] = [[], []]
    ended: list[float] = []

    class SamplingAdmin(ObservingAdmin):
        def handle(self, message: Element) -> None:
            super().handle(message)
            data = message.find("data") if message.tag == "room" else None
            kind = data.get("class") if data is not None else None
            if kind == "memento":
                sample()
            elif kind == "result":
                ended.append(time.monotonic())
                sample()

    programs: list[Any] = []

    def sample() -> None:
        now = time.monotonic()
        for index, program in enumerate(programs):
            if hasattr(program, "schedule"):
                ran, waited = program.schedule()
                samples[index].append((now, ran, waited))

    def shown(names: tuple[str, str]) -> tuple[str, str]:
        """The room shows the players' names (socha-match's p1, p2 are the teams here), live and in the log."""
        return (teams[int(names[0][1:]) - 1]["name"], teams[int(names[1][1:]) - 1]["name"])

    listening = port.getHost().port
    folders = (Path(teams[0]["folder"]), Path(teams[1]["folder"]))
    setup = GameSetup(
        commandOf=lambda player, reservation, seed: [
            "/bin/sh",
            "-c",
            fill(teams[player]["command"], "127.0.0.1", listening, reservation, seed),
        ],
        folders=folders,
        workingDirectoryOf=lambda player: folders[player],
        newWatcher=lambda names, seed: SamplingAdmin(password, shown(names), spec["moveTimeout"], reactor, seed),
        playing=lambda watcher, players: programs.extend(players),
    )
    played = MatchSettings(
        commands=(teams[0]["command"], teams[1]["command"]),
        folders=folders,
        games=1,
        seed=spec["seed"],
        moveTimeouts=spec["moveTimeout"],
        joinTimeout=spec["joinTimeout"],
        gameTimeout=spec["gameTimeout"],
    )
    began = time.monotonic()
    try:
        result, packets = await playGame(reactor, sandbox, played, ("127.0.0.1", listening), setup, 0, set())
    finally:
        stopped: Deferred[None] = port.stopListening()
        await stopped
    outcome: dict[str, Any] = {
        "winnerTeam": result.winner,
        "void": result.void,
        "lossKind": result.lossKind,
        "reason": named(result.reason, teams),
        "moves": result.moves,
        "seconds": round(time.monotonic() - began, 3),
        "notes": [named(note, teams) for note in result.notes],
        "answerTimes": result.answerTimes,
        "overloaded": "",
        "sandbox": sandbox.describe(),
        "xml": "<protocol>\n" + packets + "\n</protocol>\n" if packets else "",
    }
    if result.lossKind == "time" and result.winner is not None:
        loser = 1 - result.winner
        last = samples[loser][-2:] if ended else []
        if len(last) == 2:
            (start, run0, wait0), (end, run1, wait1) = last
            wall, ran, waited = end - start, run1 - run0, wait1 - wait0
            if overloaded(wall, ran, waited):
                outcome["overloaded"] = _(
                    "{player} lost on time after running {ran:.2f} s and waiting {waited:.2f} s for a CPU in a turn"
                    " of {wall:.2f} s: the machine was overloaded"
                ).format(player=teams[loser]["name"], ran=ran, waited=waited, wall=wall)
    return outcome


BOARD_EVERY = 0.5
"""Seconds between two boards in the live events: each move's text goes at once, a board (SVG) at most so often."""


class LiveWatcher:
    """The room's game, told as ``EVENT`` lines: the run's spectators' site shows it while it is played."""

    def __init__(self, say: Any, clock: Any = time.monotonic) -> None:
        self.say = say
        self.clock = clock

    def started(self, family: str, gameType: str, players: Any, position: Any, hidden: bool = False) -> Any:
        say, clock = self.say, self.clock

        def render() -> str:
            return drawPosition(position())

        say("started", {"family": family, "gameType": gameType, "players": list(players), "board": render()})
        drawn = [clock()]

        class Watched:
            def moved(self, text: str) -> None:
                if clock() - drawn[0] < BOARD_EVERY:
                    say("moved", {"text": text})
                    return
                drawn[0] = clock()
                say("moved", {"text": text, "board": render()})

            def ended(self, result: str, score: Score | None = None) -> None:
                say("ended", {"result": result, "board": render()})

        return Watched()


def main() -> None:
    """Play the game on stdin; the imports are done first, so that a spare process waits ready (``task.py``)."""
    dieWithParent()
    text = sys.stdin.read()
    if not text:  # a spare the worker no longer needs
        return
    spec = json.loads(text)
    i18n.use(spec.get("language"))  # the run's language: the reasons and causes this game records are read in it
    if spec["sandbox"] != "off":
        enterUserNamespace()  # before the reactor starts a thread

    def say(kind: str, payload: dict[str, Any]) -> None:
        print("EVENT " + json.dumps({"event": kind, **payload}), flush=True)

    async def run(reactor: Any) -> None:
        outcome = await playOne(reactor, spec, say)
        print("RESULT " + json.dumps(outcome), flush=True)

    task.react(lambda reactor: ensureDeferred(run(reactor)))


if __name__ == "__main__":
    main()
