"""`POST /register` takes only a Zotero data directory, and never creates anything outside one
(issue 16: on main it answered 200 for /etc, created /etc/zocrates-data/sessions.db and moved
the whole stack there)."""

from __future__ import annotations

import os
import pathlib
from collections.abc import AsyncIterator

import httpx
import pytest

from tests.support.stack import running_gateway, running_sessions


def _tree(root: pathlib.Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


@pytest.fixture
async def http(tmp_path: pathlib.Path) -> AsyncIterator[httpx.AsyncClient]:
    home = tmp_path / "Zotero"
    home.mkdir()
    (home / "zotero.sqlite").write_bytes(b"")
    async with (
        running_sessions(home) as sessions,
        running_gateway(home, sessions.runtime.address) as gateway,
    ):
        await gateway.app.state.gateway.startup_done.wait()
        token = (home / "zocrates-data" / "gateway.token").read_text().strip()
        async with httpx.AsyncClient(
            base_url=gateway.url, headers={"Authorization": f"Bearer {token}"}, timeout=30
        ) as client:
            yield client


async def _refused(http: httpx.AsyncClient, value: str) -> str:
    response = await http.post("/register", json={"zotero_data_dir": value})
    assert response.status_code == 400, response.text
    body = response.json()
    assert body["code"] == "invalid_data_dir", body
    return str(body["message"])


async def test_hostile_directories_are_refused_and_nothing_is_created(
    http: httpx.AsyncClient, tmp_path: pathlib.Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "notes.txt").write_text("not a Zotero directory")
    # A link named like a data directory, pointing at a directory without zotero.sqlite.
    (tmp_path / "Zotero-link").symlink_to(outside, target_is_directory=True)
    # zotero.sqlite that is itself a link to some other file.
    linked_db = tmp_path / "linked-db"
    linked_db.mkdir()
    (linked_db / "zotero.sqlite").symlink_to(outside / "notes.txt")
    # A real-looking data directory whose zocrates-data is a link out of it.
    escape = tmp_path / "escape"
    escape.mkdir()
    (escape / "zotero.sqlite").write_bytes(b"")
    (escape / "zocrates-data").symlink_to(outside, target_is_directory=True)
    # A data directory whose zocrates-data is a file.
    squatted = tmp_path / "squatted"
    squatted.mkdir()
    (squatted / "zotero.sqlite").write_bytes(b"")
    (squatted / "zocrates-data").write_text("")
    before = _tree(tmp_path)

    assert "no zotero.sqlite" in await _refused(http, str(outside))
    assert "no zotero.sqlite" in await _refused(http, "/etc")
    assert "no zotero.sqlite" in await _refused(http, str(tmp_path / "Zotero-link"))
    assert "no zotero.sqlite" in await _refused(http, str(linked_db))
    assert "link or a file" in await _refused(http, str(escape))
    assert "link or a file" in await _refused(http, str(squatted))
    assert "absolute" in await _refused(http, "relative/Zotero")
    assert "not an existing directory" in await _refused(http, str(tmp_path / "missing"))
    assert "not an existing directory" in await _refused(http, str(outside / "notes.txt"))
    assert "usable path" in await _refused(http, "/tmp/zo\x00tero")
    await _refused(http, str(tmp_path / "outside" / ".." / "outside"))

    assert _tree(tmp_path) == before, "a refused /register created something"
    assert not os.path.exists("/etc/zocrates-data")


async def test_a_real_data_directory_still_registers_through_a_link(
    http: httpx.AsyncClient, tmp_path: pathlib.Path
) -> None:
    real = tmp_path / "RealZotero"
    real.mkdir()
    (real / "zotero.sqlite").write_bytes(b"")
    (tmp_path / "Zotero-elsewhere").symlink_to(real, target_is_directory=True)
    response = await http.post(
        "/register", json={"zotero_data_dir": str(tmp_path / "Zotero-elsewhere")}
    )
    assert response.status_code == 200, response.text
    body = response.json()
    # Written where the link points, and reported as that directory.
    assert body["zotero_data_dir"] == str(real)
    assert body["sessions_db"] == str(real / "zocrates-data" / "sessions.db")
    assert (real / "zocrates-data" / "gateway.token").exists()
