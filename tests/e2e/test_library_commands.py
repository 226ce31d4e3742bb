"""Issue 3's done-criterion, as a user does it: `zocrates run` on a Zotero-shaped library,
`zocrates index` with a visible progress bar, then `zocrates search` finds the right page for a
question phrased without the paper's title words. Also the gateway's library routes over HTTP.
"""

from __future__ import annotations

import os
import pathlib
import signal
import subprocess
import sys
import time

import httpx

from tests.support import zotero_fixture as zf
from tests.support.ports import free_base_port
from tests.support.processes import ROOT

ZOCRATES = pathlib.Path(sys.executable).parent / "zocrates"
KEEP = (
    "lme4__lmer.pdf",
    "brms__brms_multilevel.pdf",
    "sandwich__sandwich-CL.pdf",
    "ordinal__clm_article.pdf",
)


def test_index_with_progress_then_search(tmp_path: pathlib.Path) -> None:
    zotero_dir = zf.build_zotero_library(tmp_path / "Zotero")
    for paper in zf.read_manifest():
        if paper.file not in KEEP and not paper.file.startswith("zoo__"):
            zf.trash_item(zotero_dir, zf.paper_item_key(paper.file))
    base = free_base_port()
    env = {**os.environ, "ZOCRATES_PORT": str(base), "ZOCRATES_ZOTERO_DIR": str(zotero_dir)}
    log = (tmp_path / "stack.log").open("wb")
    stack = subprocess.Popen(
        [str(ZOCRATES), "run"],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        token_file = zotero_dir / "zocrates-data" / "gateway.token"
        deadline = time.monotonic() + 120
        while "Zocrates is running" not in (tmp_path / "stack.log").read_text():
            assert stack.poll() is None, (tmp_path / "stack.log").read_text()
            assert time.monotonic() < deadline, "stack did not start"
            time.sleep(0.2)

        index = subprocess.run(
            [str(ZOCRATES), "index"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
        )
        assert index.returncode == 0, index.stderr
        # two tqdm bars on stderr: the keyword phase in pages, the embedding phase in passages
        assert "keywords :" in index.stderr and "page" in index.stderr
        assert "every paper is keyword-searchable now" in index.stderr
        assert "embedding:" in index.stderr and "passage" in index.stderr
        assert index.stderr.count("100%") >= 2
        assert "indexed 4 new" in index.stdout
        assert "still wait for their embedding" not in index.stdout  # it waited for them

        again = subprocess.run(
            [str(ZOCRATES), "index"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
        )
        assert again.returncode == 0 and "4 unchanged" in again.stdout

        query = (
            "Which derivative-free optimizer is used by default when fitting linear mixed models?"
        )
        search = subprocess.run(
            [str(ZOCRATES), "search", query, "-k", "3"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert search.returncode == 0, search.stderr
        first = search.stdout.splitlines()[0]
        assert zf.paper_item_key("lme4__lmer.pdf") in first, search.stdout

        token = token_file.read_text().strip()
        with httpx.Client(
            base_url=f"http://127.0.0.1:{base}",
            headers={"Authorization": f"Bearer {token}"},
            timeout=60,
        ) as api:
            status = api.get("/library/status").json()
            assert status["status"] == "success" and status["items"] == 4 and status["chunks"] > 100
            assert status["embedding_phase"]["chunks_pending"] == 0
            assert status["embedding_phase"]["chunks_embedded"] == status["chunks"]
            assert status["attachment_states"]["indexed"] == 4 and status["problems"] == []
            assert status["keyword_phase"]["running"] is False
            lme4 = zf.paper_item_key("lme4__lmer.pdf")
            first = api.post("/library/prioritize", json={"item_keys": [lme4]})
            assert first.status_code == 200 and first.json()["chunks_pending"] == 0
            assert api.post("/library/prioritize", json={"item_keys": []}).status_code == 422
            body = api.get("/library/search", params={"q": query, "k": 3}).json()
            assert body["results"][0]["item_key"] == zf.paper_item_key("lme4__lmer.pdf")
            assert set(body["results"][0]) >= {
                "item_key",
                "title",
                "authors",
                "year",
                "page",
                "section",
                "score",
                "text",
            }
            scoped = api.get(
                "/library/search",
                params={
                    "q": "standard errors",
                    "k": 5,
                    "item_keys": [zf.paper_item_key("sandwich__sandwich-CL.pdf")],
                },
            ).json()
            assert {r["item_key"] for r in scoped["results"]} == {
                zf.paper_item_key("sandwich__sandwich-CL.pdf")
            }
            bad = api.get("/library/search", params={"q": "x", "collection": "NOPE1234"})
            assert bad.status_code == 404 and bad.json()["code"] == "collection_not_found"
            assert api.get("/library/search", params={"q": ""}).status_code == 422
            with api.stream("POST", "/library/sync", json={"full": False}) as stream:
                frames = [line for line in stream.iter_lines() if line.startswith("event:")]
            assert frames[-1] == "event: done" and "event: progress" in frames
    finally:
        os.killpg(stack.pid, signal.SIGINT)
        stack.wait(timeout=60)
        log.close()
