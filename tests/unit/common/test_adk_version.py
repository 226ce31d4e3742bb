"""The pinned google-adk version: the check, its message, the pin it mirrors, and each ADK
service stopping at start-up when another version is installed."""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys

import pytest

from services.common.adk.version import (
    PINNED_ADK_VERSION,
    AdkVersionError,
    check_adk_version,
    installed_adk_version,
)

ROOT = pathlib.Path(__file__).resolve().parents[3]


def test_the_installed_version_is_the_pinned_one() -> None:
    assert installed_adk_version() == PINNED_ADK_VERSION
    check_adk_version()


def test_another_version_is_refused_naming_both() -> None:
    with pytest.raises(AdkVersionError) as raised:
        check_adk_version(expected="2.13.0", found="2.14.1")
    assert "google-adk 2.13.0" in str(raised.value)
    assert "found 2.14.1" in str(raised.value)


def test_a_missing_adk_is_refused() -> None:
    with pytest.raises(AdkVersionError, match="found none installed"):
        check_adk_version(expected="2.13.0", found="")


@pytest.mark.parametrize("pins", ["pyproject.toml", "requirements/constraints.txt"])
def test_the_constant_mirrors_the_pin(pins: str) -> None:
    [pinned] = re.findall(r"google-adk==([0-9][^\"\s,;]*)", (ROOT / pins).read_text())
    assert pinned == PINNED_ADK_VERSION


@pytest.mark.parametrize("service", ["sessions", "agent", "compactor"])
def test_a_service_on_another_adk_stops_at_start_up(tmp_path: pathlib.Path, service: str) -> None:
    # A google-adk 9.9.9 distribution ahead of the real one on sys.path: its metadata is what
    # importlib.metadata finds first, while the modules still come from the installed 2.13.
    info = tmp_path / "google_adk-9.9.9.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: google-adk\nVersion: 9.9.9\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    result = subprocess.run(
        [sys.executable, "-m", f"services.{service}", "--help"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert result.returncode == 1
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("services.common.adk.version.AdkVersionError: Zocrates needs ")
    assert f"google-adk {PINNED_ADK_VERSION}" in last and "found 9.9.9" in last
