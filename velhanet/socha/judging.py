"""How a game of ``socha-match`` (and of a league) ended: a pure function of what was observed.

The observer of the room (``matchgame.ObservingAdmin``) sees the mementos and
their times, the result and its reason, the rule errors, how many players
joined; the sandbox says how each program ended (its status, whether
velhanet stopped it, the limit it broke). L{judge} turns these into a
L{GameResult}, one cause after the other, the first that applies deciding:

1. a limit broken by one program: it loses (``limit``); by both: void;
2. a program that exited before the game ended (``crash``); both: void;
3. a regular result: the server's winner (or a draw);
4. the match was being interrupted: ``cancelled`` (not a game);
5. a game that never began: the one that did not join loses (``no-join``), else void;
6. no result (or a crash besides): void;
7. an irregular result: a rule broken (``rule``), a connection closed mid-game
   (``crash``), a loss on time (``time``), anything else (``irregular``);
8. cancelled by velhanet at the game deadline: the player to move loses (``deadline``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from xml.etree.ElementTree import Element

from velhanet.i18n import _
from velhanet.sandbox.verdict import Verdict
from velhanet.socha.adminprotocol import TEAMS
from velhanet.socha.matchstats import GameResult, otherTeam, sides
from velhanet.socha.wire import LEFT_THE_GAME


@dataclass(frozen=True)
class Observation:
    """What the room's observer saw of one game."""

    moments: tuple[float, ...] = ()
    """When each memento came (the first is the start position)."""
    startTeam: str = "ONE"
    position: str = ""
    result: Element | None = None
    errors: tuple[str, ...] = ()
    joined: int = 0
    """Players in the room when it was last told (a game that never began)."""

    @property
    def started(self) -> bool:
        return bool(self.moments)

    def teamToMove(self) -> str:
        """The team whose move is awaited after the mementos seen."""
        start = self.startTeam if self.startTeam in TEAMS else "ONE"
        return start if (len(self.moments) - 1) % 2 == 0 else otherTeam(start)


@dataclass(frozen=True)
class ProgramEnd:
    """How one player's program ended."""

    status: int | None
    stoppedByVelhanet: bool = False
    verdict: Verdict | None = None


@dataclass(frozen=True)
class Deadlines:
    """The limits the game was played under, as the reasons name them."""

    joinTimeout: float
    gameTimeout: float


@dataclass(frozen=True)
class Ending:
    """What happened around the room: programs that exited without a result, the move a limit was broken at."""

    crashed: tuple[int, ...] = ()
    brokeAt: dict[int, int] = field(default_factory=dict)
    interrupted: bool = False


def judge(
    game: int, seen: Observation, programs: Sequence[ProgramEnd], ending: Ending, limits: Deadlines
) -> GameResult:
    """Game ``game``'s result (players 0 and 1, sides as ``sides`` gives them) from what was seen."""
    order = sides(game)
    result = GameResult(game, order[0], moves=max(len(seen.moments) - 1, 0), position=seen.position)
    for turn in range(1, len(seen.moments)):
        mover = order[TEAMS.index(seen.startTeam if turn % 2 == 1 else otherTeam(seen.startTeam))]
        result.answerTimes[mover].append(seen.moments[turn] - seen.moments[turn - 1])
    verdicts = [program.verdict for program in programs]
    for player, verdict in enumerate(verdicts):
        if verdict is not None:
            result.notes += [f"p{player + 1}: {note}" for note in verdict.notes()]
    broke = [(player, verdict.cause) for player, verdict in enumerate(verdicts) if verdict and verdict.brokeALimit]
    if len(broke) == 1:
        ((loser, cause),) = broke
        result.winner, result.lossKind = 1 - loser, "limit"
        result.reason = _("p{player} {cause} (move {move})").format(
            player=loser + 1, cause=cause, move=ending.brokeAt.get(loser, result.moves)
        )
        return result
    if len(broke) == 2:
        result.void, result.lossKind = True, "void"
        causes = "; ".join(f"p{p + 1} {cause}" for p, cause in broke)
        result.reason = _("both players broke a limit: {causes}").format(causes=causes)
        return result
    crashed = set(ending.crashed)
    if len(crashed) == 1:
        loser = ending.crashed[0]
        result.winner, result.lossKind = 1 - loser, "crash"
        result.reason = _("p{player} exited with status {status} before the game ended").format(
            player=loser + 1, status=programs[loser].status
        )
        return result
    if len(crashed) == 2:
        result.void, result.lossKind = True, "void"
        result.reason = _("both players exited before the game ended (status {first} and {second})").format(
            first=programs[0].status, second=programs[1].status
        )
        return result
    winner = seen.result.find("winner") if seen.result is not None else None
    reason = " ".join((winner.get("reason", "") if winner is not None else "").split())
    team = winner.get("team") if winner is not None else None
    result.reason = reason
    if winner is not None and winner.get("regular", "true") == "true":
        result.winner = order[TEAMS.index(team)] if team in TEAMS else None
        return result
    if ending.interrupted:
        result.void, result.lossKind = True, "cancelled"
    elif not seen.started:  # a waiting room's cancel has no result, only <left/>
        # A player that had joined left with the room; one still running then never joined.
        stuck = [player for player in (0, 1) if programs[player].stoppedByVelhanet]
        if seen.joined == 1 and len(stuck) == 1:
            result.winner, result.lossKind = 1 - stuck[0], "no-join"
            result.reason = _("p{player} did not join within {seconds:g} s").format(
                player=stuck[0] + 1, seconds=limits.joinTimeout
            )
        else:
            result.void, result.lossKind, result.reason = True, "no-join", _("no player joined in time")
    elif ending.crashed or seen.result is None:
        result.void, result.lossKind, result.reason = True, "void", reason or _("no result")
    elif team in TEAMS:
        result.winner = order[TEAMS.index(team)]
        if seen.errors:
            result.lossKind, result.reason = "rule", seen.errors[-1]
        elif reason.endswith(LEFT_THE_GAME):  # it closed its connection in mid-game: crashed, to its author
            result.lossKind = "crash"
            result.reason = _("p{player} closed its connection before the game ended ({reason})").format(
                player=1 - result.winner + 1, reason=reason
            )
        else:
            lowered = reason.lower()
            result.lossKind = "time" if any(w in lowered for w in ("zeit", "time", "sekunden")) else "irregular"
    else:  # cancelled by us at the game deadline: the player to move loses
        loser = order[TEAMS.index(seen.teamToMove())]
        result.winner, result.lossKind = 1 - loser, "deadline"
        result.reason = _("p{player} did not move within the game deadline ({seconds:g} s)").format(
            player=loser + 1, seconds=limits.gameTimeout
        )
    return result
