"""The Origin check: a web page is refused even with the token; the plugin and local tools
are not (issue 16: on main a request from https://evil.example with the token was served)."""

from __future__ import annotations

import pathlib

import httpx
import pytest

from services.gateway.auth import origin_allowed
from tests.support.stack import running_gateway, running_sessions


@pytest.mark.parametrize(
    ("origin", "allowed", "passes"),
    [
        (None, [], True),
        ("null", [], True),
        ("chrome://zotero", [], True),
        ("moz-extension://4f7c-11aa", [], True),
        ("resource://gre", [], True),
        ("zotero://select", [], True),
        ("https://evil.example", [], False),
        ("http://127.0.0.1:8765", [], False),  # a page on another local server
        ("http://localhost", [], False),
        ("https://lab.example", ["https://lab.example"], True),
        ("HTTPS://LAB.EXAMPLE/", ["https://lab.example"], True),
        ("https://lab.example.evil", ["https://lab.example"], False),
        ("file://", [], False),
        ("", [], False),
        ("chrome", [], False),
    ],
)
def test_origin_allowed(origin: str | None, allowed: list[str], passes: bool) -> None:
    assert origin_allowed(origin, allowed) is passes


async def test_a_web_page_with_the_token_is_refused(tmp_path: pathlib.Path) -> None:
    async with (
        running_sessions(tmp_path) as sessions,
        running_gateway(
            tmp_path, sessions.runtime.address, allowed_origins=["https://lab.example"]
        ) as gateway,
    ):
        await gateway.app.state.gateway.startup_done.wait()
        token = (tmp_path / "zocrates-data" / "gateway.token").read_text().strip()
        auth = {"Authorization": f"Bearer {token}"}
        async with httpx.AsyncClient(base_url=gateway.url, headers=auth) as http:
            refused = await http.get("/sessions", headers={"Origin": "https://evil.example"})
            assert refused.status_code == 403, refused.text
            assert refused.json()["code"] == "origin_not_allowed"
            assert "evil.example" in refused.json()["message"]
            created = await http.post(
                "/sessions", json={"title": "x"}, headers={"Origin": "https://evil.example"}
            )
            assert created.status_code == 403
            assert (await http.get("/sessions")).json()["sessions"] == []  # nothing was made
            for origin in (None, "moz-extension://abc", "https://lab.example"):
                headers = {"Origin": origin} if origin else {}
                ok = await http.get("/sessions", headers=headers)
                assert ok.status_code == 200, (origin, ok.text)
