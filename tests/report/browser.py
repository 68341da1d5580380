"""A real headless Chromium driven over the DevTools protocol: load a page, then read what the browser saw.

    with browser() as chrome:
        seen = chrome.load(path)           # waits for the load event and for the page to go quiet
        seen.text, seen.requests, seen.console, seen.screenshot
        chrome.evaluate("document.title")

`requests` are the URLs the page asked the network for (Network.requestWillBeSent, every scheme but file: and
data:, which never leave the machine); `console` the errors and warnings the page produced (console.error/warn,
uncaught exceptions, the browser's own Log entries such as a Content-Security-Policy refusal). Both are observed,
not assumed: tests/report/test_html_browser.py shows each catching a deliberate request and a deliberate error.

Debian's `chromium` (apt-get install chromium; .ci/run installs it). Without it the tests skip with the reason,
except under CI=true, where they fail: CI must never skip them.

`python -m tests.report.browser REPORT.html OUT.png [WIDTH] [HEIGHT]` writes a screenshot of the top of a page
(the README's docs/report-demo.png).
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

CHROMIUM = "chromium"
_LISTENING = re.compile(r"DevTools listening on (ws://\S+)")
_LOCAL_SCHEMES = ("file:", "data:", "about:")


def missing_prerequisite() -> str | None:
    if shutil.which(CHROMIUM) is None:
        return "Debian's chromium is not installed (apt-get install chromium)"
    try:
        import websocket  # noqa: F401 - the DevTools protocol's transport (websocket-client, the dev extra)
    except ImportError:
        return "websocket-client is not installed (pip install -e '.[dev]')"
    return None


def require_browser() -> None:
    import pytest

    reason = missing_prerequisite()
    if reason is None:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"headless browser unavailable in CI: {reason}", pytrace=False)
    pytest.skip(f"headless browser unavailable: {reason}")


@dataclass
class Seen:
    text: str = ""
    requests: list[str] = field(default_factory=list)
    console: list[str] = field(default_factory=list)
    screenshot: bytes = b""


class Chrome:
    def __init__(self, socket) -> None:
        self._socket = socket
        self._next = 0
        self._events: list[dict] = []
        self.session = ""

    def call(self, method: str, params: dict | None = None, session: bool = True, timeout: float = 60) -> dict:
        self._next += 1
        message = {"id": self._next, "method": method, "params": params or {}}
        if session and self.session:
            message["sessionId"] = self.session
        self._socket.send(json.dumps(message))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            reply = self._receive(deadline - time.monotonic())
            if reply is None:
                continue
            if reply.get("id") == self._next:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self._events.append(reply)
        raise TimeoutError(f"{method}: no answer within {timeout} s")

    def _receive(self, timeout: float) -> dict | None:
        import websocket

        self._socket.settimeout(max(0.05, timeout))
        try:
            return json.loads(self._socket.recv())
        except websocket.WebSocketTimeoutException:
            return None

    def _drain(self, quiet_s: float, limit_s: float) -> None:
        """Collect events until none came for `quiet_s` (or `limit_s` passed)."""
        deadline = time.monotonic() + limit_s
        while time.monotonic() < deadline:
            event = self._receive(quiet_s)
            if event is None:
                return
            self._events.append(event)

    def evaluate(self, expression: str):
        result = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                "awaitPromise": True})
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def load(self, where: str | Path, width: int = 1280, height: int = 900, full_page: bool = True,
             scale: float = 1.0) -> Seen:
        url = where if isinstance(where, str) and "://" in where else Path(where).resolve().as_uri()
        self._events.clear()
        self.call("Emulation.setDeviceMetricsOverride", {"width": width, "height": height,
                                                         "deviceScaleFactor": 1, "mobile": False})
        self.call("Page.navigate", {"url": url})
        deadline = time.monotonic() + 60
        while not any(e.get("method") == "Page.loadEventFired" for e in self._events):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{url}: no load event within 60 s")
            event = self._receive(1.0)
            if event is not None:
                self._events.append(event)
        self._drain(quiet_s=0.5, limit_s=10)
        seen = Seen(text=self.evaluate("document.body ? document.body.innerText : ''"))
        for event in self._events:
            method, params = event.get("method"), event.get("params", {})
            if method == "Network.requestWillBeSent":
                requested = params.get("request", {}).get("url", "")
                if not requested.startswith(_LOCAL_SCHEMES):
                    seen.requests.append(requested)
            elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "warning", "assert"):
                seen.console.append(" ".join(str(a.get("value", a.get("description", ""))) for a in params["args"]))
            elif method == "Runtime.exceptionThrown":
                details = params.get("exceptionDetails", {})
                seen.console.append(details.get("exception", {}).get("description") or details.get("text", ""))
            elif method == "Log.entryAdded" and params.get("entry", {}).get("level") in ("error", "warning"):
                entry = params["entry"]
                seen.console.append(f"{entry.get('source')}: {entry.get('text')} {entry.get('url', '')}".strip())
        clip = None
        if full_page:
            size = self.call("Page.getLayoutMetrics")["cssContentSize"]
            clip = {"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": scale}
        elif scale != 1.0:
            clip = {"x": 0, "y": 0, "width": width, "height": height, "scale": scale}
        shot = self.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": full_page,
                                                    **({"clip": clip} if clip else {})})
        seen.screenshot = base64.b64decode(shot["data"])
        return seen


@contextmanager
def browser() -> Iterator[Chrome]:
    """A fresh headless Chromium (its own profile, no background networking), one page attached."""
    require_browser()
    import websocket

    profile = tempfile.mkdtemp(prefix="rdmatool-chromium-")
    process = subprocess.Popen(
        [CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu", "--remote-debugging-port=0",
         f"--user-data-dir={profile}", "--no-first-run", "--no-default-browser-check",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "about:blank"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    socket = None
    try:
        address = None
        deadline = time.monotonic() + 60
        lines = []
        while address is None and time.monotonic() < deadline:
            line = process.stderr.readline()
            if not line and process.poll() is not None:
                break
            lines.append(line)
            match = _LISTENING.search(line)
            if match:
                address = match.group(1)
        if address is None:
            raise RuntimeError("chromium did not start its DevTools endpoint: " + "".join(lines)[-2000:])
        socket = websocket.create_connection(address, timeout=30, suppress_origin=True)
        chrome = Chrome(socket)
        target = chrome.call("Target.createTarget", {"url": "about:blank"}, session=False)["targetId"]
        chrome.session = chrome.call("Target.attachToTarget", {"targetId": target, "flatten": True},
                                     session=False)["sessionId"]
        for domain in ("Page", "Network", "Runtime", "Log"):
            chrome.call(f"{domain}.enable")
        yield chrome
    finally:
        if socket is not None:
            socket.close()
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        process.stderr.close()
        shutil.rmtree(profile, ignore_errors=True)


def main(argv: list[str]) -> int:
    """Screenshot of the top of a page: REPORT.html OUT.png [WIDTH] [HEIGHT]."""
    page, out = argv[0], argv[1]
    width = int(argv[2]) if len(argv) > 2 else 1200
    height = int(argv[3]) if len(argv) > 3 else 1400
    with browser() as chrome:
        seen = chrome.load(page, width=width, height=height, full_page=False)
    Path(out).write_bytes(seen.screenshot)
    print(f"{out}: {len(seen.screenshot)} bytes; requests {seen.requests}; console {seen.console}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
