"""A tiny stdlib-only Chrome DevTools Protocol client over ``--remote-debugging-pipe``.

Chromium reads NUL-terminated JSON commands on fd 3 and writes replies/events on fd 4, so no
websocket library and no TCP port are needed. Used by the headless report tests to collect
console errors and uncaught exceptions, evaluate DOM checks and take a screenshot.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import queue
import shutil
import struct
import subprocess
import tempfile
import threading
import time
import zlib
from typing import Any

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")


def find_chromium() -> str | None:
    env = os.environ.get("MASTKIT_CHROMIUM")
    if env:
        return env if shutil.which(env) or os.path.exists(env) else None
    for name in CANDIDATES:
        path = shutil.which(name)
        if path:
            return path
    return None


BASE_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-extensions",
    "--disable-background-networking",
    "--disable-sync",
    "--hide-scrollbars",
    "--mute-audio",
]


class CDPError(RuntimeError):
    pass


class Browser:
    """One headless Chromium driven over the DevTools pipe; a single page session."""

    def __init__(self, exe: str, timeout: float = 60.0) -> None:
        self.timeout = timeout
        self._profile = tempfile.mkdtemp(prefix="mastkit-chromium-")
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()
        # Park the child's ends on high fds so the dup2 to 3/4 in the child cannot clobber them.
        hi_r = fcntl.fcntl(to_child_r, fcntl.F_DUPFD, 100)
        hi_w = fcntl.fcntl(from_child_w, fcntl.F_DUPFD, 100)
        os.close(to_child_r)
        os.close(from_child_w)

        def child_fds() -> None:
            os.dup2(hi_r, 3)
            os.dup2(hi_w, 4)

        self.proc = subprocess.Popen(
            [exe, *BASE_FLAGS, "--remote-debugging-pipe", f"--user-data-dir={self._profile}", "about:blank"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            pass_fds=(3, 4),
            preexec_fn=child_fds,
        )
        os.close(hi_r)
        os.close(hi_w)
        self._out = os.fdopen(to_child_w, "wb", buffering=0)
        self._in = os.fdopen(from_child_r, "rb", buffering=0)
        self._next_id = 0
        self._messages: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.events: list[dict[str, Any]] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._stderr: list[bytes] = []
        threading.Thread(target=self._drain_stderr, daemon=True).start()
        self.session: str | None = None

    def _drain_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self._stderr.append(line)

    def _read(self) -> None:
        buf = b""
        while True:
            try:
                chunk = self._in.read(65536)
            except OSError:
                chunk = b""
            if not chunk:
                self._messages.put(None)
                return
            buf += chunk
            while b"\0" in buf:
                raw, buf = buf.split(b"\0", 1)
                self._messages.put(json.loads(raw))

    def send(
        self, method: str, params: dict[str, Any] | None = None, *, session: bool = True
    ) -> dict[str, Any]:
        self._next_id += 1
        msg: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        self._out.write(json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._get(deadline, f"reply to {method}")
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise CDPError(f"{method}: {reply['error']}")
                return dict(reply.get("result", {}))
            if "method" in reply:
                self.events.append(reply)

    def _get(self, deadline: float, what: str) -> dict[str, Any]:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise CDPError(f"timed out waiting for {what}; stderr: {b''.join(self._stderr)[-2000:]!r}")
        try:
            msg = self._messages.get(timeout=remaining)
        except queue.Empty:
            raise CDPError(f"timed out waiting for {what}") from None
        if msg is None:
            raise CDPError(
                f"chromium closed the pipe while waiting for {what}: {b''.join(self._stderr)[-2000:]!r}"
            )
        return msg

    def wait_event(self, method: str, timeout: float | None = None) -> dict[str, Any]:
        for e in self.events:
            if e.get("method") == method:
                return e
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            msg = self._get(deadline, method)
            if "method" in msg:
                self.events.append(msg)
                if msg["method"] == method:
                    return msg

    def pump(self, seconds: float) -> None:
        """Collect events for a while (late errors from timers)."""
        deadline = time.monotonic() + seconds
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return
            try:
                msg = self._messages.get(timeout=remaining)
            except queue.Empty:
                return
            if msg is None:
                return
            if "method" in msg:
                self.events.append(msg)

    def open(self, url: str, width: int = 1100, height: int = 900) -> None:
        target = self.send("Target.createTarget", {"url": "about:blank"}, session=False)["targetId"]
        self.session = self.send(
            "Target.attachToTarget", {"targetId": target, "flatten": True}, session=False
        )["sessionId"]
        for domain in ("Runtime", "Log", "Page"):
            self.send(f"{domain}.enable")
        self.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
        )
        self.events.clear()
        self.send("Page.navigate", {"url": url})
        self.wait_event("Page.loadEventFired")

    def evaluate(self, expression: str) -> Any:
        result = self.send(
            "Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True}
        )
        if "exceptionDetails" in result:
            raise CDPError(f"evaluate failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    def screenshot(self) -> bytes:
        data = self.send("Page.captureScreenshot", {"format": "png"})["data"]
        return base64.b64decode(data)

    def problems(self) -> list[str]:
        """Uncaught exceptions, console errors and browser-reported errors (CSP, resources) so far."""
        out = []
        for e in self.events:
            p = e.get("params", {})
            if e["method"] == "Runtime.exceptionThrown":
                d = p.get("exceptionDetails", {})
                out.append(f"uncaught: {d.get('text')} {d.get('exception', {}).get('description', '')}")
            elif e["method"] == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append(
                    "console.error: " + " ".join(str(a.get("value", a.get("description"))) for a in p["args"])
                )
            elif e["method"] == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                out.append(f"log error: {p['entry'].get('text')} ({p['entry'].get('url', '')})")
        return out

    def close(self) -> None:
        with contextlib.suppress(CDPError, OSError):
            self.send("Browser.close", session=False)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fh in (self._out, self._in):
            with contextlib.suppress(OSError):
                fh.close()
        shutil.rmtree(self._profile, ignore_errors=True)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def dump_dom(exe: str, url: str, timeout: float = 60.0) -> str:
    """``chromium --headless --dump-dom``: the DOM after scripts ran, serialised."""
    with tempfile.TemporaryDirectory(prefix="mastkit-chromium-") as profile:
        done = subprocess.run(
            [exe, *BASE_FLAGS, f"--user-data-dir={profile}", "--dump-dom", url],
            capture_output=True,
            timeout=timeout,
            check=False,
        )
    return done.stdout.decode("utf-8", "replace")


def png_colours(png: bytes, max_colours: int = 64) -> set[tuple[int, ...]]:
    """Distinct pixel values of an 8-bit RGB/RGBA PNG (stdlib zlib; stops at ``max_colours``)."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, b""
    width = height = bit_depth = colour_type = 0
    while pos < len(png):
        (length,) = struct.unpack(">I", png[pos : pos + 4])
        kind = png[pos + 4 : pos + 8]
        body = png[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            width, height, bit_depth, colour_type = struct.unpack(">IIBB", body[:10])
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
        pos += 12 + length
    assert bit_depth == 8 and colour_type in (2, 6), f"unsupported PNG: depth {bit_depth}, type {colour_type}"
    bpp = 3 if colour_type == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    prev = bytearray(stride)
    colours: set[tuple[int, ...]] = set()
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            if f == 1:
                line[i] = (line[i] + a) & 0xFF
            elif f == 2:
                line[i] = (line[i] + b) & 0xFF
            elif f == 3:
                line[i] = (line[i] + ((a + b) >> 1)) & 0xFF
            elif f == 4:
                c = prev[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pred) & 0xFF
        for x in range(0, stride, bpp * 7):  # sample every 7th pixel
            colours.add(tuple(line[x : x + 3]))
        if len(colours) >= max_colours:
            return colours
        prev = line
    return colours
