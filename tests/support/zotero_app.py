"""A real Zotero application for the opt-in suite in tests/real_zotero.

``ZoteroApp`` starts the Zotero that ``ZOTERO_BIN`` names (8, 9 or 10; headless, a fresh
profile and data directory given by the test) with a test-only driver add-on
(tests/real_zotero/driver): the driver asks this module's local HTTP server for the next step,
runs it with Zotero's own API inside Zotero and posts the result back. Zotero's output
(``-ZoteroDebugText`` plus every console message, which ``browser.dom.window.dump.enabled`` and
``devtools.console.stdout.chrome`` print as ``JavaScript error: ...`` and ``console.error:
...`` lines) is kept in a log file and parsed by :func:`console_problems`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import http.server
import itertools
import json
import os
import pathlib
import queue
import re
import shutil
import signal
import subprocess
import threading
import time
import zipfile
from typing import Any

from tests.support.processes import ROOT

ZOTERO_BIN_ENV = "ZOTERO_BIN"
DRIVER_DIR = ROOT / "tests" / "real_zotero" / "driver"
DRIVER_ID = "driver@app-tests.invalid"
PLUGIN_ID = "zocrates@zocrates.dev"

# Lines of Zotero's output that are console errors and warnings.
_PROBLEM = re.compile(
    r"^(JavaScript (?:error|warning|strict warning)|console\.(?:error|warn)"
    r"|\[(?:JavaScript )?Error)"
)
# What names the plugin in a message or its source.
PLUGIN_MARKS = ("zocrates@zocrates.dev", "chrome://zocrates/", "zocrates.js", "Zocrates")


class DriverError(RuntimeError):
    """A step failed inside Zotero: its message and stack, as the driver reported them."""


def base_prefs(data_dir: pathlib.Path, reporter: str) -> dict[str, Any]:
    """The profile's user.js: a data directory of the test's, nothing that reaches the
    network, Zotero's console on stdout, and the driver's reporter address."""
    return {
        "extensions.zotero.dataDir": str(data_dir),
        "extensions.zotero.useDataDir": True,
        "extensions.zotero.firstRunGuidance": False,
        "extensions.zotero.showPostUpgradeBanner": False,
        "extensions.zotero.sync.autoSync": False,
        "extensions.zotero.automaticScraperUpdates": False,
        "extensions.zotero.retractions.enabled": False,
        "extensions.zotero.httpServer.enabled": False,
        # Zotero's PDF worker is not part of a source build (the plugin never needs it).
        "extensions.zotero.fulltext.pdfMaxPages": 0,
        "app.update.enabled": False,
        "app.update.auto": False,
        "extensions.update.enabled": False,
        "extensions.autoDisableScopes": 0,
        "extensions.enabledScopes": 15,
        "xpinstall.signatures.required": False,
        "browser.dom.window.dump.enabled": True,
        "devtools.console.stdout.chrome": True,
        "javascript.options.asyncstack_capture_debuggee_only": False,
        "extensions.apptest.reporter": reporter,
    }


def write_user_js(profile: pathlib.Path, prefs: dict[str, Any]) -> None:
    profile.mkdir(parents=True, exist_ok=True)
    lines = [f"user_pref({json.dumps(k)}, {json.dumps(v)});" for k, v in prefs.items()]
    (profile / "user.js").write_text("\n".join(lines) + "\n", encoding="utf-8")


def pack_driver(dest: pathlib.Path) -> pathlib.Path:
    """The driver add-on as an .xpi (a zip of tests/real_zotero/driver)."""
    with zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as xpi:
        for path in sorted(DRIVER_DIR.iterdir()):
            xpi.write(path, path.name)
    return dest


def sideload(profile: pathlib.Path, addon_id: str, xpi: pathlib.Path) -> None:
    """Install an add-on into a profile the way an add-on manager leaves it: <id>.xpi in
    the profile's extensions folder (picked up at the next start)."""
    folder = profile / "extensions"
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(xpi, folder / f"{addon_id}.xpi")


@dataclasses.dataclass(frozen=True)
class Problem:
    line: str

    @property
    def from_plugin(self) -> bool:
        return any(mark in self.line for mark in PLUGIN_MARKS)

    @property
    def unattributed(self) -> bool:
        """A script error with no source at all (``JavaScript error: , line 0: ...``): an
        unhandled rejection, say, which only a run without the plugin can tell apart."""
        return bool(re.match(r"JavaScript (?:error|warning): , line 0: ", self.line))

    @property
    def key(self) -> str:
        """The line without what changes from run to run (numbers, paths of temp folders)."""
        return re.sub(r"\d+", "N", re.sub(r"/tmp/\S+", "/tmp/…", self.line))


def console_problems(text: str) -> list[Problem]:
    """Console errors and warnings in Zotero's output, one per line that starts one."""
    problems: list[Problem] = []
    for line in text.splitlines():
        if _PROBLEM.match(line):
            problems.append(Problem(line.strip()))
    return problems


class _Reporter(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.steps: queue.Queue[dict[str, Any]] = queue.Queue()
        self.results: dict[int, dict[str, Any]] = {}
        self.arrived = threading.Condition()
        self.hello: dict[str, Any] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(http.server.BaseHTTPRequestHandler):
    server: _Reporter

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _reply(self, status: int, body: Any = None) -> None:
        data = b"" if body is None else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        try:
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # Zotero quit while it was asking for the next step

    def do_GET(self) -> None:
        if self.path != "/next":
            self._reply(404, {"error": "not found"})
            return
        try:
            step = self.server.steps.get(timeout=0.5)
        except queue.Empty:
            self._reply(204)
            return
        self._reply(200, step)

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        with self.server.arrived:
            if self.path == "/hello":
                self.server.hello = body
            elif self.path == "/result":
                self.server.results[int(body["id"])] = body
            else:
                self._reply(404, {"error": "not found"})
                return
            self.server.arrived.notify_all()
        self._reply(200, {"ok": True})


class ZoteroApp:
    """One run of Zotero: ``start()``, ``call(op, **args)`` on the driver, ``quit()``."""

    def __init__(
        self,
        binary: str,
        *,
        profile: pathlib.Path,
        data_dir: pathlib.Path,
        log: pathlib.Path,
        prefs: dict[str, Any] | None = None,
    ) -> None:
        self.binary = binary
        self.profile = profile
        self.data_dir = data_dir
        self.log = log
        self.extra_prefs = prefs or {}
        self.reporter = _Reporter()
        self._ids = itertools.count(1)
        self.proc: subprocess.Popen[bytes] | None = None
        self.hello: dict[str, Any] = {}
        self._serving = False

    def start(self, *, timeout: float = 180.0) -> dict[str, Any]:
        """Start Zotero; its driver's hello. On any failure Zotero is killed (it runs in a
        session of its own: nothing else would stop it) and the error raised."""
        try:
            return self._start(timeout)
        except BaseException:
            self.kill()
            raise

    def _start(self, timeout: float) -> dict[str, Any]:
        threading.Thread(target=self.reporter.serve_forever, daemon=True).start()
        self._serving = True
        self.data_dir.mkdir(parents=True, exist_ok=True)
        write_user_js(
            self.profile, {**base_prefs(self.data_dir, self.reporter.url), **self.extra_prefs}
        )
        sideload(self.profile, DRIVER_ID, pack_driver(self.profile.parent / "driver.xpi"))
        env = {**os.environ, "MOZ_HEADLESS": "1", "MOZ_CRASHREPORTER_DISABLE": "1"}
        with self.log.open("ab") as sink:
            self.proc = subprocess.Popen(
                [self.binary, "-profile", str(self.profile), "-no-remote", "--headless",
                 "-ZoteroDebugText"],
                stdout=sink, stderr=subprocess.STDOUT, env=env, start_new_session=True,
            )  # fmt: skip
        deadline = time.monotonic() + timeout
        with self.reporter.arrived:
            while self.reporter.hello is None:
                if self.proc.poll() is not None:
                    raise RuntimeError(
                        f"Zotero exited with {self.proc.returncode} before the driver started; "
                        f"its output:\n{self.output()[-4000:]}"
                    )
                if time.monotonic() > deadline:
                    raise TimeoutError(
                        f"the driver add-on did not report within {timeout:.0f} s; Zotero's "
                        f"output:\n{self.output()[-4000:]}"
                    )
                self.reporter.arrived.wait(0.5)
            self.hello = self.reporter.hello
        return self.hello

    def call(self, op: str, *, timeout: float = 240.0, **args: Any) -> Any:
        """Run one driver op inside Zotero; its JSON result, or :class:`DriverError`."""
        step_id = next(self._ids)
        self.reporter.steps.put({"id": step_id, "op": op, "args": args})
        deadline = time.monotonic() + timeout
        with self.reporter.arrived:
            while step_id not in self.reporter.results:
                assert self.proc is not None
                if self.proc.poll() is not None:
                    raise RuntimeError(
                        f"Zotero exited with {self.proc.returncode} during {op}; its output:\n"
                        f"{self.output()[-4000:]}"
                    )
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{op} did not finish within {timeout:.0f} s")
                self.reporter.arrived.wait(0.5)
            reply = self.reporter.results.pop(step_id)
        if "error" in reply:
            error = reply["error"]
            raise DriverError(f"{op}: {error.get('message')}\n{error.get('stack', '')}")
        return reply.get("result")

    def quit(self, *, timeout: float = 90.0) -> int:
        """Quit Zotero as File > Quit does (the add-ons' shutdown runs); kill on a hang."""
        assert self.proc is not None
        if self.proc.poll() is None:
            with contextlib.suppress(RuntimeError, TimeoutError, DriverError):
                self.call("quit", timeout=30)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self._close_reporter()
        return self.proc.returncode

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        self._close_reporter()

    def _close_reporter(self) -> None:
        if self._serving:
            self.reporter.shutdown()
            self._serving = False
        self.reporter.server_close()

    def output(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""
