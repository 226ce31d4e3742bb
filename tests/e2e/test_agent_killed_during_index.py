"""`kill -9` of the agent while `zocrates index` runs, as a user would meet it (issue 26's "done
means"): `zocrates run` on a Zotero library of real papers, `zocrates index` streaming its
progress, the agent SIGKILLed part way. The index run goes on to its end (the library service
owns it; the agent holds no index), `zocrates run` starts the agent again without stopping the
other services, and a research turn then answers with citations."""

from __future__ import annotations

import os
import pathlib
import signal
import subprocess
import time

import httpx
import pytest

from services.common import ports
from tests.support import zotero_fixture as zf
from tests.support.ports import free_base_port
from tests.support.processes import ROOT, ZOCRATES, wait_checks, zocrates_run
from tests.support.sse import post_stream_sync

pytestmark = pytest.mark.timeout(600)

# lme4 (the question's paper) and five more, none of them in the trash.
_IN_LIBRARY = [p.file for p in zf.read_manifest() if p.file != zf.TRASHED_FILE]
PAPERS = tuple(dict.fromkeys(["lme4__lmer.pdf", *_IN_LIBRARY]))[:6]


def _service_pid(stack: subprocess.Popen[bytes], module: str) -> int:
    """The pid of the child of `zocrates run` that runs ``module``."""
    for entry in pathlib.Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if int(stat[1]) == stack.pid and module.encode() in argv:
            return int(entry.name)
    raise AssertionError(f"no {module} under zocrates run ({stack.pid})")


def test_kill_9_of_the_agent_during_zocrates_index(tmp_path: pathlib.Path) -> None:
    zotero = zf.build_zotero_library(tmp_path / "Zotero", files=PAPERS)
    base = free_base_port()
    env = {"ZOCRATES_ZOTERO_DIR": str(zotero), "ZOCRATES_PORT": str(base)}
    log = tmp_path / "stack.log"
    with zocrates_run(env, log=log) as stack:
        agent = _service_pid(stack, "services.agent")
        out = tmp_path / "index.log"
        with out.open("wb") as sink:
            index = subprocess.Popen(
                [str(ZOCRATES), "index", "--port", str(base), "--zotero-dir", str(zotero)],
                cwd=ROOT, env={**os.environ, **env}, stdout=sink, stderr=subprocess.STDOUT,
            )  # fmt: skip
        time.sleep(1.5)  # the index run is streaming its progress
        assert index.poll() is None, out.read_text(errors="replace")
        os.kill(agent, signal.SIGKILL)
        killed = time.monotonic()
        assert index.wait(timeout=300) == 0, out.read_text(errors="replace")[-3000:]
        printed = out.read_text(errors="replace")
        assert f"indexed {len(PAPERS)} new and 0 changed attachments" in printed, printed[-2000:]

        # The stack is up: the agent started again, the others never stopped.
        wait_checks(
            f"http://127.0.0.1:{ports.admin_port(base, 'gateway')}/readyz",
            timeout=120,
            agent=True,
            library=True,
            sessions=True,
        )
        text = log.read_text(errors="replace")
        assert "agent exited unexpectedly (code -9); restarting it" in text, text[-3000:]
        assert "agent is ready again" in text
        assert "stopping" not in text.split("restarting it", 1)[1].split("ready again", 1)[0]
        assert _service_pid(stack, "services.agent") != agent
        token = (zotero / "zocrates-data" / "gateway.token").read_text().strip()
        with httpx.Client(
            base_url=f"http://127.0.0.1:{base}",
            headers={"Authorization": f"Bearer {token}"},
            timeout=120,
        ) as api:
            status = api.get("/library/status").json()
            assert status["items"] == len(PAPERS) and status["attachment_states"]["indexed"] == len(
                PAPERS
            ), status
            session = api.post("/sessions", json={"title": "after the kill"}).json()["session"]
            code, events, refusal = post_stream_sync(
                api,
                "/chat",
                {"session_id": session["id"], "prompt": "How does lmer choose its optimizer?"},
            )
            assert code == 200, refusal
            kind, done = events[-1]
            assert kind == "done" and done["status"] == "completed" and done["citations"], done
        ended = time.monotonic() - killed
        print(f"agent SIGKILLed during zocrates index: the index ended {ended:.1f} s later")
