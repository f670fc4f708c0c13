"""``twistd gobang-server``: command-line options for the Gobang FIFO server."""

from __future__ import annotations

from twisted.python import usage

from velhanet.gobang.service import makeService
from velhanet.gobang.wire import byteOrder
from velhanet.i18n import _
from velhanet.startup import ShortUsage
from velhanet.web.service import WEB_OPTION


class Options(ShortUsage):
    synopsis = (
        "[--size N] [--game gobang|tictactoe] [--fifo-dir DIR] [--byte-order ORDER] [--once] [--trace] [--web ENDPOINT]"
    )
    longdesc = (
        "The Gobang server of the FIFO exercise: clients write 32-bit words into DIR/gbs.<pid>, "
        "the server answers with 16-bit words into their DIR/gbc.<pid>. Many games at once."
    )
    optFlags = [
        ["once", None, "stop after the first game"],
        ["trace", None, "log every word in and out, raw and decoded"],
    ]
    optParameters = [
        ["size", None, 11, "board size, 5 to 63 (gobang)", int],
        ["game", None, "gobang", "gobang, or tictactoe (3x3) with the same clients"],
        ["fifo-dir", None, "/tmp", "directory of the FIFOs gbs.* and gbc.*"],
        ["byte-order", None, "native", "byte order of the words: native, big or little"],
        WEB_OPTION,
    ]

    def postOptions(self) -> None:
        if not 5 <= self["size"] <= 63:
            raise usage.UsageError(_("--size must be 5 to 63 (6-bit coordinates)"))
        if self["game"] not in ("gobang", "tictactoe"):
            raise usage.UsageError(_("--game must be gobang or tictactoe"))
        try:
            self["byte-order"] = byteOrder(self["byte-order"])
        except ValueError as error:
            raise usage.UsageError(str(error)) from None


__all__ = ["Options", "makeService"]
