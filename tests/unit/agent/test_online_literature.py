"""The OpenAlex client and the search_online_literature tool, against a real local HTTP server
that answers in OpenAlex's wire format (``GET /works`` -> ``{"meta", "results"}``)."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from services.agent.online_literature import (
    MAX_ABSTRACT_CHARS,
    SEARCH_ONLINE_LITERATURE,
    OnlinePaper,
    OpenAlexClient,
    make_search_online_literature,
    reconstruct_abstract,
)
from services.common.errors import InvalidArgument, Unavailable

ABSTRACT = (
    "Despite growing interest in Open Access (OA) to scholarly literature, there is an unmet "
    "need for large-scale, up-to-date, and reliable studies quantifying the spread of OA, and "
    "the performance of OA in terms of citations."
)


def _inverted_index(text: str) -> dict[str, list[int]]:
    """OpenAlex's abstract encoding: word -> positions. Keys are emitted last-word-first so a
    client that trusts key order instead of positions gets the text backwards."""
    index: dict[str, list[int]] = {}
    for position, word in enumerate(text.split()):
        index.setdefault(word, []).append(position)
    return dict(reversed(list(index.items())))


def _authorship(name: str | None, position: str = "middle") -> dict[str, Any]:
    return {
        "author_position": position,
        "author": {"id": "https://openalex.org/A5023888391", "display_name": name, "orcid": None},
        "institutions": [],
        "countries": [],
        "is_corresponding": False,
        "raw_author_name": name,
    }


FULL_WORK: dict[str, Any] = {
    "id": "https://openalex.org/W2741809807",
    "doi": "https://doi.org/10.7717/peerj.4375",
    "title": "The state of OA: a large-scale analysis of the prevalence and impact of Open Access "
    "articles",
    "display_name": "The state of OA: a large-scale analysis of the prevalence and impact of "
    "Open Access articles",
    "publication_year": 2018,
    "publication_date": "2018-02-13",
    "type": "article",
    "authorships": [
        _authorship("Heather Piwowar", "first"),
        _authorship("Jason Priem"),
        _authorship("Vincent Larivière"),
        _authorship("Juan Pablo Alperin"),
        _authorship("Lisa Matthias"),
        _authorship("Bree Norlander"),
        _authorship("Ashley Farley"),
        _authorship("Jevin D. West"),
        _authorship("Stefanie Haustein", "last"),
    ],
    "primary_location": {
        "is_oa": True,
        "landing_page_url": "https://peerj.com/articles/4375",
        "pdf_url": "https://peerj.com/articles/4375.pdf",
        "source": {
            "id": "https://openalex.org/S1983995261",
            "display_name": "PeerJ",
            "issn_l": "2167-8359",
            "type": "journal",
        },
        "license": "cc-by",
        "version": "publishedVersion",
    },
    "open_access": {
        "is_oa": True,
        "oa_status": "gold",
        "oa_url": "https://peerj.com/articles/4375.pdf",
        "any_repository_has_fulltext": True,
    },
    "cited_by_count": 1021,
    "abstract_inverted_index": _inverted_index(ABSTRACT),
}

# A preprint: no DOI, no source, no abstract, closed access, and a long author list in which
# one author has no name.
PREPRINT_AUTHORS = [f"Author {n}" for n in range(1, 13)]
PREPRINT_WORK: dict[str, Any] = {
    "id": "https://openalex.org/W4300000001",
    "doi": None,
    "title": "Scaling laws for retrieval-augmented language models",
    "display_name": "Scaling laws for retrieval-augmented language models",
    "publication_year": 2021,
    "authorships": [_authorship(None, "first")] + [_authorship(n) for n in PREPRINT_AUTHORS],
    "primary_location": {
        "is_oa": False,
        "landing_page_url": "https://arxiv.org/abs/2101.00001",
        "pdf_url": None,
        "source": None,
    },
    "open_access": {"is_oa": False, "oa_status": "closed", "oa_url": None},
    "cited_by_count": 3,
    "abstract_inverted_index": None,
}

# Almost everything null, as OpenAlex does for thin records.
SPARSE_WORK: dict[str, Any] = {
    "id": "https://openalex.org/W4300000002",
    "doi": None,
    "title": None,
    "display_name": "Notes on open access mandates",
    "publication_year": None,
    "authorships": [],
    "primary_location": None,
    "open_access": None,
    "cited_by_count": None,
    "abstract_inverted_index": {},
}

# No title at all: useless for citing, so the client drops it.
UNTITLED_WORK: dict[str, Any] = {
    "id": "https://openalex.org/W4300000003",
    "doi": None,
    "title": None,
    "display_name": None,
    "publication_year": 2020,
    "authorships": None,
    "primary_location": None,
    "open_access": None,
    "cited_by_count": 0,
    "abstract_inverted_index": None,
}

WORKS_PAGE: dict[str, Any] = {
    "meta": {
        "count": 4,
        "db_response_time_ms": 31,
        "page": 1,
        "per_page": 25,
        "groups_count": None,
    },
    "results": [FULL_WORK, PREPRINT_WORK, SPARSE_WORK, UNTITLED_WORK],
    "group_by": [],
}


@dataclass
class Reply:
    status: int = 200
    body: Any = None  # JSON-serialisable, or raw bytes
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


@dataclass
class SeenRequest:
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    at: float


class FakeOpenAlex:
    """A threaded HTTP server on 127.0.0.1 that answers ``/works`` like OpenAlex. ``replies``
    are consumed in order, then every request gets ``default``."""

    def __init__(self) -> None:
        self.replies: list[Reply] = []
        self.default = Reply(body=WORKS_PAGE)
        self.requests: list[SeenRequest] = []
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                split = urlsplit(self.path)
                with fake._lock:
                    fake.requests.append(
                        SeenRequest(
                            split.path, parse_qs(split.query), dict(self.headers), time.monotonic()
                        )
                    )
                    reply = fake.replies.pop(0) if fake.replies else fake.default
                if split.path != "/works":
                    reply = Reply(404, {"error": "Not found", "message": "no such endpoint"})
                time.sleep(reply.delay)
                payload = (
                    reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
                )
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self._thread.join(timeout=2)


@pytest.fixture
def openalex(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAlex]:
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    server = FakeOpenAlex()
    yield server
    server.close()


@pytest.fixture
async def client(openalex: FakeOpenAlex) -> AsyncIterator[OpenAlexClient]:
    c = OpenAlexClient(
        openalex.url, mailto="me@example.org", timeout=2.0, max_retries=2, max_retry_wait=0.05
    )
    yield c
    await c.aclose()


def _closed_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_request_carries_search_per_page_filter_and_mailto(
    openalex: FakeOpenAlex, client: OpenAlexClient
) -> None:
    await client.search("  attention \n mechanisms ", limit=5, from_year=2019, to_year=2023)

    [request] = openalex.requests
    assert request.path == "/works"
    assert request.query == {
        "search": ["attention mechanisms"],
        "per-page": ["5"],
        "filter": ["publication_year:2019-2023"],
        "mailto": ["me@example.org"],
    }
    assert "mailto:me@example.org" in request.headers["User-Agent"]


async def test_one_sided_year_filters_and_optional_params(openalex: FakeOpenAlex) -> None:
    client = OpenAlexClient(openalex.url, max_retry_wait=0.05)
    try:
        await client.search("open access", from_year=2020)
        await client.search("open access", to_year=2023)
        await client.search("open access", limit=100)
        await client.search("open access", limit=0)
    finally:
        await client.aclose()

    since, until, many, few = (r.query for r in openalex.requests)
    assert since["filter"] == ["publication_year:>2019"]
    assert until["filter"] == ["publication_year:<2024"]
    assert "filter" not in many and "mailto" not in many
    assert many["per-page"] == ["25"]
    assert few["per-page"] == ["1"]


async def test_year_range_backwards_is_invalid(
    openalex: FakeOpenAlex, client: OpenAlexClient
) -> None:
    with pytest.raises(InvalidArgument) as caught:
        await client.search("open access", from_year=2023, to_year=2019)
    assert caught.value.code == "invalid_year_range"
    assert openalex.requests == []


async def test_parses_openalex_works_including_nulls(client: OpenAlexClient) -> None:
    papers = await client.search("open access")

    assert [p.openalex_id for p in papers] == ["W2741809807", "W4300000001", "W4300000002"]
    full, preprint, sparse = papers
    assert full == OnlinePaper(
        openalex_id="W2741809807",
        doi="10.7717/peerj.4375",
        title=FULL_WORK["display_name"],
        authors=[a["author"]["display_name"] for a in FULL_WORK["authorships"]],
        year=2018,
        venue="PeerJ",
        cited_by_count=1021,
        abstract=ABSTRACT,
        url="https://doi.org/10.7717/peerj.4375",
        open_access_url="https://peerj.com/articles/4375.pdf",
    )

    assert preprint.doi is None
    assert preprint.authors == PREPRINT_AUTHORS[:10]  # the nameless author skipped, capped at 10
    assert preprint.venue is None
    assert preprint.abstract is None
    assert preprint.open_access_url is None
    assert preprint.url == "https://arxiv.org/abs/2101.00001"
    assert preprint.year == 2021

    assert sparse.title == "Notes on open access mandates"
    assert sparse.authors == []
    assert sparse.year is None
    assert sparse.venue is None
    assert sparse.cited_by_count == 0
    assert sparse.abstract is None
    assert sparse.url == "https://openalex.org/W4300000002"


def test_abstract_follows_positions_and_is_truncated() -> None:
    index = {"world": [1, 3], "hello": [0], "again": [4], "big": [2]}
    assert reconstruct_abstract(index) == "hello world big world again"

    long_text = " ".join(f"word{n}" for n in range(600))
    abstract = reconstruct_abstract(_inverted_index(long_text))
    assert abstract is not None
    assert abstract.endswith("…")
    assert len(abstract) <= MAX_ABSTRACT_CHARS + 1
    assert long_text.startswith(abstract[:-1])  # cut on a word boundary, order kept

    assert reconstruct_abstract(None) is None
    assert reconstruct_abstract({"bad": "not-a-list", "odd": [None]}) is None


async def test_429_with_retry_after_waits_then_succeeds(openalex: FakeOpenAlex) -> None:
    openalex.replies = [
        Reply(429, {"error": "Too many requests"}, headers={"Retry-After": "1"}),
    ]
    client = OpenAlexClient(openalex.url, max_retries=2, max_retry_wait=0.3)
    try:
        papers = await client.search("open access")
    finally:
        await client.aclose()

    assert len(papers) == 3
    first, second = openalex.requests
    waited = second.at - first.at
    print(f"waited {waited:.3f} s between the 429 and the retry")
    assert 0.3 <= waited < 0.9  # honoured Retry-After, but capped at max_retry_wait


async def test_429_beyond_max_retries_is_unavailable(
    openalex: FakeOpenAlex, client: OpenAlexClient
) -> None:
    openalex.default = Reply(429, {"error": "Too many requests"}, headers={"Retry-After": "0"})

    with pytest.raises(Unavailable) as caught:
        await client.search("open access")

    assert caught.value.code == "online_search_unavailable"
    assert "429" in caught.value.message
    assert len(openalex.requests) == 3  # the first try and max_retries=2


async def test_5xx_is_retried_once(openalex: FakeOpenAlex, client: OpenAlexClient) -> None:
    openalex.replies = [Reply(503, {"error": "Service unavailable"})]

    papers = await client.search("open access")

    assert len(papers) == 3
    assert len(openalex.requests) == 2


async def test_repeated_500_is_unavailable(openalex: FakeOpenAlex, client: OpenAlexClient) -> None:
    openalex.default = Reply(500, {"error": "Internal server error", "message": "db down"})

    with pytest.raises(Unavailable) as caught:
        await client.search("open access")

    assert caught.value.code == "online_search_unavailable"
    assert f"{openalex.url}/works" in caught.value.message
    assert "HTTP 500" in caught.value.message and "db down" in caught.value.message
    assert len(openalex.requests) == 2  # retried once only, although max_retries is 2


async def test_client_error_carries_openalex_message_and_is_not_retried(
    openalex: FakeOpenAlex, client: OpenAlexClient
) -> None:
    openalex.default = Reply(
        400,
        {"error": "Invalid query parameters error.", "message": "publication_year is not valid"},
    )

    with pytest.raises(Unavailable) as caught:
        await client.search("open access")

    assert caught.value.code == "online_search_unavailable"
    assert "HTTP 400" in caught.value.message
    assert "publication_year is not valid" in caught.value.message
    assert len(openalex.requests) == 1


async def test_non_json_answer_is_unavailable(
    openalex: FakeOpenAlex, client: OpenAlexClient
) -> None:
    openalex.default = Reply(200, b"<html>captive portal</html>")

    with pytest.raises(Unavailable) as caught:
        await client.search("open access")

    assert caught.value.code == "online_search_unavailable"
    assert "not with JSON" in caught.value.message


async def test_timeout_is_unavailable(openalex: FakeOpenAlex) -> None:
    openalex.default = Reply(body=WORKS_PAGE, delay=0.6)
    client = OpenAlexClient(openalex.url, timeout=0.1, max_retry_wait=0.05)
    started = time.monotonic()
    try:
        with pytest.raises(Unavailable) as caught:
            await client.search("open access")
    finally:
        await client.aclose()

    assert caught.value.code == "online_search_unavailable"
    assert "did not answer within 0.1 s" in caught.value.message
    assert time.monotonic() - started < 0.5


async def test_empty_query_is_invalid_and_sends_nothing(
    openalex: FakeOpenAlex, client: OpenAlexClient
) -> None:
    with pytest.raises(InvalidArgument) as caught:
        await client.search("   \n ")
    assert caught.value.code == "invalid_query"

    result = await make_search_online_literature(client)("")
    assert result["status"] == "error"
    assert result["code"] == "invalid_query"
    assert openalex.requests == []


async def test_tool_returns_results_as_json(openalex: FakeOpenAlex, client: OpenAlexClient) -> None:
    tool = make_search_online_literature(client)

    result = await tool("open access citation advantage")

    assert tool.__name__ == SEARCH_ONLINE_LITERATURE == "search_online_literature"
    assert tool.__doc__ is not None and "item_key" in tool.__doc__
    assert result["status"] == "success"
    assert result["source"] == "openalex"
    assert openalex.requests[0].query["per-page"] == ["8"]  # the tool's default limit
    first = result["results"][0]
    assert set(first) == {
        "openalex_id",
        "doi",
        "title",
        "authors",
        "year",
        "venue",
        "cited_by_count",
        "abstract",
        "url",
        "open_access_url",
    }
    assert first["doi"] == "10.7717/peerj.4375"
    assert first["abstract"] == ABSTRACT
    assert json.loads(json.dumps(result)) == result


async def test_tool_reports_server_down_as_error() -> None:
    port = _closed_port()
    client = OpenAlexClient(f"http://127.0.0.1:{port}", timeout=1.0, max_retry_wait=0.05)
    try:
        result = await asyncio.wait_for(make_search_online_literature(client)("open access"), 2)
    finally:
        await client.aclose()

    assert result["status"] == "error"
    assert result["code"] == "online_search_unavailable"
    assert f"127.0.0.1:{port}" in result["message"]
    assert "Cannot reach OpenAlex" in result["message"]
