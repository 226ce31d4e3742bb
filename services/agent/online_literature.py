"""Search published literature beyond the user's Zotero library, through the OpenAlex API.

``OpenAlexClient`` speaks the works endpoint (``GET /works?search=...``) and turns OpenAlex's
records into ``OnlinePaper`` values; ``make_search_online_literature`` binds it into the
``search_online_literature`` research tool, which, like every tool, returns a JSON dict with
``status`` and never raises to the model.

The base URL is configurable so tests and offline users can point the client at a local server
that speaks the same wire format. API reference: https://docs.openalex.org/api-entities/works
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httpx

from services.common.errors import InvalidArgument, Unavailable, ZocratesError
from services.common.http_retry import retry_after_seconds

logger = logging.getLogger(__name__)

SEARCH_ONLINE_LITERATURE = "search_online_literature"

DEFAULT_BASE_URL = "https://api.openalex.org"
UNAVAILABLE_CODE = "online_search_unavailable"
INVALID_QUERY_CODE = "invalid_query"
INVALID_YEARS_CODE = "invalid_year_range"

MAX_LIMIT = 25
MAX_AUTHORS = 10
MAX_ABSTRACT_CHARS = 1200
_SERVER_ERROR_BACKOFF = 0.5  # seconds before the one retry of a 5xx answer
_OPENALEX_ID_PREFIX = "https://openalex.org/"
_DOI_PREFIXES = ("https://doi.org/", "http://doi.org/", "https://dx.doi.org/", "doi:")


@dataclass(frozen=True, slots=True)
class OnlinePaper:
    """One work found online. It is not in the user's library: cite it by title, authors, year
    and DOI, never by a Zotero item key."""

    openalex_id: str
    doi: str | None
    title: str
    authors: list[str]
    year: int | None
    venue: str | None
    cited_by_count: int
    abstract: str | None
    url: str
    open_access_url: str | None


class OpenAlexClient:
    """An async client for the OpenAlex works search, with bounded retries.

    HTTP 429 is retried up to ``max_retries`` times, waiting what ``Retry-After`` asks for but
    never more than ``max_retry_wait`` seconds; a 5xx answer is retried once. Anything else that
    goes wrong raises ``Unavailable`` with code ``online_search_unavailable``.
    """

    def __init__(
        self,
        base_url: str = DEFAULT_BASE_URL,
        *,
        mailto: str = "",
        timeout: float = 10.0,
        max_retries: int = 2,
        max_retry_wait: float = 5.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.mailto = mailto.strip()
        self.timeout = timeout
        self.max_retries = max(0, max_retries)
        self.max_retry_wait = max(0.0, max_retry_wait)
        user_agent = "zocrates" + (f" (mailto:{self.mailto})" if self.mailto else "")
        self._http = httpx.AsyncClient(
            base_url=self.base_url,
            timeout=timeout,
            transport=transport,
            follow_redirects=True,
            headers={"User-Agent": user_agent, "Accept": "application/json"},
        )

    async def aclose(self) -> None:
        await self._http.aclose()

    async def search(
        self,
        query: str,
        *,
        limit: int = 10,
        from_year: int | None = None,
        to_year: int | None = None,
    ) -> list[OnlinePaper]:
        """Works matching ``query`` (title, abstract and full text), most relevant first.

        ``limit`` is clamped to 1..25; ``from_year``/``to_year`` bound the publication year,
        inclusive, either or both.
        """
        query = " ".join((query or "").split())
        if not query:
            raise InvalidArgument(
                "The search query is empty; give a few keywords to search for.",
                code=INVALID_QUERY_CODE,
            )
        params: dict[str, str | int] = {
            "search": query,
            "per-page": max(1, min(int(limit), MAX_LIMIT)),
        }
        year_filter = _year_filter(from_year, to_year)
        if year_filter:
            params["filter"] = year_filter
        if self.mailto:
            params["mailto"] = self.mailto
        body = await self._get_json("/works", params)
        results = body.get("results") if isinstance(body, dict) else None
        if not isinstance(results, list):
            raise Unavailable(
                f"OpenAlex at {self.base_url}/works answered without a 'results' list; "
                "is the base URL pointing at an OpenAlex-compatible API?",
                code=UNAVAILABLE_CODE,
            )
        papers = (parse_work(work) for work in results if isinstance(work, dict))
        return [paper for paper in papers if paper is not None]

    async def _get_json(self, path: str, params: dict[str, str | int]) -> Any:
        url = f"{self.base_url}{path}"
        retries = 0
        server_error_retried = False
        while True:
            started = time.monotonic()
            try:
                response = await self._http.get(path, params=params)
            except httpx.TimeoutException as exc:
                raise Unavailable(
                    f"OpenAlex at {url} did not answer within {self.timeout:g} s "
                    f"({type(exc).__name__}); try again later or raise the timeout.",
                    code=UNAVAILABLE_CODE,
                ) from exc
            except httpx.HTTPError as exc:
                raise Unavailable(
                    f"Cannot reach OpenAlex at {url}: {exc or type(exc).__name__}. Check the "
                    "network connection and the configured OpenAlex base URL.",
                    code=UNAVAILABLE_CODE,
                ) from exc
            status = response.status_code
            logger.debug("GET %s -> %d in %.2f s", response.url, status, time.monotonic() - started)
            if status == 429:
                if retries < self.max_retries:
                    retries += 1
                    wait = retry_after_seconds(response)
                    wait = min(self.max_retry_wait, wait if wait is not None else 2.0**retries)
                    logger.info(
                        "OpenAlex rate-limited the search (429); retry %d/%d in %.2f s",
                        retries,
                        self.max_retries,
                        wait,
                    )
                    await asyncio.sleep(wait)
                    continue
                raise Unavailable(
                    f"OpenAlex at {url} is rate-limiting requests (HTTP 429) and still was after "
                    f"{retries} retries; wait a minute and try again"
                    + ("." if self.mailto else ", or configure a contact e-mail (mailto)."),
                    code=UNAVAILABLE_CODE,
                )
            if status >= 500:
                if not server_error_retried and retries < self.max_retries:
                    server_error_retried = True
                    retries += 1
                    wait = min(self.max_retry_wait, _SERVER_ERROR_BACKOFF)
                    logger.info("OpenAlex answered HTTP %d; retrying once in %.2f s", status, wait)
                    await asyncio.sleep(wait)
                    continue
                raise Unavailable(
                    f"OpenAlex at {url} failed with HTTP {status}{_detail(response)}; "
                    "the service may be down, try again later.",
                    code=UNAVAILABLE_CODE,
                )
            if status != 200:
                raise Unavailable(
                    f"OpenAlex at {url} refused the search with HTTP {status}{_detail(response)}.",
                    code=UNAVAILABLE_CODE,
                )
            try:
                return response.json()
            except ValueError as exc:
                raise Unavailable(
                    f"OpenAlex at {url} answered HTTP 200 but not with JSON; is the base URL "
                    "pointing at an OpenAlex-compatible API?",
                    code=UNAVAILABLE_CODE,
                ) from exc


def _year_filter(from_year: int | None, to_year: int | None) -> str | None:
    """OpenAlex's filter syntax: ``publication_year:2019-2023``, ``:>2018`` or ``:<2024``."""
    if from_year is not None and to_year is not None:
        if from_year > to_year:
            raise InvalidArgument(
                f"from_year {from_year} is after to_year {to_year}.", code=INVALID_YEARS_CODE
            )
        return f"publication_year:{int(from_year)}-{int(to_year)}"
    if from_year is not None:
        return f"publication_year:>{int(from_year) - 1}"
    if to_year is not None:
        return f"publication_year:<{int(to_year) + 1}"
    return None


def _detail(response: httpx.Response) -> str:
    """OpenAlex's own error text (``{"error", "message"}``), short, for the error message."""
    try:
        body = response.json()
    except ValueError:
        text = response.text.strip()
    else:
        if isinstance(body, dict):
            text = str(body.get("message") or body.get("error") or "").strip()
        else:
            text = ""
    text = " ".join(text.split())
    return f": {text[:200]}" if text else ""


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _str(value: Any) -> str | None:
    if isinstance(value, str) and value.strip():
        return value.strip()
    return None


def _strip_prefix(value: str, prefixes: tuple[str, ...]) -> str:
    lowered = value.lower()
    for prefix in prefixes:
        if lowered.startswith(prefix):
            return value[len(prefix) :]
    return value


def reconstruct_abstract(inverted_index: Any, *, max_chars: int = MAX_ABSTRACT_CHARS) -> str | None:
    """Plain text from OpenAlex's ``abstract_inverted_index`` (word -> positions), cut at a
    word boundary to about ``max_chars`` characters. None when there is no abstract."""
    if not isinstance(inverted_index, dict):
        return None
    words: dict[int, str] = {}
    for word, positions in inverted_index.items():
        if not isinstance(word, str) or not isinstance(positions, list):
            continue
        for position in positions:
            if isinstance(position, int) and not isinstance(position, bool):
                words[position] = word
    text = " ".join(words[i] for i in sorted(words)).strip()
    if not text:
        return None
    if len(text) > max_chars:
        cut = text[:max_chars].rsplit(" ", 1)[0] or text[:max_chars]
        text = cut.rstrip() + "…"
    return text


def parse_work(work: dict[str, Any]) -> OnlinePaper | None:
    """An ``OnlinePaper`` from one OpenAlex work record; None if it has no title or id.

    OpenAlex returns null for many fields (doi, source, abstract, ...), so every level is
    checked."""
    title = _str(work.get("display_name")) or _str(work.get("title"))
    full_id = _str(work.get("id"))
    if title is None or full_id is None:
        return None
    doi_value = _str(work.get("doi"))
    doi = _strip_prefix(doi_value, _DOI_PREFIXES) if doi_value else None
    authorships = work.get("authorships")
    authors = [
        name
        for authorship in (authorships if isinstance(authorships, list) else [])
        if (name := _str(_dict(_dict(authorship).get("author")).get("display_name")))
    ][:MAX_AUTHORS]
    location = _dict(work.get("primary_location"))
    year = work.get("publication_year")
    cited_by = work.get("cited_by_count")
    return OnlinePaper(
        openalex_id=_strip_prefix(full_id, (_OPENALEX_ID_PREFIX,)),
        doi=doi,
        title=title,
        authors=authors,
        year=year if isinstance(year, int) and not isinstance(year, bool) else None,
        venue=_str(_dict(location.get("source")).get("display_name")),
        cited_by_count=cited_by if isinstance(cited_by, int) else 0,
        abstract=reconstruct_abstract(work.get("abstract_inverted_index")),
        url=(f"https://doi.org/{doi}" if doi else None)
        or _str(location.get("landing_page_url"))
        or full_id,
        open_access_url=_str(_dict(work.get("open_access")).get("oa_url"))
        or _str(location.get("pdf_url")),
    )


def make_search_online_literature(
    client: OpenAlexClient,
) -> Callable[..., Awaitable[dict[str, Any]]]:
    """The ``search_online_literature`` tool bound to ``client``."""

    async def search_online_literature(query: str, limit: int = 8) -> dict[str, Any]:
        """Search published scholarly literature online (OpenAlex), beyond the user's library.

        Use this only when the user asks about work outside their own Zotero library (e.g.
        "what else has been published on X", "recent papers on Y"), or when search_corpus
        found no or too little evidence in the library. Search the library first otherwise.
        Use a short keyword query (the key terms, not a whole question).

        These results are NOT in the user's Zotero library: they have no item_key and no
        pages, so never cite them as item_key/page and never pass them to read_document.
        Cite them by title, authors, year and DOI, and tell the user they come from an
        online search rather than from their library. Abstracts may be cut short.

        Args:
            query: Keywords to search titles, abstracts and full texts for.
            limit: How many papers to return (1 to 25), most relevant first.

        Returns:
            {"status": "success", "source": "openalex", "results": [{"openalex_id", "doi",
            "title", "authors", "year", "venue", "cited_by_count", "abstract", "url",
            "open_access_url"}]}; doi, year, venue, abstract and open_access_url may be
            null. An empty list means nothing matched. On failure {"status": "error",
            "code", "message"}; code "online_search_unavailable" means the online search
            cannot be reached now, so answer from the library alone and say so.
        """
        try:
            count = int(limit)
        except (TypeError, ValueError):
            count = 8
        try:
            papers = await client.search(str(query or ""), limit=count)
        except ZocratesError as exc:
            logger.info("search_online_literature failed: %s", exc.message)
            return {"status": "error", "code": exc.code, "message": exc.message}
        return {
            "status": "success",
            "source": "openalex",
            "results": [dataclasses.asdict(paper) for paper in papers],
        }

    search_online_literature.__name__ = SEARCH_ONLINE_LITERATURE
    return search_online_literature
