"""The researcher's own reading as evidence, through the real services (gateway -> agent ->
library -> reranker, the built-in offline model): a highlight with its comment, a child note
and a standalone note filed in a collection are indexed beside the papers, searchable by kind,
and answer "what did I note ..." questions with citations that name them (the annotation or
note a click opens), each checked against what it cites. One new highlight re-syncs alone.
"""

from __future__ import annotations

import pathlib
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import pytest_asyncio

from services.library.client import LibraryClient
from tests.support import zotero_fixture as zf
from tests.support.sse import post_stream
from tests.support.stack import IndexedStack, running_indexed_stack

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.timeout(600)]

FILES = ("lme4__lmer.pdf", "sandwich__sandwich-CL.pdf")
LME4 = zf.paper_item_key("lme4__lmer.pdf")
LME4_PDF = zf.paper_attachment_key("lme4__lmer.pdf")
SANDWICH = zf.paper_item_key("sandwich__sandwich-CL.pdf")
HIGHLIGHTED = (
    "lme4 incorporates two built-in optimization choices, an implementation of the "
    "Nelder-Mead simplex algorithm adapted from Steven Johnson's NLopt C library"
)
COMMENT = "My hunch: refit with the nloptwrap optimizer whenever bobyqa warns about convergence."
NOTE = (
    "<h1>Reading notes on clustering</h1>"
    "<p>For panel data I should report vcovCL standard errors clustered by firm and year.</p>"
    "<p>The HC1 adjustment is what Stata users expect.</p>"
)
STANDALONE = "<p>Thesis plan: the sandwich chapter compares bootstrap and clustered errors.</p>"


class Own:
    def __init__(self, stack: IndexedStack, http: httpx.AsyncClient, keys: dict[str, str]):
        self.stack, self.http, self.keys = stack, http, keys


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def own(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Own]:
    root: pathlib.Path = tmp_path_factory.mktemp("own-reading")
    zotero = zf.build_zotero_library(root / "zotero", files=FILES)
    keys = {
        "highlight": zf.add_annotation(
            zotero, LME4_PDF, text=HIGHLIGHTED, comment=COMMENT, page=24, page_label="24"
        ),
        # An image annotation (a region drawn over the page): its comment and the text under it.
        "image": zf.add_annotation(
            zotero,
            LME4_PDF,
            comment="The optimizers to compare",
            page=24,
            annotation_type="image",
            rect=zf.text_rect(zf.default_papers_dir() / FILES[0], 24, "implemented in the minqa"),
        ),
        "note": zf.add_note(zotero, SANDWICH, NOTE),
        "standalone": zf.add_note(zotero, None, STANDALONE, collections=("Econometrics",)),
    }
    async with running_indexed_stack(zotero) as stack:
        assert stack.gateway is not None
        async with httpx.AsyncClient(
            base_url=stack.gateway.url,
            headers={"Authorization": f"Bearer {stack.token}"},
            timeout=120,
        ) as http:
            yield Own(stack, http, keys)


async def _ask(http: httpx.AsyncClient, question: str) -> dict[str, Any]:
    session = (await http.post("/sessions", json={"title": "own"})).json()["session"]["id"]
    status, got, _ = await post_stream(http, "/chat", {"session_id": session, "prompt": question})
    assert status == 200
    done = [d for kind, d in got if kind == "done"]
    assert done and done[0]["status"] == "completed", got[-3:]
    print(done[0]["answer"])
    return done[0]


async def test_status_counts_and_search_by_kind(own: Own) -> None:
    status = (await own.http.get("/library/status")).json()
    assert status["passages"]["highlight"] == 1 and status["passages"]["comment"] == 1
    assert status["passages"]["note"] == 2
    assert status["passages"]["text"] > 100

    found = (
        await own.http.get("/library/search", params={"q": "nloptwrap hunch", "kind": "highlight"})
    ).json()["results"]
    (hit,) = found
    assert hit["kind"] == "highlight" and hit["source_key"] == own.keys["highlight"]
    assert (hit["item_key"], hit["attachment_key"], hit["page"]) == (LME4, LME4_PDF, 24)
    assert hit["page_label"] == "24" and COMMENT in hit["text"] and HIGHLIGHTED in hit["text"]

    mine = (
        await own.http.get(
            "/library/search", params=[("q", "clustered standard errors"), ("kind", "note")]
        )
    ).json()["results"]
    assert {h["source_key"] for h in mine} == {own.keys["note"], own.keys["standalone"]}
    note = next(h for h in mine if h["source_key"] == own.keys["note"])
    assert note["item_key"] == SANDWICH and note["note_title"] == "Reading notes on clustering"
    # A standalone note is in the collection it is filed in, and in no other.
    scoped = (
        await own.http.get(
            "/library/search",
            params={"q": "thesis plan", "collection": zf.collection_key("Econometrics")},
        )
    ).json()["results"]
    assert own.keys["standalone"] in {h["source_key"] for h in scoped}
    other = (
        await own.http.get(
            "/library/search",
            params={"q": "thesis plan", "collection": zf.collection_key("Mixed models")},
        )
    ).json()["results"]
    assert own.keys["standalone"] not in {h["source_key"] for h in other}
    papers_only = (
        await own.http.get("/library/search", params={"q": "nloptwrap hunch", "kind": "text"})
    ).json()["results"]
    assert all(h["kind"] == "text" for h in papers_only)
    (image,) = (
        await own.http.get("/library/search", params={"q": "minqa optimizers", "kind": "comment"})
    ).json()["results"]
    assert image["source_key"] == own.keys["image"] and image["annotation_type"] == "image"
    assert image["text"].startswith("The optimizers to compare\n\nThe text in the marked region:")
    assert "implemented in the minqa" in image["text"] and image["page"] == 24
    bad = await own.http.get("/library/search", params={"q": "x", "kind": "scribble"})
    assert bad.status_code == 422


async def test_a_question_about_my_notes_cites_the_note(own: Own) -> None:
    done = await _ask(own.http, "What did I note about clustered standard errors for panel data?")
    cited = [c for c in done["citations"] if c.get("origin") == "note"]
    assert cited, done["answer"]
    assert {c["source_key"] for c in cited} <= {own.keys["note"], own.keys["standalone"]}
    assert all(c["verified"] is True for c in cited), cited
    assert "vcovCL standard errors clustered by firm" in done["answer"]
    assert "your note" in done["answer"].split("# Cited Sources", 1)[1]


async def test_a_question_about_my_comment_cites_the_highlight_on_its_page(own: Own) -> None:
    done = await _ask(own.http, "What did I comment about refitting when bobyqa warns?")
    highlights = [c for c in done["citations"] if c.get("origin") == "highlight"]
    assert highlights, (done["answer"], done["citations"])
    cited = highlights[0]
    assert cited["source_key"] == own.keys["highlight"]
    assert (cited["item_key"], cited["attachment_key"], cited["page"]) == (LME4, LME4_PDF, 24)
    assert cited["verified"] is True, cited
    sources = done["answer"].split("# Cited Sources", 1)[1]
    assert "your highlight, p. 24" in sources


async def test_one_new_highlight_resyncs_alone(own: Own) -> None:
    zotero = own.stack.library.settings.zotero_dir
    added = zf.add_annotation(
        zotero, LME4_PDF, text="penalized weighted residual sum of squares", page=12,
        comment="the PWRSS criterion, again",
    )  # fmt: skip
    client = LibraryClient(own.stack.library.runtime.address)
    try:
        started = time.perf_counter()
        last: dict[str, Any] = {}
        async for progress in client.sync():
            last = progress
        seconds = time.perf_counter() - started
        hits, _ = await client.search("PWRSS criterion again", k=5, kinds=["highlight"])
    finally:
        await client.close()
    assert "annotations and notes: 1 new, 0 changed, 0 removed" in last["message"], last
    assert last["added"] == 0 and last["updated"] == 0  # no PDF read again
    assert hits and hits[0]["source_key"] == added
    print(f"re-sync after one new highlight: {seconds:.2f} s")
