"""``velhanet-class``: the class server's people, and handing in from a terminal.

    velhanet-class links CLASS.toml --url https://HOST:PORT [--out DIR]   a link for each who has none
    velhanet-class revoke CLASS.toml NAME --url https://HOST:PORT          a new link for NAME
    velhanet-class hand-in https://HOST:PORT FOLDER --token SECRET          hand in, wait, print the report

``links`` prints ``NAME URL``, one line per person it made a link for (only a hash of each secret is
kept, so a link made before cannot be printed again: it is named on standard error, with how to make a
new one). ``revoke`` makes a new secret, and the old link and its sessions stop working at once, on a
running server too (they share the class's database, ``--out``). ``hand-in`` packs the folder (its
hidden files left out), sends it with the secret as a bearer token, waits for the grading, and prints
the report as ``velhanet-check`` does, with its exit status (0: no rule failed, 1: one did, 3: the
program could not be tested; 2: the hand-in was refused or the server could not be reached).
"""

from __future__ import annotations

import json
import sys
import time
import urllib.error
import urllib.request
from datetime import datetime
from pathlib import Path
from typing import Any

from velhanet.checks.data import reportFromJson
from velhanet.checks.formats import outcomeLine, programLines
from velhanet.checks.page import notTested
from velhanet.checks.runner import summary
from velhanet.classroom.classfile import loadClassroom
from velhanet.classroom.links import makeLink, signInUrl
from velhanet.classroom.store import Store
from velhanet.cluster.archive import pack
from velhanet.grading.history import History, HistoryError
from velhanet.grading.submissions import ClassFileError
from velhanet.i18n import _
from velhanet.startup import ArgumentParser

POLL = 2.0
"""Seconds between two questions to the server while a hand-in waits."""


def parser() -> ArgumentParser:
    top = ArgumentParser(prog="velhanet-class", description="The class server's people; handing in from a terminal.")
    commands = top.add_subparsers(dest="command", required=True, metavar="links|revoke|hand-in", help="what to do")
    links = commands.add_parser("links", help="make a personal link for each person who has none, and print it")
    links.add_argument("classFile", metavar="CLASS.toml", help="the class file the server serves")
    links.add_argument("--url", required=True, help="the server's address as people reach it (https://HOST:PORT)")
    links.add_argument("--out", default="velhanet-class", help="the server's --out (default: ./%(default)s)")
    revoke = commands.add_parser("revoke", help="make a new link for NAME: the old one stops working")
    revoke.add_argument("classFile", metavar="CLASS.toml", help="the class file the server serves")
    revoke.add_argument("name", metavar="NAME", help="whose link: a teacher's or a student's name")
    revoke.add_argument("--url", required=True, help="the server's address as people reach it")
    revoke.add_argument("--out", default="velhanet-class", help="the server's --out (default: ./%(default)s)")
    handIn = commands.add_parser("hand-in", help="hand a folder in, wait for its grading, print the report")
    handIn.add_argument("url", metavar="URL", help="the class server (https://HOST:PORT)")
    handIn.add_argument("folder", metavar="FOLDER", help="your program's folder, with its velhanet-run")
    handIn.add_argument("--token", required=True, help="the secret of your personal link (its last part)")
    handIn.add_argument("--timeout", type=float, default=3600.0, help="seconds to wait (default: %(default)s)")
    return top


def main(argv: list[str] | None = None) -> None:
    arguments = parser().parse_args(sys.argv[1:] if argv is None else argv)
    if arguments.command == "hand-in":
        sys.exit(handIn(arguments.url, Path(arguments.folder), arguments.token, arguments.timeout))
    try:
        classroom = loadClassroom(Path(arguments.classFile))
        history = History(Path(arguments.out) / "grades.db") if Path(arguments.out).is_dir() else None
    except (ClassFileError, HistoryError) as error:
        print(f"velhanet-class: {error}", file=sys.stderr)
        sys.exit(2)
    if history is None:
        Path(arguments.out).mkdir(parents=True)
        history = History(Path(arguments.out) / "grades.db")
    store = Store(history)
    store.syncPeople({person.name: person.role for person in classroom.people.values()})
    now = datetime.now().astimezone()
    if arguments.command == "revoke":
        if arguments.name not in classroom.people:
            print(_("velhanet-class: {name} is not in {path}").format(name=arguments.name, path=classroom.path))
            sys.exit(2)
        print(arguments.name, signInUrl(arguments.url, makeLink(store, arguments.name, now)))
        return
    for name in classroom.people:
        made = store.madeWhen(name)
        if made is not None:
            said = _("{name}: a link was made on {when}; velhanet-class revoke {path} {name} makes a new one")
            print(said.format(name=name, when=made, path=arguments.classFile), file=sys.stderr)
            continue
        print(name, signInUrl(arguments.url, makeLink(store, name, now)))
    history.close()


def ask(url: str, token: str, data: bytes | None = None, kind: str = "") -> tuple[int, Any]:
    """One request to the API: (status, the JSON answer)."""
    request = urllib.request.Request(url, data=data, method="POST" if data is not None else "GET")
    request.add_header("Authorization", f"Bearer {token}")
    if kind:
        request.add_header("Content-Type", kind)
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        body = error.read()
        try:
            return error.code, json.loads(body)
        except ValueError:
            return error.code, {"error": body.decode("utf-8", "replace").strip()}


def handIn(base: str, folder: Path, token: str, timeout: float) -> int:
    """Hand ``folder`` in at ``base`` and wait for its report; the exit status."""
    if not (folder / "velhanet-run").is_file():
        print(_("velhanet-class: {folder} has no velhanet-run").format(folder=folder), file=sys.stderr)
        return 2
    api = base.rstrip("/") + "/api/hand-ins"
    try:
        status, answer = ask(api, token, pack(folder, hidden=False), "application/gzip")
    except OSError as error:
        print(_("velhanet-class: {url}: {error}").format(url=api, error=error), file=sys.stderr)
        return 2
    if status not in (202, 422):
        print(f"velhanet-class: {status} {answer.get('error', answer)}", file=sys.stderr)
        return 2
    number = answer["id"]
    print(_("handed in as #{id}").format(id=number), flush=True)
    deadline = time.monotonic() + timeout
    said = ""
    while answer["status"] in ("received", "queued", "grading") and time.monotonic() < deadline:
        now = describe(answer)
        if now != said:
            print(now, flush=True)
            said = now
        time.sleep(POLL)
        status, answer = ask(f"{api}/{number}", token)
    if answer["status"] != "graded":
        print(describe(answer), file=sys.stderr)
        return 2
    report = reportFromJson(answer["report"])
    for outcome in report.outcomes:
        print(outcomeLine(outcome, False))
    if report.cannotTest:
        print(notTested(report.cannotTest))
    for line in programLines(report):
        print(line)
    if answer.get("change"):
        print(answer["change"])
    print(_("nothing was graded") if report.cannotTest else summary(report))
    return report.exitStatus


def describe(answer: dict[str, Any]) -> str:
    if answer["status"] == "queued" and "wait" in answer:
        return _("queued: number {position}, about {wait} s").format(position=answer["position"], wait=answer["wait"])
    if answer["status"] == "queued" and "position" in answer:
        return _("queued: number {position}").format(position=answer["position"])
    if answer["status"] in ("refused", "replaced"):
        return _("{status}: {reason}").format(status=answer["status"], reason=answer.get("reason") or "")
    return str(answer["status"])


if __name__ == "__main__":
    main()
