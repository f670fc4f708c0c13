"""``twistd socha-server``: command-line options for the Software-Challenge server."""

from __future__ import annotations

from twisted.python import usage

from velhanet.clientlimits import LimitOptions
from velhanet.i18n import _
from velhanet.socha.lobby import SochaLimits
from velhanet.socha.service import makeService
from velhanet.startup import ShortUsage
from velhanet.web.service import WEB_OPTION

__all__ = ["Options", "makeService"]


class Options(ShortUsage, LimitOptions):
    synopsis = (
        "[--listen ENDPOINT] [--password PW] [--no-timeout] [--time-scale FACTOR] [--paused] [--trace] "
        "[--web ENDPOINT] [--limit NAME=VALUE]..."
    )
    limitsType = SochaLimits
    longdesc = (
        "A Software-Challenge game server speaking the XML protocol of the official server "
        "(Piranhas, swc_2026_piranhas, plus velhanet_tictactoe and velhanet_gobang), with rooms, "
        "reservations and administration."
    )
    optFlags = [
        ["no-timeout", None, "no move time limits (a soft 2 s and a hard 10 s per move)"],
        ["paused", None, "rooms created by <join/> start paused (an admin steps or resumes them)"],
        ["trace", None, "log every message in and out"],
        [
            "web-show-prepared",
            None,
            "with --web: show prepared games too (hidden by default: their teams and moves are the organiser's)",
        ],
    ]
    optParameters = [
        ["listen", None, "tcp:13050:interface=127.0.0.1", "Twisted endpoint to listen on"],
        ["password", None, None, "administrator password [default: none, administration disabled]"],
        [
            "time-scale",
            None,
            1.0,
            "the move time limits (a soft 2 s and a hard 10 s) times FACTOR, for velhanet's own tests and quick runs",
            float,
        ],
        WEB_OPTION,
    ]

    def postOptions(self) -> None:
        super().postOptions()
        if self["time-scale"] <= 0:
            raise usage.UsageError(
                _("--time-scale must be more than 0, not {factor:g}").format(factor=self["time-scale"])
            )
