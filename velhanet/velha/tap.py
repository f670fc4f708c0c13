"""``twistd velha``: command-line options for a JogoVelha peer."""

from __future__ import annotations

from twisted.python import usage

from velhanet.i18n import _
from velhanet.startup import ShortUsage, daemonizing
from velhanet.velha import wire
from velhanet.velha.protocol import PROTOCOL_PORT
from velhanet.velha.room import PEER_TIMEOUT, START_GRACE
from velhanet.velha.service import makeService as makeService
from velhanet.web.service import WEB_OPTION


class Options(ShortUsage):
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
        ["nick", None, None, "your nick, required: 1-20 printable ASCII characters, no '|'"],
        ["interface", None, None, "local IPv4 address to bind [default: all interfaces]"],
        ["port", None, PROTOCOL_PORT, "the protocol port, to listen on and to send to", int],
        ["announce", None, None, "comma-separated addresses to send MSG01/MSG03 to [default: broadcast]"],
        ["invite", None, None, "invite NICK as soon as it is seen online [default: nobody]"],
        ["accept", None, None, "answer invitations: ask, always or never [default: ask; always with --bot]"],
        ["move-delay", None, 0.5, "seconds the bot waits before each move", float],
        [
            "peer-timeout",
            None,
            PEER_TIMEOUT,
            "seconds a match waits for the peer's move or MSG09 before giving up with MSG10 (0: forever)",
            float,
        ],
        [
            "start-grace",
            None,
            START_GRACE,
            "seconds to wait after a draw we started for the peer to start the next game before we do",
            float,
        ],
        [
            "first",
            None,
            "inviter",
            "who starts game 1 when we are invited (our MSG07): inviter, invitee or random",
        ],
        ["seed", None, None, "seed for the bot and for a random MSG07, to replay games [default: random]", int],
        [
            "time-scale",
            None,
            1.0,
            "every protocol timer (answer delays, resends, windows, --start-grace, --peer-timeout) times FACTOR, "
            "for velhanet's own tests and quick runs; the bot's --move-delay stays",
            float,
        ],
        ["log-file", None, None, "console mode: where the log goes, '-' for twistd's [default: velha-NICK.log]"],
        WEB_OPTION,
    ]

    def postOptions(self) -> None:
        if self["nick"] is None:
            raise usage.UsageError(_("--nick is required"))
        try:
            wire.checkNick(self["nick"])
        except ValueError as error:
            raise usage.UsageError(str(error)) from None
        if daemonizing(self) and not self["bot"]:
            raise usage.UsageError(_("the console needs the terminal: run 'twistd -n velha', or add --bot"))
        if self["accept"] is None:
            self["accept"] = "always" if self["bot"] else "ask"
        if self["accept"] not in ("ask", "always", "never"):
            raise usage.UsageError(_("--accept must be ask, always or never"))
        if self["first"] not in ("inviter", "invitee", "random"):
            raise usage.UsageError(_("--first must be inviter, invitee or random"))
        if not 1 <= self["port"] <= 65535:
            raise usage.UsageError(_("--port must be 1..65535"))
        if self["interface"] is None:
            self["interface"] = ""  # every interface, as Twisted spells it
        announce = self["announce"]
        self["announce"] = [a.strip() for a in announce.split(",") if a.strip()] if announce else []
        if self["log-file"] is None:
            self["log-file"] = f"velha-{self['nick']}.log"
        for name in ("move-delay", "peer-timeout", "start-grace"):
            if self[name] < 0:
                raise usage.UsageError(_("--{option} must not be negative").format(option=name))
        if self["time-scale"] <= 0:
            raise usage.UsageError(
                _("--time-scale must be more than 0, not {scale:g}").format(scale=self["time-scale"])
            )
