"""Headless Chromium driven over the DevTools protocol on a pipe (no websocket, no
dependency): open a page, read its DOM and console, take screenshots.

``Browser`` starts Debian's ``chromium`` with ``--remote-debugging-pipe`` (the browser
reads commands on fd 3 and writes answers and events on fd 4, each message a JSON text
ended by a NUL byte); ``Page`` is one tab: the events it keeps are its own session's."""
from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any


def _above_4(fd: int) -> int:
    """``fd`` as a descriptor numbered 10 or more (the old one closed)."""
    high = fcntl.fcntl(fd, fcntl.F_DUPFD, 10)
    os.close(fd)
    return high


class Browser:
    def __init__(self, binary: str | None = None) -> None:
        binary = binary or shutil.which("chromium") or shutil.which("chromium-browser")
        if binary is None:
            raise FileNotFoundError("chromium")
        self._profile = tempfile.mkdtemp(prefix="kmeta-chromium-")
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        # the browser's ends go to fds 3 and 4 in the child; first they are moved above
        # both (pytest's output capture holds low fds), so one move cannot undo the other
        to_browser_r, from_browser_w = (_above_4(to_browser_r), _above_4(from_browser_w))

        def ends_at_3_and_4() -> None:
            os.dup2(to_browser_r, 3)
            os.dup2(from_browser_w, 4)

        self._proc = subprocess.Popen(
            [binary, "--headless=new", "--remote-debugging-pipe", "--no-sandbox",
             "--disable-gpu", "--no-first-run", "--no-default-browser-check",
             "--disable-extensions", "--disable-background-networking",
             f"--user-data-dir={self._profile}", "about:blank"],
            # dup2 leaves 3 and 4 inheritable; every other fd Python opened is not
            preexec_fn=ends_at_3_and_4, close_fds=False,  # noqa: PLW1509
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buf = b""
        self._id = 0
        self.events: list[dict[str, Any]] = []

    def send(self, method: str, params: dict | None = None, session: str | None = None,
             timeout: float = 30) -> dict[str, Any]:
        self._id += 1
        msg: dict[str, Any] = {"id": self._id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._to_browser, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._read(deadline)
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def _read(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("chromium did not answer")
            ready, _, _ = select.select([self._from_browser], [], [], left)
            if ready:
                chunk = os.read(self._from_browser, 1 << 20)
                if not chunk:
                    raise EOFError("chromium closed the pipe")
                self._buf += chunk
        line, self._buf = self._buf.split(b"\0", 1)
        return json.loads(line)

    def wait_event(self, method: str, session: str | None = None, after: int = 0,
                   timeout: float = 30) -> dict[str, Any]:
        """The first event ``method`` of ``session`` among the events from index
        ``after`` on, read from the pipe until it comes."""
        deadline = time.monotonic() + timeout
        i = after
        while True:
            while i < len(self.events):
                e = self.events[i]
                i += 1
                if e.get("method") == method and (session is None
                                                   or e.get("sessionId") == session):
                    return e
            self.events.append(self._read(deadline))

    def close(self) -> None:
        # the browser may be gone already (it closes the pipe as it quits)
        with contextlib.suppress(OSError, EOFError, TimeoutError, RuntimeError):
            self.send("Browser.close", timeout=5)
        try:
            self._proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._proc.kill()
        os.close(self._to_browser)
        os.close(self._from_browser)
        shutil.rmtree(self._profile, ignore_errors=True)


class Page:
    def __init__(self, browser: Browser, width: int = 1280, height: int = 900) -> None:
        self.b = browser
        target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.target = target
        self.s = browser.send("Target.attachToTarget", {"targetId": target,
                                                         "flatten": True})["sessionId"]
        for m in ("Page.enable", "Runtime.enable", "Log.enable", "Network.enable"):
            browser.send(m, session=self.s)
        browser.send("Emulation.setDeviceMetricsOverride", {"width": width, "height": height,
                     "deviceScaleFactor": 1, "mobile": False}, session=self.s)

    def open(self, url: str) -> float:
        """Load ``url``; the seconds until its load event.  The page's events before it
        (console, requests) are forgotten."""
        self.b.events = [e for e in self.b.events if e.get("sessionId") != self.s]
        mark = len(self.b.events)
        t = time.perf_counter()
        self.b.send("Page.navigate", {"url": url}, session=self.s)
        self.b.wait_event("Page.loadEventFired", session=self.s, after=mark, timeout=60)
        return time.perf_counter() - t

    def _events(self) -> list[dict[str, Any]]:
        return [e for e in self.b.events if e.get("sessionId") == self.s]

    def js(self, expression: str) -> Any:
        r = self.b.send("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                        "awaitPromise": True}, session=self.s)
        if "exceptionDetails" in r:
            raise RuntimeError(r["exceptionDetails"])
        return r["result"].get("value")

    def screenshot(self, path: Path, selector: str | None = None) -> None:
        params: dict[str, Any] = {"format": "png", "captureBeyondViewport": True}
        if selector:
            box = self.js(f"(() => {{const r = document.querySelector({json.dumps(selector)}).getBoundingClientRect();"
                          "return {x: r.x + scrollX, y: r.y + scrollY, width: r.width, height: r.height}})()")
            params["clip"] = {**box, "scale": 1}
        data = self.b.send("Page.captureScreenshot", params, session=self.s)["data"]
        path.write_bytes(base64.b64decode(data))

    def console_errors(self) -> list[str]:
        out = []
        for e in self._events():
            m, p = e.get("method"), e.get("params", {})
            if m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append(str(p.get("args")))
            elif m == "Runtime.exceptionThrown":
                out.append(str(p.get("exceptionDetails")))
            elif m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                out.append(p["entry"].get("text", ""))
        return out

    def requests(self) -> list[str]:
        return [e["params"]["request"]["url"] for e in self._events()
                if e.get("method") == "Network.requestWillBeSent"]

    def close(self) -> None:
        self.b.send("Target.closeTarget", {"targetId": self.target})
