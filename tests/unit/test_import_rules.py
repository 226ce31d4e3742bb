"""scripts/check_imports.py, the import rules of ``make lint``: it fails on a private
google.adk import outside services/common/adk and on a service reaching into another
service's package, naming the file, line and rule; and the repository passes it."""

from __future__ import annotations

import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
CHECKER = ROOT / "scripts" / "check_imports.py"


def _run(root: pathlib.Path, *paths: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(CHECKER), "--root", str(root), *paths],
        capture_output=True,
        text=True,
        timeout=60,
    )


def _write(root: pathlib.Path, relative: str, source: str) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source)


@pytest.mark.parametrize(
    ("source", "line_number"),
    [
        ("from google.adk.events._rewind_events import _apply_rewinds\n", 2),
        ("from google.adk.runners import _find_active_task_scope\n", 2),
        ("import google.adk.flows.llm_flows.context._contents\n", 2),
        ("def f():\n    from google.adk.events import _abort_events\n", 3),
    ],
)
def test_a_private_adk_import_outside_the_shim_fails(
    tmp_path: pathlib.Path, source: str, line_number: int
) -> None:
    _write(tmp_path, "services/agent/research/bad.py", "x = 1\n" + source)
    result = _run(tmp_path, "services")
    assert result.returncode == 1
    [line, summary] = result.stderr.splitlines()
    assert line.startswith(
        f"services/agent/research/bad.py:{line_number}: adk-private: google.adk."
    )
    assert "services.common.adk" in line
    assert summary == "import rules: 1 violation(s)"


def test_tests_and_benchmarks_are_held_to_the_adk_rule_too(tmp_path: pathlib.Path) -> None:
    _write(tmp_path, "tests/unit/test_x.py", "from google.adk.workflow._errors import E\n")
    result = _run(tmp_path, "tests")
    assert result.returncode == 1
    assert result.stderr.startswith("tests/unit/test_x.py:1: adk-private: ")


@pytest.mark.parametrize(
    ("relative", "source", "imported"),
    [
        (
            "services/agent/research/chat.py",
            "from services.sessions.formatting import find_pending_hitl\n",
            "services.sessions.formatting",
        ),
        (
            "services/compactor/service.py",
            "from services.agent import models\n",
            "services.agent.models",
        ),
        (
            "services/gateway/state.py",
            "import services.sessions.store\n",
            "services.sessions.store",
        ),
        (
            "services/agent/research/x.py",
            "from ...sessions import service\n",
            "services.sessions.service",
        ),
        (  # the agent reads the index only through the library service's client
            "services/agent/research/library_tools.py",
            "from services.library.search import LibrarySearch\n",
            "services.library.search",
        ),
        (
            "services/gateway/routers/library.py",
            "from services.library.library import Library\n",
            "services.library.library",
        ),
        (
            "services/library/search.py",
            "from services.agent.research.library_tools import Tool\n",
            "services.agent.research.library_tools",
        ),
    ],
)
def test_a_service_reaching_into_another_service_fails(
    tmp_path: pathlib.Path, relative: str, source: str, imported: str
) -> None:
    _write(tmp_path, relative, source)
    result = _run(tmp_path, "services")
    assert result.returncode == 1
    [line, _] = result.stderr.splitlines()
    assert line.startswith(f"{relative}:1: cross-service: ")
    assert f"imports {imported};" in line


def test_clients_the_session_adapter_common_and_the_shim_pass(tmp_path: pathlib.Path) -> None:
    _write(
        tmp_path,
        "services/agent/server.py",
        "from services.reranker.client import RerankerClient\n"
        "from services.library.client import LibraryClient\n"
        "from services.sessions import client\n"
        "from services.sessions.remote_session_service import RemoteSessionService\n"
        "from services.common.adk.history import live_events\n"
        "from services.agent.research import chat\n"
        "from google.adk.errors import StaleSessionError\n",
    )
    _write(tmp_path, "services/common/adk/internals.py", "from google.adk.x._y import _z\n")
    _write(tmp_path, "tests/unit/test_y.py", "from services.sessions.store import SessionStore\n")
    result = _run(tmp_path, "services", "tests")
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == "import rules: ok\n"


def test_the_repository_passes() -> None:
    result = _run(ROOT)
    assert result.returncode == 0, result.stderr
