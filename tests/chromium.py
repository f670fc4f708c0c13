"""A real headless Chromium for the browser tests, driven by the DevTools protocol over a pipe.

``--remote-debugging-pipe``: Chromium reads commands on its fd 3 and writes
answers on its fd 4, JSON messages ended by a NUL byte, so no WebSocket
client is needed. ``--dump-dom`` cannot be used on a page that keeps an
event stream open: it waits for the network to be idle, which never comes.

The tests ask the page itself to wait: L{Page.waitFor} evaluates a promise
that resolves when a condition on the DOM holds (checked on each DOM
mutation), so no test sleeps.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from typing import Any

from tests.processes import stopProcess

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
NO_CHROMIUM = "Chromium is not installed (Debian: apt-get install -y chromium)"


def _high(fd: int) -> int:
    """The same pipe end on a descriptor from 5 up: moving it to 3 or 4 in the child clobbers nothing."""
    import fcntl

    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 5)
    os.close(fd)
    return moved


class Chromium:
    def __init__(self, testCase: Any) -> None:
        assert CHROMIUM is not None
        commandsRead, self.commands = os.pipe()
        self.answers, answersWrite = os.pipe()
        commandsRead, answersWrite = _high(commandsRead), _high(answersWrite)
        self.profile = tempfile.mkdtemp(prefix="velhanet-chromium-")
        arguments = [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--remote-debugging-pipe",
            f"--user-data-dir={self.profile}",
            "--window-size=1280,900",
            "about:blank",
        ]
        script = f'exec "$0" "$@" 3<&{commandsRead} 4>&{answersWrite}'
        self.process = subprocess.Popen(
            ["bash", "-c", script, CHROMIUM, *arguments],
            pass_fds=(commandsRead, answersWrite),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=None if os.environ.get("VELHANET_CHROMIUM_LOG") else subprocess.DEVNULL,
        )
        os.close(commandsRead)
        os.close(answersWrite)
        self.buffer = b""
        self.events: list[dict[str, Any]] = []
        self.nextId = 0
        testCase.addCleanup(self.stop)

    def call(
        self, method: str, params: dict[str, Any] | None = None, session: str | None = None, seconds: float = 30
    ) -> Any:
        """Send one command; return its result (raise on a protocol error)."""
        self.nextId += 1
        message: dict[str, Any] = {"id": self.nextId, "method": method, "params": params or {}}
        if session is not None:
            message["sessionId"] = session
        os.write(self.commands, json.dumps(message).encode() + b"\0")
        answer = self._receive(lambda m: m.get("id") == self.nextId, method, seconds)
        if "error" in answer:
            raise AssertionError(f"{method}: {answer['error']}")
        return answer["result"]

    def waitForEvent(self, method: str, session: str, seconds: float = 30) -> Any:
        """The next event ``method`` of ``session`` (kept if it came while a command was answered)."""
        return self._receive(lambda m: m.get("method") == method and m.get("sessionId") == session, method, seconds)

    def _receive(self, wanted: Callable[[dict[str, Any]], bool], what: str, seconds: float) -> dict[str, Any]:
        deadline = time.monotonic() + seconds
        while True:
            for index, message in enumerate(self.events):
                if wanted(message):
                    return self.events.pop(index)
            while b"\0" in self.buffer:
                raw, _, self.buffer = self.buffer.partition(b"\0")
                message = json.loads(raw)
                if wanted(message):
                    return message
                if "method" in message:
                    self.events.append(message)
            left = deadline - time.monotonic()
            if left <= 0 or self.process.poll() is not None:
                raise AssertionError(f"Chromium: no {what} within {seconds} s")
            ready, _, _ = select.select([self.answers], [], [], left)
            if ready:
                chunk = os.read(self.answers, 65536)
                if not chunk:
                    raise AssertionError("Chromium closed its DevTools pipe")
                self.buffer += chunk

    def open(self, url: str) -> Page:
        """A new tab showing ``url`` once its load event fired."""
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        self.call("Page.enable", {}, session)
        self.call("Page.navigate", {"url": url}, session)
        self.waitForEvent("Page.loadEventFired", session)
        return Page(self, session)

    def stop(self) -> None:
        stopProcess(self.process)
        for fd in (self.commands, self.answers):
            with contextlib.suppress(OSError):
                os.close(fd)
        shutil.rmtree(self.profile, ignore_errors=True)


class Page:
    def __init__(self, browser: Chromium, session: str) -> None:
        self.browser = browser
        self.session = session

    def evaluate(self, expression: str, seconds: float = 30) -> Any:
        result = self.browser.call(
            "Runtime.evaluate",
            {"expression": expression, "awaitPromise": True, "returnByValue": True},
            self.session,
            seconds + 5,
        )
        if "exceptionDetails" in result:
            raise AssertionError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def waitFor(self, condition: str, value: str, seconds: float = 30) -> Any:
        """``value`` once the JavaScript ``condition`` holds, re-checked on every change of the DOM."""
        expression = f"""
        new Promise((resolve, reject) => {{
          const check = () => {{
            try {{ if ({condition}) {{ observer.disconnect(); resolve({value}); }} }} catch (e) {{}}
          }};
          const observer = new MutationObserver(check);
          const start = () => {{
            observer.observe(document, {{subtree: true, childList: true, attributes: true, characterData: true}});
            check();
          }};
          if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start); else start();
          const fail = () => {{ observer.disconnect(); reject(new Error({json.dumps("timed out: " + condition)})); }};
          setTimeout(fail, {int(seconds * 1000)});
        }})"""
        return self.evaluate(expression, seconds)

    def chooseFile(self, selector: str, path: str) -> None:
        """Choose ``path`` in the file input ``selector``, as a person does in the file dialog."""
        root = self.browser.call("DOM.getDocument", {}, self.session)["root"]["nodeId"]
        node = self.browser.call("DOM.querySelector", {"nodeId": root, "selector": selector}, self.session)["nodeId"]
        self.browser.call("DOM.setFileInputFiles", {"files": [path], "nodeId": node}, self.session)

    def clickAndLoad(self, selector: str, seconds: float = 30) -> None:
        """Click ``selector`` (a form's button, a link) and return once the page it leads to has loaded."""
        self.evaluate(f"window.__leaving = true; void document.querySelector({json.dumps(selector)}).click()")
        self._newPageLoaded(seconds)

    def go(self, url: str, seconds: float = 30) -> None:
        self.evaluate("window.__leaving = true")
        self.browser.call("Page.navigate", {"url": url}, self.session)
        self._newPageLoaded(seconds)

    def _newPageLoaded(self, seconds: float) -> None:
        """Until a load event of a page other than the one marked ``__leaving`` (a page that reloads itself
        meanwhile fires load events of its own)."""
        deadline = time.monotonic() + seconds
        while True:
            self.browser.waitForEvent("Page.loadEventFired", self.session, max(0.1, deadline - time.monotonic()))
            try:
                if self.evaluate("window.__leaving === undefined && document.readyState === 'complete'", 5):
                    return
            except AssertionError:
                pass  # between two pages
            if time.monotonic() > deadline:
                raise AssertionError("the next page did not load")

    def waitThroughReloads(self, condition: str, value: str, seconds: float = 60) -> Any:
        """As L{waitFor}, on a page that renders itself again meanwhile (each reload ends one wait: the next
        one begins on the new page)."""
        deadline = time.monotonic() + seconds
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                try:
                    shown = self.evaluate(value, 5)
                except AssertionError as error:
                    shown = str(error)
                raise AssertionError(f"timed out: {condition}; it is {shown!r}")
            try:
                return self.waitFor(condition, value, min(left, 10))
            except AssertionError:
                continue

    def screenshot(self, path: str) -> None:
        import base64

        data = self.browser.call("Page.captureScreenshot", {"format": "png"}, self.session)["data"]
        with open(path, "wb") as out:
            out.write(base64.b64decode(data))
