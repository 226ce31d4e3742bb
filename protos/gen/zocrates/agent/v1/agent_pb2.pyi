from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class SyncLibraryRequest(_message.Message):
    __slots__ = ("zotero_data_dir", "full")
    ZOTERO_DATA_DIR_FIELD_NUMBER: _ClassVar[int]
    FULL_FIELD_NUMBER: _ClassVar[int]
    zotero_data_dir: str
    full: bool
    def __init__(self, zotero_data_dir: _Optional[str] = ..., full: _Optional[bool] = ...) -> None: ...

class SyncProgress(_message.Message):
    __slots__ = ("phase", "items_done", "items_total", "pages_done", "pages_total", "pages_per_second", "eta_seconds", "current", "added", "updated", "removed", "unchanged", "failed", "elapsed_seconds", "message")
    PHASE_FIELD_NUMBER: _ClassVar[int]
    ITEMS_DONE_FIELD_NUMBER: _ClassVar[int]
    ITEMS_TOTAL_FIELD_NUMBER: _ClassVar[int]
    PAGES_DONE_FIELD_NUMBER: _ClassVar[int]
    PAGES_TOTAL_FIELD_NUMBER: _ClassVar[int]
    PAGES_PER_SECOND_FIELD_NUMBER: _ClassVar[int]
    ETA_SECONDS_FIELD_NUMBER: _ClassVar[int]
    CURRENT_FIELD_NUMBER: _ClassVar[int]
    ADDED_FIELD_NUMBER: _ClassVar[int]
    UPDATED_FIELD_NUMBER: _ClassVar[int]
    REMOVED_FIELD_NUMBER: _ClassVar[int]
    UNCHANGED_FIELD_NUMBER: _ClassVar[int]
    FAILED_FIELD_NUMBER: _ClassVar[int]
    ELAPSED_SECONDS_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    phase: str
    items_done: int
    items_total: int
    pages_done: int
    pages_total: int
    pages_per_second: float
    eta_seconds: float
    current: str
    added: int
    updated: int
    removed: int
    unchanged: int
    failed: int
    elapsed_seconds: float
    message: str
    def __init__(self, phase: _Optional[str] = ..., items_done: _Optional[int] = ..., items_total: _Optional[int] = ..., pages_done: _Optional[int] = ..., pages_total: _Optional[int] = ..., pages_per_second: _Optional[float] = ..., eta_seconds: _Optional[float] = ..., current: _Optional[str] = ..., added: _Optional[int] = ..., updated: _Optional[int] = ..., removed: _Optional[int] = ..., unchanged: _Optional[int] = ..., failed: _Optional[int] = ..., elapsed_seconds: _Optional[float] = ..., message: _Optional[str] = ...) -> None: ...

class GetLibraryStatusRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class LibraryStatus(_message.Message):
    __slots__ = ("zotero_data_dir", "items", "attachments", "pages", "chunks", "last_sync_at", "syncing", "embedding_model", "embedding_dim", "index_bytes")
    ZOTERO_DATA_DIR_FIELD_NUMBER: _ClassVar[int]
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    ATTACHMENTS_FIELD_NUMBER: _ClassVar[int]
    PAGES_FIELD_NUMBER: _ClassVar[int]
    CHUNKS_FIELD_NUMBER: _ClassVar[int]
    LAST_SYNC_AT_FIELD_NUMBER: _ClassVar[int]
    SYNCING_FIELD_NUMBER: _ClassVar[int]
    EMBEDDING_MODEL_FIELD_NUMBER: _ClassVar[int]
    EMBEDDING_DIM_FIELD_NUMBER: _ClassVar[int]
    INDEX_BYTES_FIELD_NUMBER: _ClassVar[int]
    zotero_data_dir: str
    items: int
    attachments: int
    pages: int
    chunks: int
    last_sync_at: float
    syncing: bool
    embedding_model: str
    embedding_dim: int
    index_bytes: int
    def __init__(self, zotero_data_dir: _Optional[str] = ..., items: _Optional[int] = ..., attachments: _Optional[int] = ..., pages: _Optional[int] = ..., chunks: _Optional[int] = ..., last_sync_at: _Optional[float] = ..., syncing: _Optional[bool] = ..., embedding_model: _Optional[str] = ..., embedding_dim: _Optional[int] = ..., index_bytes: _Optional[int] = ...) -> None: ...

class SearchLibraryRequest(_message.Message):
    __slots__ = ("query", "k", "item_keys", "collection_key", "mode", "rerank")
    QUERY_FIELD_NUMBER: _ClassVar[int]
    K_FIELD_NUMBER: _ClassVar[int]
    ITEM_KEYS_FIELD_NUMBER: _ClassVar[int]
    COLLECTION_KEY_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    RERANK_FIELD_NUMBER: _ClassVar[int]
    query: str
    k: int
    item_keys: _containers.RepeatedScalarFieldContainer[str]
    collection_key: str
    mode: str
    rerank: bool
    def __init__(self, query: _Optional[str] = ..., k: _Optional[int] = ..., item_keys: _Optional[_Iterable[str]] = ..., collection_key: _Optional[str] = ..., mode: _Optional[str] = ..., rerank: _Optional[bool] = ...) -> None: ...

class SearchHit(_message.Message):
    __slots__ = ("chunk_id", "item_key", "title", "authors", "year", "page_start", "page_end", "section", "score", "text", "word_count")
    CHUNK_ID_FIELD_NUMBER: _ClassVar[int]
    ITEM_KEY_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    AUTHORS_FIELD_NUMBER: _ClassVar[int]
    YEAR_FIELD_NUMBER: _ClassVar[int]
    PAGE_START_FIELD_NUMBER: _ClassVar[int]
    PAGE_END_FIELD_NUMBER: _ClassVar[int]
    SECTION_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    WORD_COUNT_FIELD_NUMBER: _ClassVar[int]
    chunk_id: str
    item_key: str
    title: str
    authors: _containers.RepeatedScalarFieldContainer[str]
    year: int
    page_start: int
    page_end: int
    section: str
    score: float
    text: str
    word_count: int
    def __init__(self, chunk_id: _Optional[str] = ..., item_key: _Optional[str] = ..., title: _Optional[str] = ..., authors: _Optional[_Iterable[str]] = ..., year: _Optional[int] = ..., page_start: _Optional[int] = ..., page_end: _Optional[int] = ..., section: _Optional[str] = ..., score: _Optional[float] = ..., text: _Optional[str] = ..., word_count: _Optional[int] = ...) -> None: ...

class SearchLibraryReply(_message.Message):
    __slots__ = ("hits", "took_ms")
    HITS_FIELD_NUMBER: _ClassVar[int]
    TOOK_MS_FIELD_NUMBER: _ClassVar[int]
    hits: _containers.RepeatedCompositeFieldContainer[SearchHit]
    took_ms: float
    def __init__(self, hits: _Optional[_Iterable[_Union[SearchHit, _Mapping]]] = ..., took_ms: _Optional[float] = ...) -> None: ...
