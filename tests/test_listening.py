"""The servers listen with a backlog for a whole class connecting at once (issue 14)."""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from velhanet.gambit import service as gambitService
from velhanet.gambit.tap import Options as GambitOptions
from velhanet.listening import BACKLOG, withBacklog
from velhanet.socha import service as sochaService
from velhanet.socha.tap import Options as SochaOptions


class BacklogTests(SynchronousTestCase):
    def test_tcpEndpointsGetABacklog(self) -> None:
        self.assertEqual(withBacklog("tcp:22022"), f"tcp:22022:backlog={BACKLOG}")
        self.assertEqual(withBacklog("tcp6:22022:interface=\\:\\:1"), f"tcp6:22022:interface=\\:\\:1:backlog={BACKLOG}")

    def test_othersAndExplicitBacklogsAreKept(self) -> None:
        for description in ("tcp:1:backlog=5", "unix:/tmp/socket", "ssl:443:privateKey=key.pem"):
            self.assertEqual(withBacklog(description), description)

    def test_servicesListenWithIt(self) -> None:
        for module, options in ((gambitService, GambitOptions()), (sochaService, SochaOptions())):
            options.parseOptions(["--listen", "tcp:0:interface=127.0.0.1"])
            service = module.makeService(options)
            endpoints = [getattr(s, "endpoint", None) for s in [service, *getattr(service, "services", [])]]
            backlogs = [endpoint._backlog for endpoint in endpoints if endpoint is not None]
            self.assertEqual(backlogs, [BACKLOG], module.__name__)
