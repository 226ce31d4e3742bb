"""Every command explains itself with --help and fails at start-up with a message a person can
act on when its configuration is incomplete or invalid."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

from tests.support.ports import free_base_port
from tests.support.processes import ROOT

ZOCRATES = pathlib.Path(sys.executable).parent / "zocrates"


def _run(args: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("ZOCRATES_")}
    return subprocess.run(
        args, cwd=ROOT, env={**clean, **(env or {})}, capture_output=True, text=True, timeout=60
    )


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ([sys.executable, "-m", "services.gateway", "--help"], "ZOCRATES_SESSIONS_ADDR (required)"),
        ([sys.executable, "-m", "services.sessions", "--help"], "ZOCRATES_DATABASE_URL"),
        ([str(ZOCRATES), "--help"], "run"),
        ([str(ZOCRATES), "run", "--help"], "--zotero-dir"),
    ],
)
def test_help(args: list[str], expected: str) -> None:
    result = _run(args)
    assert result.returncode == 0, result.stderr
    assert expected in result.stdout


def test_gateway_without_its_peer_address_says_what_to_set(tmp_path: pathlib.Path) -> None:
    result = _run(
        [sys.executable, "-m", "services.gateway"], {"ZOCRATES_ZOTERO_DIR": str(tmp_path)}
    )
    assert result.returncode != 0
    assert "ZOCRATES_SESSIONS_ADDR is required" in result.stderr
    assert "Traceback" not in result.stderr


def test_invalid_port_is_named(tmp_path: pathlib.Path) -> None:
    result = _run([sys.executable, "-m", "services.sessions"], {"ZOCRATES_PORT": "80"})
    assert result.returncode != 0
    assert "ZOCRATES_PORT" in result.stderr and "Traceback" not in result.stderr


def test_invalid_user_config_stops_the_gateway_and_is_left_untouched(
    tmp_path: pathlib.Path,
) -> None:
    config = tmp_path / "zocrates-data" / "zocrates_config.json"
    config.parent.mkdir()
    config.write_text(json.dumps({"max_saved_sessions": -5}))
    before = config.read_bytes()
    result = _run(
        [sys.executable, "-m", "services.gateway"],
        {
            "ZOCRATES_ZOTERO_DIR": str(tmp_path),
            "ZOCRATES_PORT": str(free_base_port()),
            "ZOCRATES_SESSIONS_ADDR": "127.0.0.1:1",
            "ZOCRATES_AGENT_ADDR": "127.0.0.1:1",
            "ZOCRATES_LIBRARY_ADDR": "127.0.0.1:1",
        },
    )
    assert result.returncode != 0
    assert "max_saved_sessions" in result.stderr and str(config) in result.stderr
    assert "Traceback" not in result.stderr
    assert config.read_bytes() == before
