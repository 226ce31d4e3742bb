"""`zocrates index` (with a progress bar) and `zocrates search`, through the running gateway."""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from typing import Any

import httpx
from tqdm import tqdm

from services.stack.gateway_client import (
    GatewayError,
    check,
    client,
    connect_error,
    events,
    gateway_url,
    read_token,
)


def add_commands(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    index = sub.add_parser(
        "index",
        help="index the Zotero library (incremental; progress bar)",
        description=(
            "Index the Zotero library through the running gateway, in two phases with a bar "
            "each: keywords (text, tables of contents and the keyword index; every paper is "
            "searchable as soon as its bar step is done), then embeddings (the meaning of "
            "every passage, in the background). Unchanged attachments are skipped. Ctrl-C, or "
            "--no-wait, leaves the embedding phase running in the agent."
        ),
    )
    index.add_argument("--full", action="store_true", help="re-index every attachment")
    index.add_argument(
        "--no-wait",
        action="store_true",
        help="return once the library is keyword-searchable; embeddings go on in the background",
    )
    _common(index)
    index.set_defaults(handler=run_index)

    search = sub.add_parser(
        "search",
        help="search the indexed library",
        description=(
            "Ranked passages for a query: the same results as the research tool search_corpus."
        ),
    )
    search.add_argument("query", help="what to look for, in natural language")
    search.add_argument("-k", type=int, default=5, help="how many passages (default 5)")
    search.add_argument(
        "--item", action="append", dest="items", help="only this item key (repeatable)"
    )
    search.add_argument("--collection", help="only this collection key (and sub-collections)")
    search.add_argument("--mode", choices=["hybrid", "keyword", "dense"], default="hybrid")
    search.add_argument("--rerank", action="store_true", help="rerank with the cross-encoder")
    search.add_argument(
        "--kind",
        action="append",
        dest="kinds",
        choices=["text", "highlight", "comment", "note"],
        help="only passages of this kind (repeatable): the papers' text, or your highlights, "
        "comments and notes",
    )
    search.add_argument("--json", action="store_true", help="print the raw JSON")
    _common(search)
    search.set_defaults(handler=run_search)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--port", type=int, default=None, help="gateway port (default ZOCRATES_PORT or 8765)"
    )
    parser.add_argument(
        "--zotero-dir", default=None, help="Zotero data directory, to find the token"
    )


def run_index(args: argparse.Namespace) -> int:
    import pathlib

    url = gateway_url(args.port)
    token = read_token(pathlib.Path(args.zotero_dir) if args.zotero_dir else None)
    bars = _IndexBars()
    body = {"full": args.full, "follow_embedding": not args.no_wait}
    try:
        with (
            client(url, token, timeout=None) as http,
            http.stream("POST", "/library/sync", json=body) as response,
        ):
            if response.status_code >= 400:
                response.read()
                check(response)
            for event, data in events(response):
                if event == "error":
                    raise GatewayError(
                        f"indexing failed ({data.get('code')}): {data.get('message')}"
                    )
                bars.update(data)
                if event == "done":
                    bars.close()
                    print(_summary(data))
                    ocr = _ocr_line(check(http.get("/library/status")).get("ocr_phase") or {})
                    if ocr:
                        print(ocr)
    except KeyboardInterrupt:
        bars.close()
        print(
            "stopped watching; the embedding phase goes on in the library service",
            file=sys.stderr,
        )
        return 130
    except httpx.ConnectError:
        raise connect_error(url) from None
    except httpx.TransportError as exc:  # the gateway went away mid-stream (stopped, crashed)
        bars.close()
        raise GatewayError(
            f"lost the connection to the gateway at {url} while indexing ({exc}). What was "
            "indexed is kept; once Zocrates runs again, `zocrates index` picks up where it "
            "stopped."
        ) from None
    return 0


class _IndexBars:
    """Two bars: the keyword phase (pages) and the embedding phase (passages)."""

    def __init__(self) -> None:
        self.keyword: tqdm | None = None  # type: ignore[type-arg]
        self.embedding: tqdm | None = None  # type: ignore[type-arg]

    def update(self, data: dict[str, Any]) -> None:
        phase = data["phase"]
        if phase == "indexing" and self.keyword is None:
            print(data["message"], file=sys.stderr)
            self.keyword = tqdm(
                total=data["pages_total"], unit="page", desc="keywords ", dynamic_ncols=True
            )
        if self.keyword is not None:
            self.keyword.update(data["pages_done"] - self.keyword.n)
            self.keyword.set_postfix_str(
                f"{data['items_done']}/{data['items_total']} items {data['current'][:30]}"
            )
            if phase in ("searchable", "embedding", "done"):
                self.keyword.close()
        if phase == "searchable":
            print("every paper is keyword-searchable now", file=sys.stderr)
        embedding = data.get("embedding") or {}
        if phase in ("searchable", "embedding") and embedding.get("chunks_total"):
            if self.embedding is None:
                self.embedding = tqdm(
                    total=embedding["chunks_total"],
                    unit="passage",
                    desc="embedding",
                    dynamic_ncols=True,
                )
            self.embedding.total = embedding["chunks_total"]
            self.embedding.update(embedding["chunks_embedded"] - self.embedding.n)
            note = embedding.get("error") or ""
            self.embedding.set_postfix_str(f"{embedding['chunks_pending']} pending {note}"[:60])

    def close(self) -> None:
        for bar in (self.keyword, self.embedding):
            if bar is not None:
                bar.close()


def _summary(data: dict[str, Any]) -> str:
    text = data["message"] + f" in {data['elapsed_seconds']:.1f} s"
    embedding = data.get("embedding") or {}
    if embedding.get("chunks_pending"):
        text += (
            f"; {embedding['chunks_pending']} of {embedding['chunks_total']} passages still "
            "wait for their embedding (search uses keywords for them meanwhile)"
        )
    return text


def _ocr_line(ocr: dict[str, Any]) -> str:
    """What the OCR phase has left of the scanned PDFs, and how to install Tesseract."""
    pdfs, pages = ocr.get("attachments_pending") or 0, ocr.get("pages_pending") or 0
    if not pdfs:
        return ""
    waiting = f"{pages} page(s) without a text layer (scans) in {pdfs} PDF(s)"
    if ocr.get("available"):
        return f"{waiting}: OCR reads them in the background (GET /library/status: ocr_phase)"
    return f"{waiting} wait for OCR: {ocr.get('error')}"


OWN_KINDS = ("highlight", "comment", "note")


def run_search(args: argparse.Namespace) -> int:
    import pathlib

    url = gateway_url(args.port)
    token = read_token(pathlib.Path(args.zotero_dir) if args.zotero_dir else None)
    params: dict[str, str | int | list[str]] = {
        "q": args.query,
        "k": args.k,
        "mode": args.mode,
        "rerank": str(args.rerank).lower(),
    }
    if args.items:
        params["item_keys"] = args.items
    if args.collection:
        params["collection"] = args.collection
    if args.kinds:
        params["kind"] = args.kinds
    try:
        with client(url, token) as http:
            body = check(http.get("/library/search", params=params))
    except httpx.ConnectError:
        raise connect_error(url) from None
    if args.json:
        print(json.dumps(body, indent=2, ensure_ascii=False))
        return 0
    if not body["results"]:
        print("No passages found.")
    for rank, hit in enumerate(body["results"], 1):
        pages = f"p. {hit['page']}" + (
            f"-{hit['page_end']}" if hit["page_end"] != hit["page"] else ""
        )
        authors = "; ".join(hit["authors"][:2]) + (" et al." if len(hit["authors"]) > 2 else "")
        print(
            f"{rank}. [{hit['item_key']}] {hit['title']} ({authors}, {hit['year']}), {pages}, "
            f"score {hit['score']:.4f}"
        )
        if hit.get("kind") in OWN_KINDS:  # what you wrote in Zotero
            named = f" \u201c{hit['note_title']}\u201d" if hit.get("note_title") else ""
            print(f"   your {hit['kind']}{named} ({hit.get('source_key')})")
        if hit["section"]:
            print(f"   section: {hit['section']}")
        print(
            textwrap.indent(
                textwrap.fill(hit["text"][:500] + ("..." if len(hit["text"]) > 500 else ""), 96),
                "   ",
            )
        )
    print(f"({body['took_ms']:.0f} ms)")
    return 0
