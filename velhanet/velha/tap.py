"""``twistd velha``: command-line options for a JogoVelha peer."""

from __future__ import annotations

from typing import Any

from twisted.python import usage

from velhanet.velha import wire
from velhanet.velha.lobby import PROTOCOL_PORT
from velhanet.velha.service import makeService as _makeService


class Options(usage.Options):
    synopsis = "--nick NICK [options]"
    longdesc = (
        "A JogoVelha peer: finds players on the LAN over UDP (port 20181), "
        "invites and is invited, and plays best-of-5 tic-tac-toe over TCP. "
        "Type 'help' at the prompt for the console commands."
    )
    optFlags = [
        ["bot", None, "the computer plays (perfect tic-tac-toe); --accept defaults to always"],
        ["trace", None, "print every datagram and TCP message, raw and decoded"],
    ]
    optParameters = [
        ["nick", None, None, "your nick: 1-20 printable ASCII characters, no '|'"],
        ["interface", None, "", "local IPv4 address to bind (default: all)"],
        ["port", None, PROTOCOL_PORT, "the protocol port, to listen on and to send to", int],
        ["announce", None, None, "comma-separated addresses for MSG01/MSG03 instead of broadcast"],
        ["invite", None, None, "invite NICK as soon as it is seen online"],
        ["accept", None, None, "answer invitations: ask, always or never (default ask; always with --bot)"],
        ["move-delay", None, 0.5, "seconds the bot waits before each move", float],
        ["seed", None, None, "seed for the bot and for MSG07 (replayable games)", int],
        ["log-file", None, None, "console mode: where the log goes (default velha-NICK.log; '-' = twistd's)"],
    ]

    def postOptions(self) -> None:
        if self["nick"] is None:
            raise usage.UsageError("--nick is required")
        try:
            wire.checkNick(self["nick"])
        except ValueError as error:
            raise usage.UsageError(str(error)) from None
        if self["accept"] is None:
            self["accept"] = "always" if self["bot"] else "ask"
        if self["accept"] not in ("ask", "always", "never"):
            raise usage.UsageError("--accept must be ask, always or never")
        if not 1 <= self["port"] <= 65535:
            raise usage.UsageError("--port must be 1..65535")
        announce = self["announce"]
        self["announce"] = [a.strip() for a in announce.split(",") if a.strip()] if announce else []
        if self["log-file"] is None:
            self["log-file"] = f"velha-{self['nick']}.log"
        if self["move-delay"] < 0:
            raise usage.UsageError("--move-delay must not be negative")


def makeService(options: Any) -> Any:
    return _makeService(options)
