#!/usr/bin/env python3
"""A scripted UCI engine for the engine driver's tests: ``fake_uci.py MODE [LOG]``.

Modes:
- ``normal``: answers ``uci`` (with a "Skill Level" option), ``isready``,
  ``position`` and ``go`` with the first legal move (python-chess);
- ``plain``: the same without the "Skill Level" option;
- ``slow``: as normal, but never answers ``go`` (until ``stop`` or ``quit``);
- ``dying``: exits with status 3 at the first ``go``;
- ``dead``: exits with status 3 after reading ``uci``, before ``uciok``;
- ``garbage``: prints nonsense, then answers ``go`` with a move that is not legal;
- ``flood``: answers ``go`` with an endless line;
- ``deaf``: as normal, but ignores ``quit`` and end of input (it must be killed).

Each line received is appended to LOG when given, so a test can read what the driver said.
"""

from __future__ import annotations

import sys
import time

import chess


def main() -> None:
    mode = sys.argv[1]
    log = open(sys.argv[2], "a", buffering=1) if len(sys.argv) > 2 else None  # noqa: SIM115
    board = chess.Board()

    def say(line: str) -> None:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()

    while True:
        line = sys.stdin.readline()
        if not line:
            if mode == "deaf":
                time.sleep(3600)
            return
        line = line.strip()
        if log is not None:
            log.write(line + "\n")
        words = line.split()
        if not words:
            continue
        if words[0] == "uci":
            if mode == "dead":
                sys.exit(3)
            if mode == "garbage":
                say("Hello! I am not quite a chess engine.")
            say(f"id name Fake {mode}")
            say("id author velhanet tests")
            if mode != "plain":
                say("option name Skill Level type spin default 20 min 0 max 20")
            say("uciok")
        elif words[0] == "isready":
            say("readyok")
        elif words[0] == "position":
            board = chess.Board() if words[1] == "startpos" else chess.Board(" ".join(words[2:8]))
            if "moves" in words:
                for move in words[words.index("moves") + 1 :]:
                    board.push_uci(move)
        elif words[0] == "go":
            if mode == "dying":
                sys.exit(3)
            if mode == "slow":
                continue
            if mode == "flood":
                while True:
                    sys.stdout.write("x" * 65536)
            if mode == "garbage":
                say("info depth ??? score banana")
                say("bestmove e2e5")
                continue
            say(f"bestmove {next(iter(board.legal_moves)).uci()}")
        elif words[0] == "stop" and mode == "slow":
            say(f"bestmove {next(iter(board.legal_moves)).uci()}")
        elif words[0] == "quit" and mode != "deaf":
            return


if __name__ == "__main__":
    main()
