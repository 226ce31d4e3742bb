"""The library index's Prometheus metrics.

Counters move as indexing progresses (``rate()`` of them is the indexing rate); the size
gauges are read at scrape time from counts the library already keeps in memory (the embedding
queue's totals, refreshed as it works; the item and attachment counts, taken once when the
index opens and after each sync), so a scrape never queries the index.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator
from typing import TYPE_CHECKING

from prometheus_client import Counter
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from services.common.metrics import REGISTRY

if TYPE_CHECKING:
    from services.library.library import Library

INDEXED_ATTACHMENTS = Counter(
    "zocrates_library_indexed_attachments_total",
    "Attachments the keyword phase extracted and wrote, by state ('indexed', 'no_text', 'failed').",
    ["state"],
    registry=REGISTRY,
)
INDEXED_PAGES = Counter(
    "zocrates_library_indexed_pages_total",
    "Pages the keyword phase extracted and wrote.",
    registry=REGISTRY,
)
INDEXED_CHUNKS = Counter(
    "zocrates_library_indexed_chunks_total",
    "Chunks the keyword phase wrote (keyword-searchable from then on).",
    registry=REGISTRY,
)
EMBEDDED_CHUNKS = Counter(
    "zocrates_library_embedded_chunks_total",
    "Chunks the embedding phase gave a vector.",
    registry=REGISTRY,
)


class _LibrarySizes(Collector):
    """Gauges of the open libraries' sizes, summed (one library per library service process)."""

    def __init__(self) -> None:
        self.libraries: weakref.WeakSet[Library] = weakref.WeakSet()

    def describe(self) -> Iterator[GaugeMetricFamily]:
        return iter(self._families())

    def collect(self) -> Iterator[GaugeMetricFamily]:
        return iter(self._families())

    def _families(self) -> list[GaugeMetricFamily]:
        items = attachments = chunks = pending = 0
        for library in list(self.libraries):
            counts = library.index_counts
            items += counts.get("items", 0)
            attachments += counts.get("attachments", 0)
            progress = library.embedding.progress()
            chunks += progress.chunks_total
            pending += progress.chunks_pending
        return [
            GaugeMetricFamily(
                "zocrates_library_items",
                "Zotero items in the index (as of its opening or the last sync).",
                value=items,
            ),
            GaugeMetricFamily(
                "zocrates_library_attachments",
                "Attachments with a source in the index (as of its opening or the last sync).",
                value=attachments,
            ),
            GaugeMetricFamily(
                "zocrates_library_chunks",
                "Chunks in the index (as the embedding queue last counted them).",
                value=chunks,
            ),
            GaugeMetricFamily(
                "zocrates_library_chunks_pending_embedding",
                "Chunks still without a vector (keyword-searchable only).",
                value=pending,
            ),
        ]


LIBRARY_SIZES = _LibrarySizes()
REGISTRY.register(LIBRARY_SIZES)


def watch(library: Library) -> None:
    """Report ``library``'s sizes while it lives."""
    LIBRARY_SIZES.libraries.add(library)


def forget(library: Library) -> None:
    LIBRARY_SIZES.libraries.discard(library)
