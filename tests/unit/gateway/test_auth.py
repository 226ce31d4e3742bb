"""The gateway token file (0600, stable) and the DNS-rebinding Host check."""

from __future__ import annotations

import pathlib
import re
import stat

import pytest

from services.gateway.auth import TOKEN_FILE_NAME, ensure_token_file, host_allowed, token_matches
from services.gateway.config import LOOPBACK_HOSTS

URLSAFE = re.compile(r"^[A-Za-z0-9_-]+$")


def _mode(path: pathlib.Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


# --- token file ----------------------------------------------------------------------------


def test_token_file_created_0600_with_enough_entropy(tmp_path: pathlib.Path) -> None:
    data_dir = tmp_path / "zocrates-data"  # created on demand
    token = ensure_token_file(data_dir)
    path = data_dir / TOKEN_FILE_NAME
    assert path.is_file()
    assert _mode(path) == 0o600
    assert len(token) >= 32
    assert URLSAFE.match(token)
    assert path.read_text(encoding="utf-8").strip() == token
    assert [p.name for p in data_dir.iterdir()] == [TOKEN_FILE_NAME]  # no temp file left


def test_token_stable_across_calls(tmp_path: pathlib.Path) -> None:
    first = ensure_token_file(tmp_path)
    second = ensure_token_file(tmp_path)
    assert first == second
    assert _mode(tmp_path / TOKEN_FILE_NAME) == 0o600


def test_tokens_differ_between_data_dirs(tmp_path: pathlib.Path) -> None:
    a = ensure_token_file(tmp_path / "a")
    b = ensure_token_file(tmp_path / "b")
    assert a != b


def test_given_token_written_when_file_absent(tmp_path: pathlib.Path) -> None:
    secret = "deployment-secret-0123456789-abcdefghijklmnop"
    assert ensure_token_file(tmp_path, secret) == secret
    path = tmp_path / TOKEN_FILE_NAME
    assert path.read_text(encoding="utf-8").strip() == secret
    assert _mode(path) == 0o600
    # Later starts without a configured token keep reading the same one.
    assert ensure_token_file(tmp_path) == secret


def test_existing_file_with_same_token_kept(tmp_path: pathlib.Path) -> None:
    generated = ensure_token_file(tmp_path)
    assert ensure_token_file(tmp_path, generated) == generated


def test_world_readable_file_tightened(tmp_path: pathlib.Path) -> None:
    path = tmp_path / TOKEN_FILE_NAME
    path.write_text("existing-token-value-with-enough-length-000\n", encoding="utf-8")
    path.chmod(0o644)
    assert ensure_token_file(tmp_path) == "existing-token-value-with-enough-length-000"
    assert _mode(path) == 0o600


def test_group_writable_file_tightened(tmp_path: pathlib.Path) -> None:
    path = tmp_path / TOKEN_FILE_NAME
    path.write_text("tok-abcdefghijklmnopqrstuvwxyz-0123456789", encoding="utf-8")
    path.chmod(0o660)
    ensure_token_file(tmp_path)
    assert _mode(path) == 0o600


def test_empty_token_file_regenerated(tmp_path: pathlib.Path) -> None:
    path = tmp_path / TOKEN_FILE_NAME
    path.write_text("\n", encoding="utf-8")
    token = ensure_token_file(tmp_path)
    assert len(token) >= 32
    assert path.read_text(encoding="utf-8").strip() == token
    assert _mode(path) == 0o600


def test_token_matches() -> None:
    assert token_matches("abc123", "abc123")
    assert not token_matches("abc124", "abc123")
    assert not token_matches("abc12", "abc123")
    assert not token_matches("", "abc123")
    assert not token_matches("ABC123", "abc123")


# --- Host check ----------------------------------------------------------------------------

LOOPBACK = list(LOOPBACK_HOSTS)


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1",
        "127.0.0.1:8765",
        "localhost",
        "localhost:8765",
        "[::1]:8765",
        "[::1]",
        "LOCALHOST",
        "LocalHost:9000",
        " localhost:8765 ",
    ],
)
def test_loopback_hosts_allowed(host: str) -> None:
    assert host_allowed(host, LOOPBACK)


@pytest.mark.parametrize(
    "host",
    [
        "evil.com",
        "evil.com:8765",
        "127.0.0.1.evil.com",
        "127.0.0.1.evil.com:8765",
        "localhost.evil.com:8765",
        "evil-localhost:8765",
        "127.0.0.2:8765",
        "0.0.0.0:8765",
        "[::2]:8765",
        "",
        None,
    ],
)
def test_other_hosts_rejected(host: str | None) -> None:
    assert not host_allowed(host, LOOPBACK)


def test_configured_extra_host_allowed() -> None:
    allowed = [*LOOPBACK, "Zocrates.Lab.Example"]
    assert host_allowed("zocrates.lab.example", allowed)
    assert host_allowed("zocrates.lab.example:443", allowed)
    assert host_allowed("ZOCRATES.LAB.EXAMPLE:8765", allowed)
    assert host_allowed("localhost:8765", allowed)
    assert not host_allowed("lab.example", allowed)
    assert not host_allowed("zocrates.lab.example.evil.com", allowed)


def test_empty_allow_list_rejects_everything() -> None:
    assert not host_allowed("127.0.0.1:8765", [])
