from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class SyncLibraryRequest(_message.Message):
    __slots__ = ("zotero_data_dir", "full", "follow_embedding")
    ZOTERO_DATA_DIR_FIELD_NUMBER: _ClassVar[int]
    FULL_FIELD_NUMBER: _ClassVar[int]
    FOLLOW_EMBEDDING_FIELD_NUMBER: _ClassVar[int]
    zotero_data_dir: str
    full: bool
    follow_embedding: bool
    def __init__(self, zotero_data_dir: _Optional[str] = ..., full: _Optional[bool] = ..., follow_embedding: _Optional[bool] = ...) -> None: ...

class KeywordPhase(_message.Message):
    __slots__ = ("running", "items_done", "items_total", "items_pending", "pages_done", "pages_total", "pages_pending", "pages_per_second", "eta_seconds")
    RUNNING_FIELD_NUMBER: _ClassVar[int]
    ITEMS_DONE_FIELD_NUMBER: _ClassVar[int]
    ITEMS_TOTAL_FIELD_NUMBER: _ClassVar[int]
    ITEMS_PENDING_FIELD_NUMBER: _ClassVar[int]
    PAGES_DONE_FIELD_NUMBER: _ClassVar[int]
    PAGES_TOTAL_FIELD_NUMBER: _ClassVar[int]
    PAGES_PENDING_FIELD_NUMBER: _ClassVar[int]
    PAGES_PER_SECOND_FIELD_NUMBER: _ClassVar[int]
    ETA_SECONDS_FIELD_NUMBER: _ClassVar[int]
    running: bool
    items_done: int
    items_total: int
    items_pending: int
    pages_done: int
    pages_total: int
    pages_pending: int
    pages_per_second: float
    eta_seconds: float
    def __init__(self, running: _Optional[bool] = ..., items_done: _Optional[int] = ..., items_total: _Optional[int] = ..., items_pending: _Optional[int] = ..., pages_done: _Optional[int] = ..., pages_total: _Optional[int] = ..., pages_pending: _Optional[int] = ..., pages_per_second: _Optional[float] = ..., eta_seconds: _Optional[float] = ...) -> None: ...

class EmbeddingPhase(_message.Message):
    __slots__ = ("running", "chunks_total", "chunks_embedded", "chunks_pending", "chunks_per_second", "eta_seconds", "error")
    RUNNING_FIELD_NUMBER: _ClassVar[int]
    CHUNKS_TOTAL_FIELD_NUMBER: _ClassVar[int]
    CHUNKS_EMBEDDED_FIELD_NUMBER: _ClassVar[int]
    CHUNKS_PENDING_FIELD_NUMBER: _ClassVar[int]
    CHUNKS_PER_SECOND_FIELD_NUMBER: _ClassVar[int]
    ETA_SECONDS_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    running: bool
    chunks_total: int
    chunks_embedded: int
    chunks_pending: int
    chunks_per_second: float
    eta_seconds: float
    error: str
    def __init__(self, running: _Optional[bool] = ..., chunks_total: _Optional[int] = ..., chunks_embedded: _Optional[int] = ..., chunks_pending: _Optional[int] = ..., chunks_per_second: _Optional[float] = ..., eta_seconds: _Optional[float] = ..., error: _Optional[str] = ...) -> None: ...

class OcrPhase(_message.Message):
    __slots__ = ("running", "available", "languages", "attachments_pending", "pages_done", "pages_pending", "pages_per_second", "eta_seconds", "error")
    RUNNING_FIELD_NUMBER: _ClassVar[int]
    AVAILABLE_FIELD_NUMBER: _ClassVar[int]
    LANGUAGES_FIELD_NUMBER: _ClassVar[int]
    ATTACHMENTS_PENDING_FIELD_NUMBER: _ClassVar[int]
    PAGES_DONE_FIELD_NUMBER: _ClassVar[int]
    PAGES_PENDING_FIELD_NUMBER: _ClassVar[int]
    PAGES_PER_SECOND_FIELD_NUMBER: _ClassVar[int]
    ETA_SECONDS_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    running: bool
    available: bool
    languages: str
    attachments_pending: int
    pages_done: int
    pages_pending: int
    pages_per_second: float
    eta_seconds: float
    error: str
    def __init__(self, running: _Optional[bool] = ..., available: _Optional[bool] = ..., languages: _Optional[str] = ..., attachments_pending: _Optional[int] = ..., pages_done: _Optional[int] = ..., pages_pending: _Optional[int] = ..., pages_per_second: _Optional[float] = ..., eta_seconds: _Optional[float] = ..., error: _Optional[str] = ...) -> None: ...

class AttachmentProblem(_message.Message):
    __slots__ = ("attachment_key", "item_key", "title", "path", "state", "reason", "pages", "pages_without_text")
    ATTACHMENT_KEY_FIELD_NUMBER: _ClassVar[int]
    ITEM_KEY_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    PAGES_FIELD_NUMBER: _ClassVar[int]
    PAGES_WITHOUT_TEXT_FIELD_NUMBER: _ClassVar[int]
    attachment_key: str
    item_key: str
    title: str
    path: str
    state: str
    reason: str
    pages: int
    pages_without_text: int
    def __init__(self, attachment_key: _Optional[str] = ..., item_key: _Optional[str] = ..., title: _Optional[str] = ..., path: _Optional[str] = ..., state: _Optional[str] = ..., reason: _Optional[str] = ..., pages: _Optional[int] = ..., pages_without_text: _Optional[int] = ...) -> None: ...

class SyncProgress(_message.Message):
    __slots__ = ("phase", "items_done", "items_total", "pages_done", "pages_total", "pages_per_second", "eta_seconds", "current", "added", "updated", "removed", "unchanged", "failed", "elapsed_seconds", "message", "no_text", "keyword", "embedding")
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
    NO_TEXT_FIELD_NUMBER: _ClassVar[int]
    KEYWORD_FIELD_NUMBER: _ClassVar[int]
    EMBEDDING_FIELD_NUMBER: _ClassVar[int]
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
    no_text: int
    keyword: KeywordPhase
    embedding: EmbeddingPhase
    def __init__(self, phase: _Optional[str] = ..., items_done: _Optional[int] = ..., items_total: _Optional[int] = ..., pages_done: _Optional[int] = ..., pages_total: _Optional[int] = ..., pages_per_second: _Optional[float] = ..., eta_seconds: _Optional[float] = ..., current: _Optional[str] = ..., added: _Optional[int] = ..., updated: _Optional[int] = ..., removed: _Optional[int] = ..., unchanged: _Optional[int] = ..., failed: _Optional[int] = ..., elapsed_seconds: _Optional[float] = ..., message: _Optional[str] = ..., no_text: _Optional[int] = ..., keyword: _Optional[_Union[KeywordPhase, _Mapping]] = ..., embedding: _Optional[_Union[EmbeddingPhase, _Mapping]] = ...) -> None: ...

class GetLibraryStatusRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class LibraryStatus(_message.Message):
    __slots__ = ("zotero_data_dir", "items", "attachments", "pages", "chunks", "last_sync_at", "syncing", "embedding_model", "embedding_dim", "index_bytes", "keyword_phase", "embedding_phase", "attachment_states", "problems", "passages", "ocr_phase")
    class AttachmentStatesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    class PassagesEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
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
    KEYWORD_PHASE_FIELD_NUMBER: _ClassVar[int]
    EMBEDDING_PHASE_FIELD_NUMBER: _ClassVar[int]
    ATTACHMENT_STATES_FIELD_NUMBER: _ClassVar[int]
    PROBLEMS_FIELD_NUMBER: _ClassVar[int]
    PASSAGES_FIELD_NUMBER: _ClassVar[int]
    OCR_PHASE_FIELD_NUMBER: _ClassVar[int]
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
    keyword_phase: KeywordPhase
    embedding_phase: EmbeddingPhase
    attachment_states: _containers.ScalarMap[str, int]
    problems: _containers.RepeatedCompositeFieldContainer[AttachmentProblem]
    passages: _containers.ScalarMap[str, int]
    ocr_phase: OcrPhase
    def __init__(self, zotero_data_dir: _Optional[str] = ..., items: _Optional[int] = ..., attachments: _Optional[int] = ..., pages: _Optional[int] = ..., chunks: _Optional[int] = ..., last_sync_at: _Optional[float] = ..., syncing: _Optional[bool] = ..., embedding_model: _Optional[str] = ..., embedding_dim: _Optional[int] = ..., index_bytes: _Optional[int] = ..., keyword_phase: _Optional[_Union[KeywordPhase, _Mapping]] = ..., embedding_phase: _Optional[_Union[EmbeddingPhase, _Mapping]] = ..., attachment_states: _Optional[_Mapping[str, int]] = ..., problems: _Optional[_Iterable[_Union[AttachmentProblem, _Mapping]]] = ..., passages: _Optional[_Mapping[str, int]] = ..., ocr_phase: _Optional[_Union[OcrPhase, _Mapping]] = ...) -> None: ...

class PrioritizeItemsRequest(_message.Message):
    __slots__ = ("item_keys",)
    ITEM_KEYS_FIELD_NUMBER: _ClassVar[int]
    item_keys: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, item_keys: _Optional[_Iterable[str]] = ...) -> None: ...

class PrioritizeItemsReply(_message.Message):
    __slots__ = ("chunks_pending",)
    CHUNKS_PENDING_FIELD_NUMBER: _ClassVar[int]
    chunks_pending: int
    def __init__(self, chunks_pending: _Optional[int] = ...) -> None: ...

class SearchLibraryRequest(_message.Message):
    __slots__ = ("query", "k", "item_keys", "collection_key", "mode", "rerank", "kinds")
    QUERY_FIELD_NUMBER: _ClassVar[int]
    K_FIELD_NUMBER: _ClassVar[int]
    ITEM_KEYS_FIELD_NUMBER: _ClassVar[int]
    COLLECTION_KEY_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    RERANK_FIELD_NUMBER: _ClassVar[int]
    KINDS_FIELD_NUMBER: _ClassVar[int]
    query: str
    k: int
    item_keys: _containers.RepeatedScalarFieldContainer[str]
    collection_key: str
    mode: str
    rerank: bool
    kinds: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, query: _Optional[str] = ..., k: _Optional[int] = ..., item_keys: _Optional[_Iterable[str]] = ..., collection_key: _Optional[str] = ..., mode: _Optional[str] = ..., rerank: _Optional[bool] = ..., kinds: _Optional[_Iterable[str]] = ...) -> None: ...

class SearchHit(_message.Message):
    __slots__ = ("chunk_id", "item_key", "title", "authors", "year", "page_start", "page_end", "section", "score", "text", "word_count", "attachment_key", "kind", "source_key", "page_label", "color", "annotation_type", "note_title", "tags")
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
    ATTACHMENT_KEY_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    SOURCE_KEY_FIELD_NUMBER: _ClassVar[int]
    PAGE_LABEL_FIELD_NUMBER: _ClassVar[int]
    COLOR_FIELD_NUMBER: _ClassVar[int]
    ANNOTATION_TYPE_FIELD_NUMBER: _ClassVar[int]
    NOTE_TITLE_FIELD_NUMBER: _ClassVar[int]
    TAGS_FIELD_NUMBER: _ClassVar[int]
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
    attachment_key: str
    kind: str
    source_key: str
    page_label: str
    color: str
    annotation_type: str
    note_title: str
    tags: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, chunk_id: _Optional[str] = ..., item_key: _Optional[str] = ..., title: _Optional[str] = ..., authors: _Optional[_Iterable[str]] = ..., year: _Optional[int] = ..., page_start: _Optional[int] = ..., page_end: _Optional[int] = ..., section: _Optional[str] = ..., score: _Optional[float] = ..., text: _Optional[str] = ..., word_count: _Optional[int] = ..., attachment_key: _Optional[str] = ..., kind: _Optional[str] = ..., source_key: _Optional[str] = ..., page_label: _Optional[str] = ..., color: _Optional[str] = ..., annotation_type: _Optional[str] = ..., note_title: _Optional[str] = ..., tags: _Optional[_Iterable[str]] = ...) -> None: ...

class SearchLibraryReply(_message.Message):
    __slots__ = ("hits", "took_ms")
    HITS_FIELD_NUMBER: _ClassVar[int]
    TOOK_MS_FIELD_NUMBER: _ClassVar[int]
    hits: _containers.RepeatedCompositeFieldContainer[SearchHit]
    took_ms: float
    def __init__(self, hits: _Optional[_Iterable[_Union[SearchHit, _Mapping]]] = ..., took_ms: _Optional[float] = ...) -> None: ...

class GetDocumentTocRequest(_message.Message):
    __slots__ = ("item_key", "attachment_key")
    ITEM_KEY_FIELD_NUMBER: _ClassVar[int]
    ATTACHMENT_KEY_FIELD_NUMBER: _ClassVar[int]
    item_key: str
    attachment_key: str
    def __init__(self, item_key: _Optional[str] = ..., attachment_key: _Optional[str] = ...) -> None: ...

class TocSection(_message.Message):
    __slots__ = ("title", "level", "page")
    TITLE_FIELD_NUMBER: _ClassVar[int]
    LEVEL_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    title: str
    level: int
    page: int
    def __init__(self, title: _Optional[str] = ..., level: _Optional[int] = ..., page: _Optional[int] = ...) -> None: ...

class DocumentToc(_message.Message):
    __slots__ = ("item_key", "attachment_key", "attachment_keys", "title", "page_count", "sections")
    ITEM_KEY_FIELD_NUMBER: _ClassVar[int]
    ATTACHMENT_KEY_FIELD_NUMBER: _ClassVar[int]
    ATTACHMENT_KEYS_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    PAGE_COUNT_FIELD_NUMBER: _ClassVar[int]
    SECTIONS_FIELD_NUMBER: _ClassVar[int]
    item_key: str
    attachment_key: str
    attachment_keys: _containers.RepeatedScalarFieldContainer[str]
    title: str
    page_count: int
    sections: _containers.RepeatedCompositeFieldContainer[TocSection]
    def __init__(self, item_key: _Optional[str] = ..., attachment_key: _Optional[str] = ..., attachment_keys: _Optional[_Iterable[str]] = ..., title: _Optional[str] = ..., page_count: _Optional[int] = ..., sections: _Optional[_Iterable[_Union[TocSection, _Mapping]]] = ...) -> None: ...

class ReadDocumentRequest(_message.Message):
    __slots__ = ("item_key", "section", "start_page", "end_page", "attachment_key")
    ITEM_KEY_FIELD_NUMBER: _ClassVar[int]
    SECTION_FIELD_NUMBER: _ClassVar[int]
    START_PAGE_FIELD_NUMBER: _ClassVar[int]
    END_PAGE_FIELD_NUMBER: _ClassVar[int]
    ATTACHMENT_KEY_FIELD_NUMBER: _ClassVar[int]
    item_key: str
    section: str
    start_page: int
    end_page: int
    attachment_key: str
    def __init__(self, item_key: _Optional[str] = ..., section: _Optional[str] = ..., start_page: _Optional[int] = ..., end_page: _Optional[int] = ..., attachment_key: _Optional[str] = ...) -> None: ...

class PageText(_message.Message):
    __slots__ = ("page", "text")
    PAGE_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    page: int
    text: str
    def __init__(self, page: _Optional[int] = ..., text: _Optional[str] = ...) -> None: ...

class DocumentText(_message.Message):
    __slots__ = ("item_key", "attachment_key", "title", "section", "start_page", "end_page", "word_count", "pages")
    ITEM_KEY_FIELD_NUMBER: _ClassVar[int]
    ATTACHMENT_KEY_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    SECTION_FIELD_NUMBER: _ClassVar[int]
    START_PAGE_FIELD_NUMBER: _ClassVar[int]
    END_PAGE_FIELD_NUMBER: _ClassVar[int]
    WORD_COUNT_FIELD_NUMBER: _ClassVar[int]
    PAGES_FIELD_NUMBER: _ClassVar[int]
    item_key: str
    attachment_key: str
    title: str
    section: str
    start_page: int
    end_page: int
    word_count: int
    pages: _containers.RepeatedCompositeFieldContainer[PageText]
    def __init__(self, item_key: _Optional[str] = ..., attachment_key: _Optional[str] = ..., title: _Optional[str] = ..., section: _Optional[str] = ..., start_page: _Optional[int] = ..., end_page: _Optional[int] = ..., word_count: _Optional[int] = ..., pages: _Optional[_Iterable[_Union[PageText, _Mapping]]] = ...) -> None: ...
