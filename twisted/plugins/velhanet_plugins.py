"""twistd plugins for velhanet: each one only points at a ``tap`` module.

No ``__init__.py`` lives in ``twisted/`` or ``twisted/plugins/``: Twisted
finds this file by scanning every ``twisted/plugins`` directory on sys.path.
"""

from __future__ import annotations

from twisted.application.service import ServiceMaker

velha = ServiceMaker(
    "velhanet JogoVelha peer",
    "velhanet.velha.tap",
    "A JogoVelha LAN tic-tac-toe peer (UDP discovery and invites on 20181, best-of-5 over TCP)",
    "velha",
)

gambitServer = ServiceMaker(
    "velhanet Gambit server",
    "velhanet.gambit.tap",
    "A Gambit chess relay server (JSON over TCP on 22022), compatible with the original Go client",
    "gambit-server",
)

gobangServer = ServiceMaker(
    "velhanet Gobang server",
    "velhanet.gobang.tap",
    "The Gobang server of the FIFO exercise (named pipes gbs.<pid>/gbc.<pid>, many games, kibitz)",
    "gobang-server",
)

sochaServer = ServiceMaker(
    "velhanet Software-Challenge server",
    "velhanet.socha.tap",
    "A Software-Challenge XML game server (Piranhas and velhanet's games, rooms, admin) on 13050",
    "socha-server",
)

sochaReplay = ServiceMaker(
    "velhanet Software-Challenge replays",
    "velhanet.socha.replaytap",
    "Step through Piranhas game logs (socha-match --log-dir) in a browser, move by move",
    "socha-replay",
)

classServer = ServiceMaker(
    "velhanet class server",
    "velhanet.classroom.tap",
    "A class on one service: students hand in and read their own reports, teachers see the class",
    "class-server",
)
