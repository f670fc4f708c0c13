"""A repeatable abuse campaign against real velhanet servers on loopback.

    python -m benchmarks.abuse [--only gambit,socha,gobang,velha] [--quick] [--out FILE]

docs/security.md promises that "the one who misbehaves pays, and nobody
else does". The unit tests (tests/test_*_abuse.py) check each limit in
memory; this script checks the promise end to end: every service gets a
fresh ``twistd -n`` process, each attack runs against it for a bounded
count and time while an honest canary game plays on the same server, and
one table row says whether the server stayed up, whether the canary was
disturbed, and whether memory and file descriptors came back once the
attacker left. Attacks of one service share their server, so growth would
accumulate and show.

``--quick`` divides the bulk counts (connections, bytes, cycles, datagrams)
and the attack durations by 10; counts that cross a limit (70 DRAWs against
a relay window of 16, 51 Kill words) stay. Exit status 0 when every attack
held.

Choices the attacks depend on:

- Attackers connect from 127.0.0.1 (JogoVelha: 127.0.0.66), canaries and
  victims from other loopback addresses (127.0.0.10, .30, …), so that a limit
  per address that an attacker uses up is the attacker's alone.
- Socha churners join ``velhanet_tictactoe`` rooms: a churner in a Piranhas
  room would be paired with the canary by ``<join/>`` (the protocol's "first
  open room"), which says nothing about the server.
- Gobang canary clients run with ``--bot-delay 0.05`` (a game takes 5 s, not
  18 s); JogoVelha peers with ``--start-grace 0.3`` (a best-of-5 between two
  perfect bots is five draws, and the default 8 s grace after each makes a
  match last 36 s).
- Servers log with ``-l -`` into a file of ours: twistd's own log file
  rotates every 1 MB, and a flood logs more than that.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.abuse_clients import (
    CLOSED,
    PROBE,
    SENT,
    STALLED,
    Canary,
    CanaryResult,
    CanaryThread,
    GambitCanary,
    GambitLink,
    GobangCanary,
    RawClient,
    ServerProcess,
    SochaCanary,
    SochaLink,
    VelhaCanary,
    freePort,
    waitForTcp,
    waitUntil,
)
from velhanet.gobang import fifo
from velhanet.gobang.wire import ClientOp, ClientWord, byteOrder, encodeClient

MB = 1024 * 1024
RSS_RULE = "RSS after ≤ before + max(10 % of before, 5 MB)"
HELD_RULE = (
    f"An attack held when the server stayed up, the canary was not disturbed, {RSS_RULE}, fds after = before ± 2."
)


def progress(text: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


@dataclass
class Outcome:
    """What one attack did and saw; ``disturbed`` and ``failures`` make it fail."""

    tried: str
    disturbed: list[str] = field(default_factory=list)
    """Honest parties other than the canary that the attack reached (a victim game, Bo's inviter, …)."""
    failures: list[str] = field(default_factory=list)
    """Promises of docs/security.md the server broke (e.g. a crash input left unanswered)."""
    notes: list[str] = field(default_factory=list)


@dataclass
class Row:
    service: str
    attack: str
    outcome: Outcome
    serverUp: bool
    canary: CanaryResult
    baseline: float
    rssBefore: float
    rssAfter: float | None
    fdsBefore: int
    fdsAfter: int | None

    def disturbances(self) -> list[str]:
        return self.canary.problems + self.outcome.disturbed

    def memoryHeld(self) -> bool:
        return self.rssAfter is not None and self.rssAfter <= self.rssBefore + max(0.1 * self.rssBefore, 5.0)

    def fdsHeld(self) -> bool:
        return self.fdsAfter is not None and abs(self.fdsAfter - self.fdsBefore) <= 2

    def held(self) -> bool:
        return (
            self.serverUp
            and not self.disturbances()
            and not self.outcome.failures
            and self.memoryHeld()
            and self.fdsHeld()
        )

    def cells(self) -> list[str]:
        problems = self.disturbances()
        disturbed = "no" if not problems else "yes (" + "; ".join(shorten(p, 70) for p in problems) + ")"
        latencies = self.canary.latencies
        extra = f"{(max(latencies) - self.baseline) * 1000:+.1f} ms" if latencies else "n/a"
        after = "—" if self.rssAfter is None else f"{self.rssAfter:.1f}"
        fdsAfter = "—" if self.fdsAfter is None else str(self.fdsAfter)
        return [
            self.service,
            self.attack,
            self.outcome.tried,
            "yes" if self.serverUp else "**no**",
            disturbed if not problems else f"**{disturbed}**",
            extra,
            f"{self.rssBefore:.1f} → {after}",
            f"{self.fdsBefore} → {fdsAfter}",
        ]


def shorten(text: str, length: int) -> str:
    return text if len(text) <= length else text[: length - 1] + "…"


def renderTable(rows: list[Row], summaries: list[str]) -> str:
    header = [
        "service",
        "attack",
        "inputs tried",
        "server up",
        "other games disturbed",
        "worst extra latency",
        "RSS before → after (MB)",
        "fds before → after",
    ]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row.cells()) + " |" for row in rows]
    lines += ["", HELD_RULE, ""]
    lines += ["Notes:", ""]
    for row in rows:
        verdict = "held" if row.held() else "DID NOT HOLD"
        notes = [*row.outcome.notes, *(f"FAILURE: {failure}" for failure in row.outcome.failures)]
        notes += [f"DISTURBED: {problem}" for problem in row.disturbances() if len(problem) > 70]
        if not row.memoryHeld():
            notes.append("FAILURE: memory did not come back")
        if not row.fdsHeld():
            notes.append("FAILURE: file descriptors did not come back")
        lines.append(f"- {row.attack} ({verdict}): " + ("; ".join(notes) or "—"))
    lines += ["", *summaries]
    crashes = sum(not row.serverUp for row in rows)
    lines += ["", f"{len(rows)} attacks, {sum(row.held() for row in rows)} held, {crashes} crashes"]
    return "\n".join(lines)


# -- the driver ------------------------------------------------------------------------------------


class Campaign:
    """One service: its servers, its canary, its attacks (methods named ``attackG1`` …)."""

    service = ""
    attacks: list[tuple[str, str, str]] = []
    """(code, title, key of the server it runs against)."""
    latencyNote = ""

    def __init__(self, workDir: Path, scale: float) -> None:
        self.workDir, self.scale = workDir, scale
        self.servers: dict[str, ServerProcess] = {}
        self.currentCanary: Canary | None = None

    def scaled(self, count: float) -> int:
        return max(1, int(count * self.scale))

    async def start(self) -> None:
        for key in self.servers:
            await self.startServer(key)

    async def startServer(self, key: str) -> None:
        raise NotImplementedError

    def stop(self) -> None:
        for server in self.servers.values():
            server.stop()

    def canary(self, key: str, code: str | None) -> Canary:
        raise NotImplementedError

    async def serverUp(self, key: str) -> bool:
        raise NotImplementedError

    async def attack(self, code: str) -> Outcome:
        method: Callable[[], Awaitable[Outcome]] = getattr(self, f"attack{code}")
        return await method()


async def canaryAlone(campaign: Campaign, key: str, seconds: float) -> CanaryResult:
    thread = CanaryThread(campaign.canary(key, None))
    thread.start()
    await thread.untilStarted()
    await asyncio.sleep(seconds)
    return await thread.finish()


async def runAttack(campaign: Campaign, code: str, title: str, key: str, baseline: float) -> Row:
    progress(f"{campaign.service} {code}: {title}")
    server = campaign.servers[key]
    notes = []
    if not server.alive():
        await campaign.startServer(key)
        notes.append("run on a fresh server: the previous one had stopped")
    rssBefore, fdsBefore = server.measure()
    thread = CanaryThread(campaign.canary(key, code))
    thread.start()
    if not await thread.untilStarted(30):
        notes.append("the canary game had not started after 30 s")
    try:
        outcome = await asyncio.wait_for(campaign.attack(code), 120)
    except Exception as error:
        outcome = Outcome(f"error: {type(error).__name__}: {error}")
        outcome.failures.append(f"the attack itself failed: {error!r}")
    result = await thread.finish(90)
    up = server.alive() and await campaign.serverUp(key)
    await asyncio.sleep(2)  # the attackers have left: let the server notice every close
    rssAfter, fdsAfter = server.measure() if server.alive() else (None, None)
    if not server.alive():
        outcome.notes.append(f"server exit status {server.process.returncode if server.process else '?'}")
    outcome.notes[:0] = notes
    row = Row(
        campaign.service, f"{code} {title}", outcome, up, result, baseline, rssBefore, rssAfter, fdsBefore, fdsAfter
    )
    progress(f"  -> {'held' if row.held() else 'DID NOT HOLD'}: " + " | ".join(row.cells()[2:]))
    return row


async def runCampaign(campaign: Campaign) -> tuple[list[Row], list[str]]:
    rows: list[Row] = []
    summaries = []
    try:
        progress(f"{campaign.service}: starting {', '.join(campaign.servers)} server(s)")
        await campaign.start()
        baselines = {}
        for key, server in campaign.servers.items():
            warm = await canaryAlone(campaign, key, 3.0)  # the warm-up game
            base = await canaryAlone(campaign, key, 3.0)
            problems = warm.problems + base.problems
            if problems or not base.latencies:
                raise RuntimeError(f"the canary does not play even without attack: {problems}")
            baselines[key] = statistics.median(base.latencies)
            rss, fds = server.measure()
            summaries.append(
                f"{campaign.service} ({key} server): baseline median {baselines[key] * 1000:.1f} ms "
                f"over {len(base.latencies)} samples{campaign.latencyNote}; after warm-up RSS {rss:.1f} MB, {fds} fds"
            )
        for code, title, key in campaign.attacks:
            rows.append(await runAttack(campaign, code, title, key, baselines[key]))
        for key, server in campaign.servers.items():
            if server.alive():
                rss, fds = server.measure()
                summaries.append(f"{campaign.service} ({key} server) at the end: RSS {rss:.1f} MB, {fds} fds")
    finally:
        campaign.stop()
    return rows, summaries


# -- building blocks of attacks --------------------------------------------------------------------


async def sendUntilClosed(
    client: RawClient, chunks: Callable[[], bytes], limit: int, deadline: float
) -> tuple[int, str]:
    """Write chunks until ``limit`` bytes, the deadline, or the server closes or stops reading."""
    sent, state = 0, SENT
    while sent < limit and time.monotonic() < deadline:
        chunk = chunks()
        state = await client.send(chunk, timeout=min(5.0, max(0.1, deadline - time.monotonic())))
        if state != SENT:
            break
        sent += len(chunk)
    return sent, state


async def inParallel(workers: int, job: Callable[[int], Awaitable[None]]) -> None:
    await asyncio.gather(*(job(worker) for worker in range(workers)))


def connections(count: int) -> str:
    return f"{count} connection{'s' if count != 1 else ''}"


def mib(count: int) -> str:
    return f"{count / MB:.1f} MiB"


# -- Gambit ----------------------------------------------------------------------------------------


class GambitCampaign(Campaign):
    service = "gambit"
    attacks = [
        ("G1", "64 KiB of '{'", "default"),
        ("G2", "lone surrogate in JOIN", "default"),
        ("G3", "DRAW flood", "default"),
        ("G4", "MOVE flood without validation", "no-validate"),
        ("G5", "game id scan", "default"),
        ("G6", "crash inputs", "default"),
        ("G7", "random bytes", "default"),
        ("G8", "connection churn", "default"),
        ("G9", "reader that never reads", "default"),
    ]
    latencyNote = " (latency: MOVE write → opponent's read)"

    def __init__(self, workDir: Path, scale: float) -> None:
        super().__init__(workDir, scale)
        self.ports = {"default": freePort(), "no-validate": freePort()}
        for key, port in self.ports.items():
            arguments = ["gambit-server", "--listen", f"tcp:{port}:interface=127.0.0.1"]
            arguments += ["--no-validate"] if key == "no-validate" else []
            self.servers[key] = ServerProcess(f"gambit-{key}", arguments, workDir / f"gambit-{key}.log")

    async def startServer(self, key: str) -> None:
        self.servers[key].start()
        if not await waitForTcp(self.ports[key]):
            raise RuntimeError(f"gambit server ({key}) did not start")

    def canary(self, key: str, code: str | None) -> Canary:
        self.currentCanary = GambitCanary(self.ports[key])
        return self.currentCanary

    async def serverUp(self, key: str) -> bool:
        try:
            link = await GambitLink.open(self.ports[key], "127.0.0.20")
            try:
                await link.send(2, "upcheck")
                return (await link.receive(3.0)).get("cmd") == 1
            finally:
                link.close()
        except (OSError, TimeoutError):
            return False

    @property
    def port(self) -> int:
        return self.ports["default"]

    async def createdGame(self, port: int, name: str, source: str) -> tuple[GambitLink, str]:
        link = await GambitLink.open(port, source)
        await link.send(2, name)
        return link, str((await link.receive(5.0))["args"])

    async def attackG1(self) -> Outcome:
        count, closed, answered, total = self.scaled(40), 0, 0, 0

        async def flood(_: int) -> None:
            nonlocal closed, answered, total
            client = await RawClient.connect(self.port)
            try:
                sent, state = await sendUntilClosed(client, lambda: b"{" * 65536, MB, time.monotonic() + 25)
                total += sent
                data, ended = await client.receiveAll(1.0)
                closed += state == CLOSED or ended
                answered += b"4096" in data
            finally:
                client.close()

        await inParallel(count, flood)
        return Outcome(
            f"{connections(count)}, {mib(total)} of '{{'",
            notes=[f"{closed}/{count} closed by the server ({answered} read its ERROR before the reset)"],
        )

    async def attackG2(self) -> Outcome:
        white, gameId = await self.createdGame(self.port, "victim", "127.0.0.30")
        attacker = await GambitLink.open(self.port, "127.0.0.1")
        black = await GambitLink.open(self.port, "127.0.0.30")
        outcome = Outcome('1 JOIN with user "\\ud800"')
        try:
            await attacker.sendRaw(b'{"cmd":3,"user":"\\ud800","args":"' + gameId.encode() + b'"}')
            answer = await attacker.receive(5.0)
            outcome.notes.append(f"attacker got cmd {answer['cmd']}: {answer['args']!r}")
            await black.send(3, "honest", gameId)
            try:
                joined, told = await black.receive(5.0), await white.receive(5.0)
                if (joined["cmd"], joined["args"], told["cmd"], told["args"]) != (1, "victim", 1, "honest"):
                    outcome.disturbed.append(f"honest JOIN answered {joined}, White told {told}")
            except (TimeoutError, ConnectionError) as error:
                outcome.disturbed.append(f"honest Black's JOIN: {error}")
        finally:
            for link in (white, attacker, black):
                link.close()
        return outcome

    async def floodOpponent(self, key: str, message: dict[str, object], count: int = 70) -> Outcome:
        """The honest side creates and reads slowly; its opponent sends ``count`` messages in one write."""
        port = self.ports[key]
        honest, gameId = await self.createdGame(port, "patient", "127.0.0.30")
        flooder = await GambitLink.open(port, "127.0.0.31")
        outcome = Outcome(f"{count} × cmd {message['cmd']} in one write")
        try:
            await flooder.send(3, "flooder", gameId)
            await flooder.receive(5.0)
            await honest.receive(5.0)
            await flooder.sendRaw(json.dumps(message).encode() * count)
            await asyncio.sleep(2.0)  # the honest side is slow to read
            received: list[dict[str, object]] = []
            try:
                while not received or received[-1]["cmd"] != 5:
                    received.append(await honest.receive(5.0))
                    await asyncio.sleep(0.02)
            except TimeoutError:
                outcome.notes.append("no END: the game went on")
            except ConnectionError:
                outcome.disturbed.append(f"the honest side was disconnected after {len(received)} messages")
            flooderClosed = False
            try:
                while True:
                    await flooder.receive(3.0)
            except ConnectionError:
                flooderClosed = True
            except TimeoutError:
                pass
            relayed = sum(m["cmd"] == message["cmd"] for m in received)
            last = received[-1]["args"] if received else None
            outcome.notes.append(f"honest side got {relayed} relayed, then {last!r}; flooder closed: {flooderClosed}")
            if not outcome.disturbed and received and received[-1]["cmd"] == 5:
                await honest.send(2, "patient-again")  # the game is over: still connected and served?
                if (await honest.receive(5.0))["cmd"] != 1:
                    outcome.disturbed.append("the honest side is no longer served after the END")
            elif not outcome.disturbed:
                await honest.send(4, "patient", "e2e4")  # the game goes on: White may still move
                try:
                    answer = await honest.receive(1.0)
                    if answer["cmd"] == 0:
                        outcome.disturbed.append(f"the honest side's move was refused: {answer['args']}")
                except TimeoutError:
                    pass  # a relayed move is not answered
        finally:
            honest.close()
            flooder.close()
        return outcome

    async def attackG3(self) -> Outcome:
        return await self.floodOpponent("default", {"cmd": 6, "user": "x", "args": ""})

    async def attackG4(self) -> Outcome:
        return await self.floodOpponent("no-validate", {"cmd": 4, "user": "x", "args": "a1a2"})

    async def attackG5(self) -> Outcome:
        """Scan all 4-hex ids; the waiting game's id is 100th, so a scan that is not slowed down finds it."""
        victim, gameId = await self.createdGame(self.port, "waiting", "127.0.0.30")
        ids = [f"{number:04x}" for number in range(0x10000) if f"{number:04x}" != gameId]
        random.Random(5).shuffle(ids)
        ids.insert(99, gameId)
        counts = {"sent": 0, "looked up": 0, "told to wait": 0, "connections": 0}
        found: list[str] = []
        began = time.monotonic()
        deadline = began + 20 * self.scale

        async def scanner(_: int) -> None:
            while time.monotonic() < deadline and counts["sent"] < len(ids):
                link = await GambitLink.open(self.port, "127.0.0.1")
                counts["connections"] += 1
                try:
                    while time.monotonic() < deadline and counts["sent"] < len(ids):
                        candidate = ids[counts["sent"]]
                        counts["sent"] += 1
                        await link.send(3, "eve", candidate)
                        answer = await link.receive(5.0)
                        if answer["cmd"] == 1:
                            found.append(candidate)
                        else:
                            counts["told to wait" if "espera" in str(answer["args"]) else "looked up"] += 1
                except (ConnectionError, TimeoutError):
                    pass
                finally:
                    link.close()

        try:
            await inParallel(64, scanner)
            outcome = Outcome(f"{counts['sent']} JOINs in {time.monotonic() - began:.0f} s")
            outcome.notes.append(", ".join(f"{value} {name}" for name, value in counts.items()))
            if found:
                outcome.disturbed.append(f"the scan found the waiting game {found}")
            black = await GambitLink.open(self.port, "127.0.0.31")  # the game still waits for its real opponent
            try:
                await black.send(3, "friend", gameId)
                if (await black.receive(5.0))["cmd"] != 1:
                    outcome.disturbed.append("the waiting game's real opponent could not join")
            finally:
                black.close()
        finally:
            victim.close()
        return outcome

    async def attackG6(self) -> Outcome:
        inputs = {
            "999 levels of nesting": b'{"cmd":2,"user":' + b"[" * 999 + b"]" * 999 + b"}",
            "a 4,300-digit cmd": b'{"cmd":' + b"9" * 4300 + b"}",
            "a surrogate in CREATE user": b'{"cmd":2,"user":"\\ud800"}',
        }
        outcome = Outcome(f"{len(inputs) + 1} inputs")
        for name, data in inputs.items():
            link = await GambitLink.open(self.port, "127.0.0.40")
            try:
                await link.sendRaw(data)
                answer = await link.receive(5.0)
                outcome.notes.append(f"{name}: cmd {answer['cmd']} {str(answer['args'])[:60]!r}")
                if answer["cmd"] != 0:
                    outcome.failures.append(f"{name} answered with cmd {answer['cmd']}, not ERROR")
            except (TimeoutError, ConnectionError) as error:
                outcome.failures.append(f"{name} unanswered: {error}")
            finally:
                link.close()
        answered = len(inputs) - len(outcome.failures)
        outcome.notes.insert(0, f"{answered}/{len(inputs)} inputs outside a game answered with ERROR")
        white, gameId = await self.createdGame(self.port, "w", "127.0.0.40")
        black = await GambitLink.open(self.port, "127.0.0.41")
        try:
            await black.send(3, "b", gameId)
            await black.receive(5.0), await white.receive(5.0)
            await black.sendRaw(b'{"cmd":5,"user":"b","args":"\\udfff"}')
            answer = await black.receive(5.0)
            outcome.notes.append(f"END with \\udfff: cmd {answer['cmd']} {str(answer['args'])[:60]!r}")
            if answer["cmd"] != 0:
                outcome.failures.append("END with \\udfff was not answered with ERROR")
            await white.send(4, "w", "e2e4")
            if (await black.receive(5.0))["args"] != "e2e4":
                outcome.failures.append("the game did not go on after END with \\udfff")
        except (TimeoutError, ConnectionError) as error:
            outcome.failures.append(f"END with \\udfff unanswered or game broken: {error}")
        finally:
            white.close()
            black.close()
        return outcome

    async def attackG7(self) -> Outcome:
        count, total, closed = self.scaled(20), 0, 0
        rng = random.Random(7)

        async def noise(_: int) -> None:
            nonlocal total, closed
            client = await RawClient.connect(self.port)
            try:
                sent, state = await sendUntilClosed(
                    client, lambda: os.urandom(rng.randint(1, 16384)), 256 * 1024, time.monotonic() + 25
                )
                total += sent
                ended = (await client.receiveAll(0.5))[1]
                closed += state == CLOSED or ended
            finally:
                client.close()

        await inParallel(count, noise)
        return Outcome(f"{connections(count)}, {mib(total)} random", notes=[f"{closed}/{count} closed by the server"])

    async def attackG8(self) -> Outcome:
        cycles, done, failed = self.scaled(3000), 0, 0
        create = json.dumps({"cmd": 2, "user": "churn", "args": ""}).encode()

        async def churn(_: int) -> None:
            nonlocal done, failed
            while done + failed < cycles:
                done += 1
                try:
                    client = await RawClient.connect(self.port)
                except OSError:
                    done, failed = done - 1, failed + 1
                    continue
                await client.send(create, timeout=2.0)
                client.close()

        await inParallel(8, churn)
        return Outcome(f"{done} connect/CREATE/close", notes=[f"{failed} connects failed"] if failed else [])

    async def attackG9(self) -> Outcome:
        count, aborted, states = self.scaled(10), 0, []
        pair = json.dumps({"cmd": 2, "user": "deaf", "args": ""}).encode() + b'{"cmd":"bad"}'

        async def deaf(_: int) -> None:
            nonlocal aborted
            client = await RawClient.connect(self.port, receiveBuffer=4096)
            try:
                states.append(await client.send(pair * 5000, timeout=10.0))  # 10k messages, never read
                await asyncio.sleep(2.0)
                if await client.send(b" ", 1.0) == CLOSED or await client.send(b" ", 1.0) == CLOSED:
                    aborted += 1
            finally:
                client.close()

        await inParallel(count, deaf)
        stalled = states.count(STALLED)
        return Outcome(
            f"{connections(count)} × 10k messages",
            notes=[f"{aborted}/{count} aborted by the server; {stalled} stopped being read before the end"],
        )


# -- Software-Challenge ----------------------------------------------------------------------------


class SochaCampaign(Campaign):
    service = "socha"
    attacks = [
        ("S1", "unread errorpackets", "default"),
        ("S2", "endless start tag", "default"),
        ("S3", "endless PI / comment", "default"),
        ("S4", "8 KB messages four at a time", "default"),
        ("S5", "password guessing", "default"),
        ("S6", "ebcdic", "default"),
        ("S7", "random bytes", "default"),
        ("S8", "churn", "default"),
    ]
    latencyNote = " (latency: move write → opponent's moveRequest, 50 ms gap included)"

    def __init__(self, workDir: Path, scale: float) -> None:
        super().__init__(workDir, scale)
        self.port = freePort()
        arguments = ["socha-server", "--listen", f"tcp:{self.port}:interface=127.0.0.1", "--password", "secret"]
        self.servers["default"] = ServerProcess("socha", arguments, workDir / "socha.log")

    async def startServer(self, key: str) -> None:
        self.servers[key].start()
        if not await waitForTcp(self.port):
            raise RuntimeError("socha server did not start")

    def canary(self, key: str, code: str | None) -> Canary:
        self.currentCanary = SochaCanary(self.port)
        return self.currentCanary

    async def serverUp(self, key: str) -> bool:
        try:
            link = await SochaLink.open(self.port, "127.0.0.20")
            try:
                await link.send("<protocol><ping/>")
                return (await link.packet(3.0)).tag == "errorpacket"
            finally:
                link.close()
        except (OSError, TimeoutError):
            return False

    async def unfinished(self, opening: bytes, limit: int) -> tuple[int, str, bytes]:
        """``<protocol>`` + opening + 'x' until ``limit`` bytes or closed; (bytes sent, state, answer)."""
        client = await RawClient.connect(self.port)
        try:
            await client.send(b"<protocol>" + opening)
            sent, state = await sendUntilClosed(client, lambda: b"x" * 65536, limit, time.monotonic() + 25)
            answer, ended = await client.receiveAll(1.0)
            return sent, CLOSED if ended else state, answer
        finally:
            client.close()

    def describeUnfinished(self, name: str, sent: int, state: str, answer: bytes) -> str:
        said = re.search(rb'message="([^"]*)"', answer)
        return f"{name}: {state} after {sent // 1024} KiB ({said.group(1).decode() if said else 'no errorpacket'})"

    async def attackS1(self) -> Outcome:
        """Never read: first only ``<x/>`` (closed by the errors-in-a-row limit), then ``<x/>`` with a
        good request every 16, so that only the unread errorpackets can stop the client."""
        deadline = time.monotonic() + 30 * self.scale
        limit = int(200 * MB * self.scale)
        outcome = Outcome("")
        client = await RawClient.connect(self.port, receiveBuffer=4096)
        await client.send(b"<protocol>")
        total, state = await sendUntilClosed(client, lambda: b"<x/>" * 4096, limit, deadline)
        client.close()
        outcome.notes.append(f"only <x/>: {state} after {total // 1024} KiB")
        block = (b"<x/>" * 15 + b'<authenticate password="secret"/>') * 1024
        deaf = [await RawClient.connect(self.port, receiveBuffer=4096) for _ in range(4)]
        try:

            async def flood(client: RawClient) -> tuple[int, str]:
                await client.send(b"<protocol>")
                return await sendUntilClosed(client, lambda: block, limit // 4, deadline)

            results = await asyncio.gather(*(flood(client) for client in deaf))
            total += sum(sent for sent, _ in results)
            states = ", ".join(f"{state} after {sent // 1024} KiB" for sent, state in results)
            outcome.notes.append(f"a good request every 16: {states}")
            rss, _ = self.servers["default"].measure()
            outcome.notes.append(f"server RSS while the 4 unread connections were held: {rss:.1f} MB")
        finally:
            for client in deaf:
                client.close()
        outcome.tried = f"{connections(5)}, {mib(total)}"
        return outcome

    async def attackS2(self) -> Outcome:
        sent, state, answer = await self.unfinished(b'<join gameType="', int(64 * MB * self.scale))
        return Outcome(mib(sent), notes=[self.describeUnfinished("start tag", sent, state, answer)])

    async def attackS3(self) -> Outcome:
        outcome = Outcome("")
        total = 0
        for name, opening in (("PI", b"<?pi "), ("comment", b"<!-- ")):
            sent, state, answer = await self.unfinished(opening, int(32 * MB * self.scale))
            total += sent
            outcome.notes.append(self.describeUnfinished(name, sent, state, answer))
        outcome.tried = f"2 connections, {mib(total)}"
        return outcome

    async def attackS4(self) -> Outcome:
        """A chatty but honest client: 8 KB messages, 4 per write, so that the server's reads cut them
        anywhere. ``<authenticate>`` with the right password (and 425 children) is well-formed, valid,
        and answered by nothing, so no error limit can close the connection: only a size refusal
        (the bug the size cap once had across reads) would."""
        message = b'<authenticate password="secret">' + b"<from x='1' y='2'/>" * 425 + b"</authenticate>"
        batches = max(1, int(2 * MB * self.scale) // (4 * len(message)))
        link = await SochaLink.open(self.port, "127.0.0.1")
        outcome = Outcome(f"{batches * 4} messages of {len(message)} B, 4 per write")
        answers: list[str] = []
        try:
            await link.send("<protocol>")
            for _ in range(batches):
                if await link.client.send(message * 4) != SENT:
                    outcome.disturbed.append("the connection was closed (or stopped being read)")
                    break
            try:
                while True:
                    answers.append(str((await link.packet(1.0)).get("message")))
            except TimeoutError:
                pass
            except ConnectionError:
                outcome.disturbed.append(f"closed after {answers}")
        finally:
            link.close()
        sizeRefusals = [text for text in answers if "longer than" in text or "more than" in text]
        if sizeRefusals:
            outcome.disturbed.append(f"refused as too long: {sizeRefusals[0]}")
        closed = any("closed" in text for text in outcome.disturbed)
        outcome.notes.append(
            f"{len(answers)} errorpackets, {len(sizeRefusals)} 'longer than' refusals, "
            f"connection {'closed' if closed else 'open to the end'}"
        )
        return outcome

    async def guess(self, source: str, password: str) -> list[str]:
        """One connection: ``password`` until the server closes it; the errorpacket messages."""
        link = await SochaLink.open(self.port, source)
        said: list[str] = []
        try:
            await link.send("<protocol>")
            for _ in range(10):
                await link.send(f'<authenticate password="{password}"/>')
                said.append(str((await link.packet(3.0)).get("message")))
        except (ConnectionError, TimeoutError):
            pass
        finally:
            link.close()
        return said

    async def attackS5(self) -> Outcome:
        seconds = max(1.0, 10 * self.scale)
        deadline, answers, opened = time.monotonic() + seconds, [], 0
        while time.monotonic() < deadline:
            answers += await self.guess("127.0.0.1", f"guess{opened}")
            opened += 1
        checked = sum(answer.startswith("wrong password") for answer in answers)
        outcome = Outcome(f"{len(answers)} guesses on {connections(opened)} in {seconds:.0f} s")
        outcome.notes.append(f"{checked} compared with the password, {len(answers) - checked} told to wait")
        if checked > 10 + 3:
            outcome.failures.append(f"{checked} wrong passwords checked from one address (limit 10, then 5/min)")
        link = await SochaLink.open(self.port, "127.0.0.2")
        try:  # the right password from another address still makes an administrator
            await link.send('<protocol><authenticate password="secret"/><observe roomId="none"/>')
            answer = str((await link.packet(3.0)).get("message"))
            if answer.startswith("no room"):
                outcome.notes.append("the right password from 127.0.0.2 still makes an administrator")
            else:
                outcome.disturbed.append(f"the right password from 127.0.0.2 did not work: {answer!r}")
        except (ConnectionError, TimeoutError) as error:
            outcome.disturbed.append(f"the right password from 127.0.0.2: {error}")
        finally:
            link.close()
        return outcome

    async def attackS6(self) -> Outcome:
        client = await RawClient.connect(self.port)
        try:
            await client.send(b"<?xml version='1.0' encoding='ebcdic'?><protocol>")
            answer, ended = await client.receiveAll(3.0)
        finally:
            client.close()
        outcome = Outcome("1 document", notes=[answer.decode("utf-8", "replace").strip()[:100]])
        if b"encoding" not in answer or not ended:
            outcome.failures.append(f"expected an errorpacket about the encoding and a close; ended={ended}")
        return outcome

    async def attackS7(self) -> Outcome:
        count, total, closed = self.scaled(20), 0, 0
        rng = random.Random(17)

        async def noise(_: int) -> None:
            nonlocal total, closed
            client = await RawClient.connect(self.port)
            try:
                await client.send(b"<protocol>")
                sent, state = await sendUntilClosed(
                    client, lambda: os.urandom(rng.randint(1, 16384)), 256 * 1024, time.monotonic() + 25
                )
                total += sent
                ended = (await client.receiveAll(0.5))[1]
                closed += state == CLOSED or ended
            finally:
                client.close()

        await inParallel(count, noise)
        return Outcome(f"{connections(count)}, {mib(total)} random", notes=[f"{closed}/{count} closed by the server"])

    async def attackS8(self) -> Outcome:
        cycles, done, unanswered = self.scaled(2000), 0, 0

        async def churn(_: int) -> None:
            nonlocal done, unanswered
            while done < cycles:
                done += 1
                link = await SochaLink.open(self.port, "127.0.0.1")
                try:
                    await link.send('<protocol><join gameType="velhanet_tictactoe"/>')
                    await link.packet(2.0)
                except (ConnectionError, TimeoutError):
                    unanswered += 1
                finally:
                    link.close()

        await inParallel(8, churn)
        notes = ["joins go to velhanet_tictactoe rooms, so that the canary's <join/> never pairs with a churner"]
        return Outcome(f"{done} connect/join/close", notes=notes + ([f"{unanswered} unanswered"] if unanswered else []))


# -- Gobang ----------------------------------------------------------------------------------------


class GobangCampaign(Campaign):
    service = "gobang"
    attacks = [
        ("B1", "forged Kill", "default"),
        ("B2", "random words", "default"),
        ("B3", "signon flood", "default"),
        ("B4", "planted FIFOs", "default"),
    ]
    latencyNote = " (gobang 'latency' is the duration of a whole canary game)"

    def __init__(self, workDir: Path, scale: float) -> None:
        super().__init__(workDir, scale)
        self.fifoDir = Path(tempfile.mkdtemp(prefix="velhanet-abuse-fifos-"))
        self.fifoDir.chmod(0o1777)
        arguments = ["gobang-server", "--fifo-dir", str(self.fifoDir)]
        self.servers["default"] = ServerProcess("gobang", arguments, workDir / "gobang.log")
        self.order = byteOrder("native")

    @property
    def serverFifo(self) -> Path:
        return fifo.fifoPath(self.fifoDir, "gbs", self.servers["default"].pid)

    async def startServer(self, key: str) -> None:
        self.servers[key].start()
        if not await waitUntil(lambda: self.serverFifo.exists(), 15.0):
            raise RuntimeError("gobang server did not create its FIFO")

    def stop(self) -> None:
        super().stop()
        shutil.rmtree(self.fifoDir, ignore_errors=True)

    def canary(self, key: str, code: str | None) -> Canary:
        self.currentCanary = GobangCanary(self.servers[key].pid, self.fifoDir, self.workDir)
        return self.currentCanary

    async def serverUp(self, key: str) -> bool:
        return self.servers[key].alive() and self.serverFifo.exists()

    async def writeWords(self, data: bytes, deadline: float) -> int:
        """Into the server FIFO, 4 KiB (atomic) at a time, as any local user can; bytes written."""
        written = 0
        fd = os.open(self.serverFifo, os.O_WRONLY | os.O_NONBLOCK)
        try:
            while written < len(data) and time.monotonic() < deadline:
                try:
                    written += os.write(fd, data[written : written + 4096])
                except BlockingIOError:
                    await asyncio.sleep(0.005)
        finally:
            os.close(fd)
        return written

    def word(self, pid: int, opcode: int) -> bytes:
        return encodeClient(ClientWord(pid & 0xFFFF, opcode), self.order)

    async def untilDigested(self, timeout: float = 30.0) -> None:
        """Wait until the server's log stops growing: it has handled every word still in its FIFO."""
        server = self.servers["default"]
        size, quietSince, deadline = server.logSize(), time.monotonic(), time.monotonic() + timeout
        while time.monotonic() < deadline and time.monotonic() - quietSince < 1.0:
            await asyncio.sleep(0.1)
            if server.logSize() != size:
                size, quietSince = server.logSize(), time.monotonic()

    def logSince(self, offset: int, pattern: str) -> int:
        return len(re.findall(pattern, self.servers["default"].log(offset)))

    async def attackB1(self) -> Outcome:
        spared = {self.servers["default"].pid, os.getpid()} | getattr(self.currentCanary, "clientPids", set())
        running = [int(name) for name in os.listdir("/proc") if name.isdigit() and int(name) not in spared]
        pids = [1, *random.Random(11).sample(running, min(50, len(running)))]
        offset = self.servers["default"].logSize()
        await self.writeWords(b"".join(self.word(pid, ClientOp.KILL) for pid in pids), time.monotonic() + 10)
        await asyncio.sleep(1.5)
        refused = self.logSince(offset, r"kill from pid \d+ ignored")
        notes = [
            f"{refused} logged as ignored",
            "the canary's signed-on clients are left out: a Kill naming a signed-on player is honoured by design",
        ]
        return Outcome(f"{len(pids)} Kill words (pid 1 and {len(pids) - 1} running processes)", notes=notes)

    async def attackB2(self) -> Outcome:
        offset = self.servers["default"].logSize()
        data = os.urandom(int(4 * MB * self.scale) // 4 * 4)
        canaryBits = {pid & 0xFFFF for pid in getattr(self.currentCanary, "currentPids", set())}
        written = await self.writeWords(data, time.monotonic() + 30)
        await self.untilDigested()
        words = [int.from_bytes(data[i : i + 4], self.order) for i in range(0, written, 4)]
        aimed = sorted({(word >> 12) & 0xF for word in words if word >> 16 in canaryBits})
        notes = [
            f"{self.logSince(offset, 'kill from pid')} Kill words ignored",
            f"opcodes in words that carried the pid bits of the canary's clients: {aimed}",
        ]
        return Outcome(f"{mib(written)} ({written // 4} words in ≤ 30 s)", notes=notes)

    async def attackB3(self) -> Outcome:
        count = self.scaled(20000)
        rng = random.Random(13)
        offset = self.servers["default"].logSize()
        data = b"".join(self.word(rng.randrange(2, 0x10000), rng.choice((1, 2))) for _ in range(count))
        written = await self.writeWords(data, time.monotonic() + 30)
        await self.untilDigested()
        refused = self.logSince(offset, "signon from pid")
        return Outcome(f"{written // 4} signon words", notes=[f"{refused} logged as refused"])

    async def attackB4(self) -> Outcome:
        sleeper = subprocess.Popen(["sleep", "60"])
        planted = fifo.fifoPath(self.fifoDir, "gbc", sleeper.pid)
        victim = self.workDir / "gobang-victim"
        outcome = Outcome("2 signons (symlink, regular file)")
        offset = self.servers["default"].logSize()
        try:
            for kind in ("symlink", "regular file"):
                victim.write_bytes(b"")
                planted.unlink(missing_ok=True)
                if kind == "symlink":
                    planted.symlink_to(victim)
                else:
                    planted.write_bytes(b"")
                await self.writeWords(self.word(sleeper.pid, ClientOp.SIGNON_BLACK), time.monotonic() + 5)
                await asyncio.sleep(1.5)
                for path in (victim, planted):
                    if path.exists() and not path.is_symlink() and path.stat().st_size:
                        outcome.failures.append(f"the server wrote into {path.name} through a planted {kind}")
            outcome.notes.append(f"{self.logSince(offset, 'signon from pid')} signons logged as refused")
        finally:
            sleeper.kill()
            sleeper.wait()
            planted.unlink(missing_ok=True)
            victim.unlink(missing_ok=True)
        return outcome


# -- JogoVelha -------------------------------------------------------------------------------------


class VelhaCampaign(Campaign):
    service = "velha"
    attacks = [
        ("V1", "MSG04 storm", "Bo"),
        ("V2", "third host takes the port", "Bo"),
        ("V3", "malformed datagrams", "Bo"),
    ]
    latencyNote = " (velha latency: a third peer's MSG01 → Bo's MSG02; the canary is Ana's best-of-5)"
    PEER_OPTIONS = ["--bot", "--move-delay", "0.05", "--start-grace", "0.3", "--trace"]
    ATTACKER = "127.0.0.66"
    BO = ("127.0.0.2", 20181)

    def __init__(self, workDir: Path, scale: float) -> None:
        super().__init__(workDir, scale)
        arguments = ["velha", "--nick", "Bo", "--interface", "127.0.0.2", "--announce", "127.0.0.3"]
        arguments += ["--accept", "always", *self.PEER_OPTIONS]
        self.servers["Bo"] = ServerProcess("velha-Bo", arguments, workDir / "velha-Bo.log", cwd=workDir)
        self.anas = 0
        self.swallowed = 0
        self.swallow: socket.socket | None = None
        self.swallowTask: asyncio.Task[None] | None = None

    async def start(self) -> None:
        # Bo answers every datagram at port 20181 of its sender: this socket takes the answers meant for the attacker.
        self.swallow = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.swallow.setblocking(False)
        self.swallow.bind((self.ATTACKER, 20181))
        self.swallowTask = asyncio.create_task(self.drain(self.swallow))
        await super().start()

    async def drain(self, sock: socket.socket) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await loop.sock_recv(sock, 2048)
            self.swallowed += 1

    async def startServer(self, key: str) -> None:
        bo = self.servers[key]
        bo.start()
        if not await waitUntil(lambda: "VelhaDatagramProtocol starting" in bo.log(), 15.0):
            raise RuntimeError("Bo did not start")

    def stop(self) -> None:
        super().stop()
        if self.swallowTask is not None:
            self.swallowTask.cancel()
        if self.swallow is not None:
            self.swallow.close()

    def startAna(self) -> ServerProcess:
        self.anas += 1
        arguments = ["velha", "--nick", "Ana", "--interface", "127.0.0.3", "--announce", "127.0.0.2"]
        arguments += ["--invite", "Bo", *self.PEER_OPTIONS]
        ana = ServerProcess("velha-Ana", arguments, self.workDir / f"velha-Ana-{self.anas}.log", cwd=self.workDir)
        ana.start()
        return ana

    def canary(self, key: str, code: str | None) -> Canary:
        self.currentCanary = VelhaCanary(self.startAna, self.servers["Bo"], anaDelay=1.0 if code == "V1" else 0.0)
        return self.currentCanary

    async def serverUp(self, key: str) -> bool:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.bind(("127.0.0.68", 20181))
            probe.settimeout(0.2)
            for _ in range(10):
                probe.sendto(PROBE, self.BO)
                try:
                    while True:
                        data = await asyncio.to_thread(probe.recv, 2048)
                        if data.startswith(b"02"):
                            return True
                except TimeoutError:
                    continue
        return False

    def boLogSince(self, offset: int, pattern: str) -> list[str]:
        return re.findall(pattern, self.servers["Bo"].log(offset))

    async def spray(self, datagrams: list[bytes], seconds: float) -> None:
        """Send from ATTACKER to Bo's port, spread over ``seconds`` in batches of 25."""
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sender:
            sender.bind((self.ATTACKER, 0))
            sender.setblocking(False)
            batches = max(1, len(datagrams) // 25)
            for start in range(0, len(datagrams), 25):
                for datagram in datagrams[start : start + 25]:
                    try:
                        sender.sendto(datagram, self.BO)
                    except BlockingIOError:
                        await asyncio.sleep(0.001)
                await asyncio.sleep(seconds / batches)

    async def attackV1(self) -> Outcome:
        count = self.scaled(5000)
        offset = self.servers["Bo"].logSize()
        before = self.swallowed
        storm = [f"04{5 + len(f'fake{n}'):03d}fake{n}".encode() for n in range(count)]
        await self.spray(storm, 4.0)
        await waitUntil(lambda: "match against Ana begins" in self.servers["Bo"].log(offset), 20.0)
        outcome = Outcome(f"{count} MSG04 from {self.ATTACKER}")
        counts = {
            "ignored (limit per address)": r"MSG04 from fake\d+ at \S+ ignored",
            "refused as busy": r"busy: refusing fake\d+'s invitation",
            "accepted (port opened)": r"-> udp 127\.0\.0\.66 b'05\d{3}Bo\|[1-9]",
            "fake nicks added to Bo's roster": r"Lobby#info\] fake\d+ is online at",
        }
        outcome.notes.append(
            ", ".join(f"{len(self.boLogSince(offset, pattern))} {name}" for name, pattern in counts.items())
            + f"; {self.swallowed - before} answers to the attacker"
        )
        if self.boLogSince(offset, r"refusing Ana's invitation"):
            outcome.disturbed.append("Bo refused Ana as busy")
        return outcome

    async def attackV2(self) -> Outcome:
        canary = self.currentCanary
        offset = canary.boLogOffset if isinstance(canary, VelhaCanary) else self.servers["Bo"].logSize()
        pattern = re.compile(r"-> udp 127\.0\.0\.3 b'05\d{3}Bo\|(\d+)'")
        answer = None
        deadline = time.monotonic() + 20
        while answer is None and time.monotonic() < deadline:  # watch Bo's trace for its MSG05 to Ana
            answer = pattern.search(self.servers["Bo"].log(offset))
            await asyncio.sleep(0.002)
        if answer is None:
            return Outcome("0 connections", failures=["Bo never sent Ana a MSG05 with a port"])
        port = int(answer.group(1))
        outcome = Outcome(f"1 connection from {self.ATTACKER} to Bo's port {port}")
        try:
            thief = await RawClient.connect(port, source=self.ATTACKER, host="127.0.0.2", timeout=2.0)
        except ConnectionRefusedError:
            outcome.notes.append("the port was already closed (Ana was faster): nothing proven")
            return outcome
        try:
            data, ended = await thief.receiveAll(1.5)
        finally:
            thief.close()
        if data:
            outcome.disturbed.append(f"Bo gave {self.ATTACKER} the match meant for Ana (it sent {data!r})")
        elif ended:
            outcome.notes.append("connection closed at once")
        else:
            outcome.failures.append("the connection was left open without a match")
        refused = self.boLogSince(offset, r"TCP connection from 127\.0\.0\.66 refused")
        outcome.notes.append(f"Bo's log: {'refused' if refused else 'no refusal logged'}")
        return outcome

    async def attackV3(self) -> Outcome:
        count = self.scaled(20000)
        rng = random.Random(3)
        offset = self.servers["Bo"].logSize()

        def junk(number: int) -> bytes:
            body = os.urandom(rng.randint(0, 1000))
            if number % 2:  # half of them pass the header's digit check and fail later
                return f"{rng.randint(0, 99):02d}{rng.randint(0, 999):03d}".encode() + body
            return body or b"\xff"

        await self.spray([junk(number) for number in range(count)], 5.0)
        await asyncio.sleep(0.5)
        dropped = len(self.boLogSince(offset, "malformed datagram from"))
        return Outcome(f"{count} datagrams", notes=[f"{dropped} logged as malformed and dropped"])


# -- main ------------------------------------------------------------------------------------------

CAMPAIGNS: dict[str, type[Campaign]] = {
    "gambit": GambitCampaign,
    "socha": SochaCampaign,
    "gobang": GobangCampaign,
    "velha": VelhaCampaign,
}


async def main(arguments: argparse.Namespace) -> int:
    started = time.monotonic()
    scale = 0.1 if arguments.quick else 1.0
    services = [name.strip() for name in arguments.only.split(",") if name.strip()]
    unknown = set(services) - set(CAMPAIGNS)
    if unknown:
        raise SystemExit(f"--only: unknown service(s) {', '.join(sorted(unknown))}; known: {', '.join(CAMPAIGNS)}")
    rows: list[Row] = []
    summaries: list[str] = []
    workDir = Path(tempfile.mkdtemp(prefix="velhanet-abuse-"))
    try:
        for name in services:
            campaign = CAMPAIGNS[name](workDir, scale)
            try:
                serviceRows, serviceSummaries = await runCampaign(campaign)
            except Exception as error:  # a service that cannot even start is reported, the others still run
                progress(f"{name}: campaign failed: {error!r}")
                serviceSummaries = [f"{name}: campaign failed: {error!r}"]
                serviceRows = []
            rows += serviceRows
            summaries += serviceSummaries
        elapsed = time.monotonic() - started
        summaries.append(f"wall time {elapsed:.0f} s{' (--quick)' if arguments.quick else ''}")
        table = renderTable(rows, summaries)
        print(table)
        if arguments.out:
            Path(arguments.out).write_text(table + "\n")
        if arguments.keep_logs:
            print(f"logs kept in {workDir}", file=sys.stderr)
        allHeld = rows and all(row.held() for row in rows) and not any("failed" in s for s in summaries)
        return 0 if allHeld else 1
    finally:
        if not arguments.keep_logs:
            shutil.rmtree(workDir, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="abuse campaign against real velhanet servers on loopback")
    parser.add_argument("--only", default=",".join(CAMPAIGNS), help="comma-separated services (default: all)")
    parser.add_argument("--quick", action="store_true", help="a tenth of the inputs and of the attack durations")
    parser.add_argument("--out", default=None, help="also write the table to this file")
    parser.add_argument("--keep-logs", action="store_true", help="keep the servers' logs (path printed at the end)")
    sys.exit(asyncio.run(main(parser.parse_args())))
