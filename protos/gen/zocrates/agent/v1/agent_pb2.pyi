from zocrates.common.v1 import session_ref_pb2 as _session_ref_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ContextItem(_message.Message):
    __slots__ = ("item_key", "title")
    ITEM_KEY_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    item_key: str
    title: str
    def __init__(self, item_key: _Optional[str] = ..., title: _Optional[str] = ...) -> None: ...

class SnippetImage(_message.Message):
    __slots__ = ("mime_type", "data")
    MIME_TYPE_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    mime_type: str
    data: bytes
    def __init__(self, mime_type: _Optional[str] = ..., data: _Optional[bytes] = ...) -> None: ...

class Snippet(_message.Message):
    __slots__ = ("text", "item_key", "page", "title", "kind", "image")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    ITEM_KEY_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    IMAGE_FIELD_NUMBER: _ClassVar[int]
    text: str
    item_key: str
    page: int
    title: str
    kind: str
    image: SnippetImage
    def __init__(self, text: _Optional[str] = ..., item_key: _Optional[str] = ..., page: _Optional[int] = ..., title: _Optional[str] = ..., kind: _Optional[str] = ..., image: _Optional[_Union[SnippetImage, _Mapping]] = ...) -> None: ...

class ChatRequest(_message.Message):
    __slots__ = ("session", "prompt", "items", "collection_key", "collection_name", "snippets", "mode", "config_json")
    SESSION_FIELD_NUMBER: _ClassVar[int]
    PROMPT_FIELD_NUMBER: _ClassVar[int]
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    COLLECTION_KEY_FIELD_NUMBER: _ClassVar[int]
    COLLECTION_NAME_FIELD_NUMBER: _ClassVar[int]
    SNIPPETS_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    CONFIG_JSON_FIELD_NUMBER: _ClassVar[int]
    session: _session_ref_pb2.SessionRef
    prompt: str
    items: _containers.RepeatedCompositeFieldContainer[ContextItem]
    collection_key: str
    collection_name: str
    snippets: _containers.RepeatedCompositeFieldContainer[Snippet]
    mode: str
    config_json: str
    def __init__(self, session: _Optional[_Union[_session_ref_pb2.SessionRef, _Mapping]] = ..., prompt: _Optional[str] = ..., items: _Optional[_Iterable[_Union[ContextItem, _Mapping]]] = ..., collection_key: _Optional[str] = ..., collection_name: _Optional[str] = ..., snippets: _Optional[_Iterable[_Union[Snippet, _Mapping]]] = ..., mode: _Optional[str] = ..., config_json: _Optional[str] = ...) -> None: ...

class ResumeRequest(_message.Message):
    __slots__ = ("session", "invocation_id", "interrupt_id", "response_json", "config_json")
    SESSION_FIELD_NUMBER: _ClassVar[int]
    INVOCATION_ID_FIELD_NUMBER: _ClassVar[int]
    INTERRUPT_ID_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_JSON_FIELD_NUMBER: _ClassVar[int]
    CONFIG_JSON_FIELD_NUMBER: _ClassVar[int]
    session: _session_ref_pb2.SessionRef
    invocation_id: str
    interrupt_id: str
    response_json: str
    config_json: str
    def __init__(self, session: _Optional[_Union[_session_ref_pb2.SessionRef, _Mapping]] = ..., invocation_id: _Optional[str] = ..., interrupt_id: _Optional[str] = ..., response_json: _Optional[str] = ..., config_json: _Optional[str] = ...) -> None: ...

class ChatEvent(_message.Message):
    __slots__ = ("type", "data_json")
    TYPE_FIELD_NUMBER: _ClassVar[int]
    DATA_JSON_FIELD_NUMBER: _ClassVar[int]
    type: str
    data_json: str
    def __init__(self, type: _Optional[str] = ..., data_json: _Optional[str] = ...) -> None: ...

class RewindRequest(_message.Message):
    __slots__ = ("session", "invocation_id")
    SESSION_FIELD_NUMBER: _ClassVar[int]
    INVOCATION_ID_FIELD_NUMBER: _ClassVar[int]
    session: _session_ref_pb2.SessionRef
    invocation_id: str
    def __init__(self, session: _Optional[_Union[_session_ref_pb2.SessionRef, _Mapping]] = ..., invocation_id: _Optional[str] = ...) -> None: ...

class RewindReply(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...
