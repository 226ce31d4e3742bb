"""Settings of the library service (``ZOCRATES_`` environment variables)."""

from __future__ import annotations

import pathlib

from pydantic import Field, model_validator

from services.common import ports
from services.common.settings import CommonSettings


class LibrarySettings(CommonSettings):
    library_grpc_port: int | None = Field(
        default=None, description="gRPC port of the library service. Default: base port + 5."
    )
    library_admin_port: int | None = Field(
        default=None, description="Admin HTTP port of the library service. Default: base port + 15."
    )
    reranker_addr: str = Field(
        description=(
            "host:port of the reranker service (the embeddings of the index, search's "
            "reranking). `zocrates run` sets it to 127.0.0.1:<base port + 3>."
        ),
    )
    index_dir: pathlib.Path | None = Field(
        default=None,
        description="Folder of the library index. Default: <data dir>/library.",
    )
    index_workers: int = Field(
        default=0,
        ge=0,
        le=16,
        description=("Processes that extract text while indexing (0: one per core, at most 2)."),
    )
    vector_graph_from: int = Field(
        default=100_000,
        ge=1,
        description=(
            "Chunk vectors from which semantic search goes through an approximate "
            "nearest-neighbour graph (HNSW, saved next to the index) instead of exact search."
        ),
    )
    base_attachment_dir: pathlib.Path | None = Field(
        default=None,
        description=(
            "Zotero's Linked Attachment Base Directory, to resolve attachments stored as "
            "relative links. Unset: such attachments fall back to Zotero's full-text cache."
        ),
    )

    ocr_enabled: bool = Field(
        default=True,
        description=(
            "Read the pages of PDFs without a text layer (scans) with Tesseract OCR, after the "
            "keyword phase. Without Tesseract installed nothing is read and the status says so."
        ),
    )
    ocr_languages: str = Field(
        default="eng",
        pattern=r"^[A-Za-z_]+(\+[A-Za-z_]+)*$",
        description=(
            "Tesseract's languages for OCR, joined by '+' (eng, eng+deu, fra ...); each needs "
            "its data installed (Debian: tesseract-ocr-<language>)."
        ),
    )
    ocr_dpi: int = Field(
        default=300, ge=100, le=600, description="Resolution pages are rendered at for OCR."
    )
    ocr_workers: int = Field(
        default=1,
        ge=1,
        le=8,
        description="Pages read by OCR at once (one Tesseract process, on one thread, each).",
    )

    @model_validator(mode="after")
    def _derive_ports(self) -> LibrarySettings:
        if self.library_grpc_port is None:
            self.library_grpc_port = ports.service_port(self.port, "library")
        if self.library_admin_port is None:
            self.library_admin_port = ports.admin_port(self.port, "library")
        return self

    @property
    def library_dir(self) -> pathlib.Path:
        return (self.index_dir or self.data_dir / "library").expanduser()
