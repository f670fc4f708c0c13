"""Babel's extraction of velhanet's texts, with the rules' texts that live in docstrings.

A conformance check states its rule in its docstring's first line (what
``velhanet-check`` prints beside PASS or FAIL); a docstring cannot be wrapped
in ``_()``, so this extractor adds the first line of every function decorated
``@rule(…)`` to what Babel's own Python extractor finds, and, in a module
of such checks, the names of its sections (``# -- discovery --``: the class
page's groups of rules). ``babel.cfg`` names it; the runner and the class
page translate them where they show them.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import IO, Any

from babel.messages.extract import extract_python

Message = tuple[int, str, Any, list[str]]


def isRule(decorator: ast.expr) -> bool:
    called = decorator.func if isinstance(decorator, ast.Call) else decorator
    return (isinstance(called, ast.Name) and called.id == "rule") or (
        isinstance(called, ast.Attribute) and called.attr == "rule"
    )


def ruleTexts(source: bytes) -> Iterator[tuple[int, str]]:
    """(line, text) of the first docstring line of every ``@rule`` check in a module's source."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and any(map(isRule, node.decorator_list)):
            docstring = ast.get_docstring(node)
            if docstring:
                yield node.body[0].lineno, docstring.strip().splitlines()[0]


def sectionNames(source: bytes) -> Iterator[tuple[int, str]]:
    """(line, name) of every section comment (``# -- discovery --``) of a module's source, named as the class page
    names it."""
    from velhanet.grading.classpage import sectionName

    for number, line in enumerate(source.decode("utf-8").splitlines(), 1):
        name = sectionName(line)
        if name:
            yield number, name


def extract(fileobj: IO[bytes], keywords: Any, commentTags: list[str], options: dict[str, Any]) -> Iterator[Message]:
    """Babel's Python extraction of ``fileobj``, then its rules' texts (Babel calls it as ``extract_python``)."""
    found: Iterator[Any] = extract_python(fileobj, keywords, commentTags, options)  # type: ignore[arg-type]
    yield from found
    fileobj.seek(0)
    source = fileobj.read()
    rules = list(ruleTexts(source))
    for line, text in rules:
        yield line, "", text, ["the rule a conformance check tests, shown beside its verdict"]
    if rules:
        from velhanet.grading.classpage import RULE_GROUP

        for line, name in sectionNames(source):
            yield line, "pgettext", (RULE_GROUP, name), ["a group of conformance rules, a heading of the class page"]
