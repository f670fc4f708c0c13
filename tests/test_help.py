"""Every option of every twistd plugin and every console script explains itself and shows its default once."""

from __future__ import annotations

import argparse
import importlib
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn

from twisted.application.service import IServiceMaker
from twisted.plugin import getPlugins
from twisted.trial.unittest import SynchronousTestCase

ROOT = Path(__file__).resolve().parent.parent
PLUGINS = ("velha", "gambit-server", "gobang-server", "socha-server", "socha-replay")


def consoleScripts() -> dict[str, str]:
    """``[project.scripts]`` of pyproject.toml: name -> ``module:function``."""
    with (ROOT / "pyproject.toml").open("rb") as file:
        return dict(tomllib.load(file)["project"]["scripts"])


class _Captured(Exception):
    def __init__(self, parser: argparse.ArgumentParser) -> None:
        self.parser = parser


def parserOf(entry: str) -> argparse.ArgumentParser:
    """The parser a console script builds: its entry point runs until it parses, and is stopped there."""
    moduleName, _, functionName = entry.partition(":")
    function = getattr(importlib.import_module(moduleName), functionName)
    original = argparse.ArgumentParser.parse_known_args

    def capture(self: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> NoReturn:
        raise _Captured(self)

    argparse.ArgumentParser.parse_known_args = capture  # type: ignore[method-assign]
    savedArgv = sys.argv
    sys.argv = [entry]
    try:
        function()
    except _Captured as captured:
        return captured.parser
    finally:
        argparse.ArgumentParser.parse_known_args = original  # type: ignore[method-assign]
        sys.argv = savedArgv
    raise AssertionError(f"{entry} never parsed its arguments")


def allParsers(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    """A parser and, recursively, the parsers of its subcommands."""
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                yield from allParsers(sub)


def argparseProblems(name: str, parser: argparse.ArgumentParser) -> list[str]:
    """What is missing in a parser's help: a help text, or its default shown as "(default: X)" once."""
    problems = []
    formatter = parser._get_formatter()
    inRequiredGroup = {
        id(a) for group in parser._mutually_exclusive_groups if group.required for a in group._group_actions
    }
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        label = f"{name} {'/'.join(action.option_strings) or action.dest}"
        if not action.help or action.help == argparse.SUPPRESS:
            problems.append(f"{label}: no help")
            continue
        text = formatter._expand_help(action)
        takesValue = action.nargs != 0 and not isinstance(action, argparse._SubParsersAction)
        needsDefault = takesValue and action.option_strings and not action.required
        needsDefault = needsDefault and id(action) not in inRequiredGroup
        if needsDefault and (text.count("(default: ") != 1 or text.count("default") != 1):
            problems.append(f"{label}: the default should be shown once, as (default: X): {text!r}")
        if not needsDefault and text.count("default") > (0 if takesValue else text.count("(default: off)")):
            problems.append(f"{label}: a default where there is none: {text!r}")  # a flag may say "(default: off)"
    return problems


class HelpTests(SynchronousTestCase):
    def test_everyPluginOption(self) -> None:
        """twistd prints "[default: X]" for a parameter with a default; one without says it in its text."""
        plugins = {maker.tapname: maker for maker in getPlugins(IServiceMaker) if maker.tapname in PLUGINS}
        self.assertEqual(sorted(plugins), sorted(PLUGINS))
        problems = []
        for tapname, maker in sorted(plugins.items()):
            options = maker.options()
            for long in options.longOpt:
                name = long.rstrip("=")
                label = f"twistd {tapname} --{name}"
                doc = (options.docs.get(name) or "").strip()
                if not doc:
                    problems.append(f"{label}: no help")
                    continue
                if not long.endswith("="):  # a flag: off unless given
                    continue
                default = options.defaults.get(name)
                if default is None:
                    ok = doc.count("[default: ") == 1 or "required" in doc
                else:
                    ok = "default" not in doc and str(default) != ""
                if not ok or doc.count("default") > 1:
                    problems.append(f"{label}: default {default!r}, help {doc!r}")
            self.assertNotIn("[default: ]", options.getUsage(), tapname)
        self.assertEqual(problems, [], "\n".join(problems))

    def test_everyConsoleScriptOption(self) -> None:
        scripts = consoleScripts()
        self.assertTrue({"gambit-client", "gobang-client", "velhanet-check", "velhanet-grade"} <= set(scripts))
        problems = []
        for name, entry in sorted(scripts.items()):
            for parser in allParsers(parserOf(entry)):
                problems += argparseProblems(parser.prog or name, parser)
        self.assertEqual(problems, [], "\n".join(problems))

    def test_theCheckWorks(self) -> None:
        """The check finds an option without help, a default not shown and a default shown twice."""
        parser = argparse.ArgumentParser(prog="demo")
        parser.add_argument("--bare", default=1)
        parser.add_argument("--silent", default=2, help="says nothing of its default")
        parser.add_argument("--twice", default=3, help="three (default: %(default)s) [default: 3]")
        parser.add_argument("--good", default=4, help="four (default: %(default)s)")
        parser.add_argument("--flag", action="store_true", help="a flag")
        self.assertEqual(
            [problem.split(":")[0] for problem in argparseProblems("demo", parser)],
            ["demo --bare", "demo --silent", "demo --twice"],
        )
