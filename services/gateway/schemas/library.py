"""Bodies of the library routes: the index's status, prioritizing, and plain search."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from services.gateway.schemas.base import Success


class KeywordPhase(BaseModel):
    """Text, TOC, chunks and the keyword index, attachment by attachment."""

    running: bool
    items_done: int
    items_total: int
    items_pending: int
    pages_done: int
    pages_total: int
    pages_pending: int
    pages_per_second: float
    eta_seconds: float


class EmbeddingPhase(BaseModel):
    """A vector for every chunk, in the background."""

    running: bool
    chunks_total: int
    chunks_embedded: int
    chunks_pending: int
    chunks_per_second: float = Field(description="Over the last minute.")
    eta_seconds: float
    error: str = Field(description="Why it is stalled (the embedder unreachable); empty if not.")


class OcrPhase(BaseModel):
    """Pages without a text layer (scans), read by Tesseract OCR after the keyword phase."""

    running: bool
    available: bool = Field(
        description="Tesseract and the languages' data are installed (else `error` says how)."
    )
    languages: str = Field(description="Tesseract's codes, joined by '+'.")
    attachments_pending: int
    pages_done: int = Field(description="Pages read since the library service started.")
    pages_pending: int
    pages_per_second: float
    eta_seconds: float
    error: str = Field(description="Why it cannot run, or the last page it could not read.")


class AttachmentProblem(BaseModel):
    """An attachment that is not (fully) searchable, and why."""

    attachment_key: str
    item_key: str
    title: str
    path: str
    state: str = Field(description="`failed`, `no_text`, `missing`, or `indexed` (image pages).")
    reason: str
    pages: int
    pages_without_text: int


class LibraryStatus(Success):
    zotero_data_dir: str
    items: int
    attachments: int
    pages: int
    chunks: int
    last_sync_at: float | None = Field(description="Unix time; null before the first sync.")
    syncing: bool
    embedding_model: str
    embedding_dim: int
    index_bytes: int
    keyword_phase: KeywordPhase
    embedding_phase: EmbeddingPhase
    attachment_states: dict[str, int] = Field(
        description="Attachments by state: indexed, no_text, failed, missing."
    )
    problems: list[AttachmentProblem] = Field(description="The worst first (at most 10).")
    passages: dict[str, int] = Field(
        description="Passages by kind: text (the papers), highlight, comment, note (yours)."
    )
    ocr_phase: OcrPhase


class Prioritized(Success):
    item_keys: list[str]
    chunks_pending: int = Field(description="Their chunks still waiting for a vector.")


class SearchHit(BaseModel):
    item_key: str
    attachment_key: str | None = Field(
        default=None, description="The PDF the passage is from (an item may have several)."
    )
    title: str
    authors: list[str]
    year: int | None
    page: int = Field(description="First page of the passage.")
    page_end: int
    section: str | None
    score: float
    word_count: int
    text: str
    kind: Literal["text", "highlight", "comment", "note"] = Field(
        default="text",
        description="The paper's `text`, or what you wrote in Zotero: a `highlight` (the text "
        "under it, and your comment), a `comment` (your words on a page) or a `note`.",
    )
    source_key: str | None = Field(
        default=None, description="The annotation's or note's key (yours only)."
    )
    page_label: str | None = Field(default=None, description="The page's printed label.")
    color: str | None = Field(default=None, description="The annotation's colour.")
    annotation_type: str | None = Field(
        default=None, description="highlight, underline, note, text, image or ink."
    )
    note_title: str | None = None
    tags: list[str] | None = None


class SearchResults(Success):
    query: str
    took_ms: float
    results: list[SearchHit] = Field(description="Best first.")
