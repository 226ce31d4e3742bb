from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Candidate(_message.Message):
    __slots__ = ("id", "text")
    ID_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    id: str
    text: str
    def __init__(self, id: _Optional[str] = ..., text: _Optional[str] = ...) -> None: ...

class RerankRequest(_message.Message):
    __slots__ = ("query", "candidates", "max_chunks", "word_ceiling")
    QUERY_FIELD_NUMBER: _ClassVar[int]
    CANDIDATES_FIELD_NUMBER: _ClassVar[int]
    MAX_CHUNKS_FIELD_NUMBER: _ClassVar[int]
    WORD_CEILING_FIELD_NUMBER: _ClassVar[int]
    query: str
    candidates: _containers.RepeatedCompositeFieldContainer[Candidate]
    max_chunks: int
    word_ceiling: int
    def __init__(self, query: _Optional[str] = ..., candidates: _Optional[_Iterable[_Union[Candidate, _Mapping]]] = ..., max_chunks: _Optional[int] = ..., word_ceiling: _Optional[int] = ...) -> None: ...

class ScoredCandidate(_message.Message):
    __slots__ = ("id", "score", "word_count")
    ID_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    WORD_COUNT_FIELD_NUMBER: _ClassVar[int]
    id: str
    score: float
    word_count: int
    def __init__(self, id: _Optional[str] = ..., score: _Optional[float] = ..., word_count: _Optional[int] = ...) -> None: ...

class RerankReply(_message.Message):
    __slots__ = ("results", "model", "took_ms")
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    TOOK_MS_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[ScoredCandidate]
    model: str
    took_ms: float
    def __init__(self, results: _Optional[_Iterable[_Union[ScoredCandidate, _Mapping]]] = ..., model: _Optional[str] = ..., took_ms: _Optional[float] = ...) -> None: ...

class EmbedRequest(_message.Message):
    __slots__ = ("texts", "is_query", "background")
    TEXTS_FIELD_NUMBER: _ClassVar[int]
    IS_QUERY_FIELD_NUMBER: _ClassVar[int]
    BACKGROUND_FIELD_NUMBER: _ClassVar[int]
    texts: _containers.RepeatedScalarFieldContainer[str]
    is_query: bool
    background: bool
    def __init__(self, texts: _Optional[_Iterable[str]] = ..., is_query: _Optional[bool] = ..., background: _Optional[bool] = ...) -> None: ...

class EmbedReply(_message.Message):
    __slots__ = ("dim", "vectors", "model", "count")
    DIM_FIELD_NUMBER: _ClassVar[int]
    VECTORS_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    dim: int
    vectors: bytes
    model: str
    count: int
    def __init__(self, dim: _Optional[int] = ..., vectors: _Optional[bytes] = ..., model: _Optional[str] = ..., count: _Optional[int] = ...) -> None: ...

class GetModelsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ModelsReply(_message.Message):
    __slots__ = ("reranker_model", "embedding_model", "embedding_dim", "ready")
    RERANKER_MODEL_FIELD_NUMBER: _ClassVar[int]
    EMBEDDING_MODEL_FIELD_NUMBER: _ClassVar[int]
    EMBEDDING_DIM_FIELD_NUMBER: _ClassVar[int]
    READY_FIELD_NUMBER: _ClassVar[int]
    reranker_model: str
    embedding_model: str
    embedding_dim: int
    ready: bool
    def __init__(self, reranker_model: _Optional[str] = ..., embedding_model: _Optional[str] = ..., embedding_dim: _Optional[int] = ..., ready: _Optional[bool] = ...) -> None: ...
