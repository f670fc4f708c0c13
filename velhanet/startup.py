"""Start-up errors said where the person who started the program sees them.

Under ``twistd`` a service that cannot start used to leave its reason only in
the log (twistd sends ``sys.stderr`` to the log once logging has begun), and
a usage error printed the whole help before the one line that mattered. Here:

- L{ShortUsage}, a mixin for a plugin's ``Options``: a usage error prints the
  error and a hint (``twistd velha --help``), nothing else, and exits 1.
- L{StartupReport}: made by ``makeService`` (still in the process the person
  started), it writes ``twistd NAME: not started: REASON; the log is WHERE`` to the
  terminal, logs the same line, and raises L{CannotStart}. In the foreground
  twistd then exits 1; a daemon's start raises synchronously, so twistd's
  parent process waits for it, prints its own two lines and exits 1 too. A
  daemon's terminal is gone by then (standard error is ``/dev/null``), so the
  report keeps a copy of it from before the fork and closes it once the
  reactor runs.
- L{ListeningService}: a stream endpoint service that listens at once and
  reports a port it cannot have.
- L{ArgumentParser}: the clients' argparse with the same short usage errors.

Both take ``--language pt|es|de|en`` (L{velhanet.i18n}): it is read before the
rest of the command line, so that even a usage error speaks it.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from typing import Any, NoReturn

from twisted.application.internet import StreamServerEndpointService
from twisted.internet import endpoints
from twisted.internet.error import CannotListenError
from twisted.internet.interfaces import IListeningPort, IProtocolFactory
from twisted.logger import Logger
from twisted.python import usage

from velhanet import i18n
from velhanet.i18n import _
from velhanet.listening import withBacklog


class CannotStart(Exception):
    """A service could not start; the message is the reason, in one line."""


def usageHint(command: str) -> str:
    return _("Try '{command} --help' for the options.").format(command=command)


class ShortUsage(usage.Options):
    """A twistd plugin's options whose usage errors are one line and a hint.

    twistd prints its whole help, then the error; raising ``SystemExit`` from
    the subcommand's parsing skips that (twistd catches only usage errors) and
    exits 1 with our two lines on standard error. Parsed on their own (in
    tests), the options raise ``UsageError`` as before.
    """

    optParameters: list[Any] = [["language", None, None, i18n.LANGUAGE_HELP]]

    def parseOptions(self, options: Any = None) -> None:
        arguments = sys.argv[1:] if options is None else options
        i18n.use(i18n.languageFromArguments(arguments))
        try:
            super().parseOptions(options)
            if self["language"] is not None:
                try:
                    self["language"] = i18n.checkLanguage(self["language"])
                except ValueError as error:
                    raise usage.UsageError(str(error)) from None
        except usage.UsageError as error:
            if self.parent is None:
                raise
            command = f"twistd {self.parent.subCommand}"
            raise SystemExit(f"{command}: {error}\n{usageHint(command)}") from None


def twistdOptions(options: Any) -> Any:
    """twistd's own options (``--nodaemon``, ``--logfile``…) when ``options`` are a plugin's under twistd."""
    parent = getattr(options, "parent", None)
    return parent if parent is not None and "nodaemon" in parent else None


def daemonizing(options: Any) -> bool:
    twistd = twistdOptions(options)
    return twistd is not None and not twistd["nodaemon"]


def twistdLog(twistd: Any) -> str:
    """Where twistd writes the log, as a person reads it (as twistd's ``UnixAppLogger`` decides)."""
    if twistd.get("syslog"):
        return "syslog"
    logFile = twistd.get("logfile")
    if logFile == "-" or (twistd["nodaemon"] and not logFile):
        return _("standard output")
    return os.path.abspath(logFile or "twistd.log")


class StartupReport:
    """Says why a service did not start: on the terminal, in the log, and to twistd (L{CannotStart}).

    ``log`` names the log when the service writes its own (velha's console
    mode); otherwise it is twistd's.
    """

    log = Logger()

    def __init__(self, options: Any, reactor: Any, log: str | None = None) -> None:
        twistd = twistdOptions(options)
        self.program = f"twistd {twistd.subCommand}" if twistd is not None else "velhanet"
        self.where = log or (twistdLog(twistd) if twistd is not None else _("standard output"))
        self.terminal: int | None = None
        if daemonizing(options):
            self.terminal = os.dup(2)  # twistd points 2 at /dev/null in the daemon
            reactor.callWhenRunning(self.started)

    def line(self, reason: str) -> str:
        return _("{program}: not started: {reason}; the log is {where}").format(
            program=self.program, reason=reason, where=self.where
        )

    def cannotStart(self, reason: str) -> NoReturn:
        """Say ``reason`` everywhere it should be seen, then raise L{CannotStart} for twistd."""
        line = self.line(reason)
        self.log.error("{line}", line=line)
        with contextlib.suppress(OSError):
            if self.terminal is not None:
                os.write(self.terminal, (line + "\n").encode("utf-8", "replace"))
            elif sys.__stderr__ is not None:
                sys.__stderr__.write(line + "\n")
                sys.__stderr__.flush()
        self.started()
        raise CannotStart(reason)

    def started(self) -> None:
        """The start is over: a daemon lets go of the terminal it was started from."""
        if self.terminal is not None:
            os.close(self.terminal)
            self.terminal = None


def listenReason(error: CannotListenError) -> str:
    """``Address already in use``, from what the operating system said."""
    socketError = error.socketError
    return getattr(socketError, "strerror", None) or str(socketError)


TLS_INSTALL = "pip install 'velhanet[tls]'"
"""What an ``ssl:`` endpoint needs beside a plain install."""


class ListeningService(StreamServerEndpointService):
    """Listens on ``description`` when started; a port it cannot have stops the start, with the reason."""

    def __init__(
        self, description: str, factory: IProtocolFactory, reactor: Any, report: StartupReport, option: str = "--listen"
    ) -> None:
        try:
            endpoint = endpoints.serverFromString(reactor, withBacklog(description))
        except ValueError as error:  # before any fork: the terminal is still ours
            command = report.program
            raise SystemExit(f"{command}: {option} {description}: {error}\n{usageHint(command)}") from None
        except ImportError:  # ssl: without pyOpenSSL
            said = _("TLS needs pyOpenSSL, which this installation lacks: {install}").format(install=TLS_INSTALL)
            raise SystemExit(f"{report.program}: {option} {description}: {said}") from None
        super().__init__(endpoint, factory)
        self._raiseSynchronously = True
        self.description = description
        self.report = report

    port: IListeningPort | None = None
    """The port it listens on, once it does (for ``tcp:0``, the one the system chose)."""

    def privilegedStartService(self) -> None:
        try:
            super().privilegedStartService()
        except CannotListenError as error:
            self.report.cannotStart(
                _("cannot listen on {address} ({reason})").format(address=self.description, reason=listenReason(error))
            )
        if self._waitingForPort is not None:
            self._waitingForPort.addCallback(self._listening)

    def _listening(self, port: IListeningPort) -> IListeningPort:
        self.port = port
        return port


def languageArgument(value: str) -> str:
    try:
        return i18n.checkLanguage(value)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


class ArgumentParser(argparse.ArgumentParser):
    """argparse whose usage errors are the error and a hint, without the synopsis first; exit status 2.

    Every parser takes ``--language`` (a subcommand's too: ``velhanet-league run
    --language de``); the language is set from the command line before it is
    parsed, so L{parse_args} speaks it from its first error on.
    """

    def __init__(self, *arguments: Any, **options: Any) -> None:
        super().__init__(*arguments, **options)
        self.add_argument(
            "--language", type=languageArgument, default=argparse.SUPPRESS, help=i18n.LANGUAGE_ARGUMENT_HELP
        )

    isSubcommand = False
    """A subcommand's parser sees only its part of the command line: it keeps the language its command chose."""

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        chosen = i18n.languageFromArguments(sys.argv[1:] if args is None else list(args))
        if chosen is not None or not self.isSubcommand:
            i18n.use(chosen)
        return super().parse_known_args(args, namespace)

    def add_subparsers(self, **options: Any) -> Any:
        options.setdefault("parser_class", SubcommandParser)
        return super().add_subparsers(**options)

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message}\n{usageHint(self.prog)}\n")


class SubcommandParser(ArgumentParser):
    """The parser of a subcommand (``velhanet-league run``): its ``--language`` if given, else its command's."""

    isSubcommand = True
