from zocrates.common.v1 import session_ref_pb2 as _session_ref_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class CreateSessionRequest(_message.Message):
    __slots__ = ("app_name", "user_id", "session_id", "state_json")
    APP_NAME_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    STATE_JSON_FIELD_NUMBER: _ClassVar[int]
    app_name: str
    user_id: str
    session_id: str
    state_json: str
    def __init__(self, app_name: _Optional[str] = ..., user_id: _Optional[str] = ..., session_id: _Optional[str] = ..., state_json: _Optional[str] = ...) -> None: ...

class GetSessionRequest(_message.Message):
    __slots__ = ("ref", "config_json")
    REF_FIELD_NUMBER: _ClassVar[int]
    CONFIG_JSON_FIELD_NUMBER: _ClassVar[int]
    ref: _session_ref_pb2.SessionRef
    config_json: str
    def __init__(self, ref: _Optional[_Union[_session_ref_pb2.SessionRef, _Mapping]] = ..., config_json: _Optional[str] = ...) -> None: ...

class SessionReply(_message.Message):
    __slots__ = ("session_json", "storage_update_marker")
    SESSION_JSON_FIELD_NUMBER: _ClassVar[int]
    STORAGE_UPDATE_MARKER_FIELD_NUMBER: _ClassVar[int]
    session_json: str
    storage_update_marker: str
    def __init__(self, session_json: _Optional[str] = ..., storage_update_marker: _Optional[str] = ...) -> None: ...

class ListSessionsRequest(_message.Message):
    __slots__ = ("app_name", "user_id")
    APP_NAME_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    app_name: str
    user_id: str
    def __init__(self, app_name: _Optional[str] = ..., user_id: _Optional[str] = ...) -> None: ...

class ListSessionsReply(_message.Message):
    __slots__ = ("session_json",)
    SESSION_JSON_FIELD_NUMBER: _ClassVar[int]
    session_json: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, session_json: _Optional[_Iterable[str]] = ...) -> None: ...

class DeleteSessionRequest(_message.Message):
    __slots__ = ("ref",)
    REF_FIELD_NUMBER: _ClassVar[int]
    ref: _session_ref_pb2.SessionRef
    def __init__(self, ref: _Optional[_Union[_session_ref_pb2.SessionRef, _Mapping]] = ...) -> None: ...

class DeleteSessionReply(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class AppendEventRequest(_message.Message):
    __slots__ = ("ref", "last_update_time", "storage_update_marker", "last_event_id", "event_json")
    REF_FIELD_NUMBER: _ClassVar[int]
    LAST_UPDATE_TIME_FIELD_NUMBER: _ClassVar[int]
    STORAGE_UPDATE_MARKER_FIELD_NUMBER: _ClassVar[int]
    LAST_EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    EVENT_JSON_FIELD_NUMBER: _ClassVar[int]
    ref: _session_ref_pb2.SessionRef
    last_update_time: float
    storage_update_marker: str
    last_event_id: str
    event_json: str
    def __init__(self, ref: _Optional[_Union[_session_ref_pb2.SessionRef, _Mapping]] = ..., last_update_time: _Optional[float] = ..., storage_update_marker: _Optional[str] = ..., last_event_id: _Optional[str] = ..., event_json: _Optional[str] = ...) -> None: ...

class AppendEventReply(_message.Message):
    __slots__ = ("event_json", "last_update_time", "storage_update_marker")
    EVENT_JSON_FIELD_NUMBER: _ClassVar[int]
    LAST_UPDATE_TIME_FIELD_NUMBER: _ClassVar[int]
    STORAGE_UPDATE_MARKER_FIELD_NUMBER: _ClassVar[int]
    event_json: str
    last_update_time: float
    storage_update_marker: str
    def __init__(self, event_json: _Optional[str] = ..., last_update_time: _Optional[float] = ..., storage_update_marker: _Optional[str] = ...) -> None: ...

class CreateChatRequest(_message.Message):
    __slots__ = ("app_name", "user_id", "title")
    APP_NAME_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    app_name: str
    user_id: str
    title: str
    def __init__(self, app_name: _Optional[str] = ..., user_id: _Optional[str] = ..., title: _Optional[str] = ...) -> None: ...

class FormattedSessionReply(_message.Message):
    __slots__ = ("session_json",)
    SESSION_JSON_FIELD_NUMBER: _ClassVar[int]
    session_json: str
    def __init__(self, session_json: _Optional[str] = ...) -> None: ...

class ListManifestsRequest(_message.Message):
    __slots__ = ("app_name", "user_id")
    APP_NAME_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    app_name: str
    user_id: str
    def __init__(self, app_name: _Optional[str] = ..., user_id: _Optional[str] = ...) -> None: ...

class SessionManifest(_message.Message):
    __slots__ = ("id", "title", "created_at", "updated_at", "event_count")
    ID_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    EVENT_COUNT_FIELD_NUMBER: _ClassVar[int]
    id: str
    title: str
    created_at: float
    updated_at: float
    event_count: int
    def __init__(self, id: _Optional[str] = ..., title: _Optional[str] = ..., created_at: _Optional[float] = ..., updated_at: _Optional[float] = ..., event_count: _Optional[int] = ...) -> None: ...

class ListManifestsReply(_message.Message):
    __slots__ = ("sessions",)
    SESSIONS_FIELD_NUMBER: _ClassVar[int]
    sessions: _containers.RepeatedCompositeFieldContainer[SessionManifest]
    def __init__(self, sessions: _Optional[_Iterable[_Union[SessionManifest, _Mapping]]] = ...) -> None: ...

class RenameSessionRequest(_message.Message):
    __slots__ = ("ref", "title")
    REF_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    ref: _session_ref_pb2.SessionRef
    title: str
    def __init__(self, ref: _Optional[_Union[_session_ref_pb2.SessionRef, _Mapping]] = ..., title: _Optional[str] = ...) -> None: ...

class GetPromptImageRequest(_message.Message):
    __slots__ = ("ref", "sha256")
    REF_FIELD_NUMBER: _ClassVar[int]
    SHA256_FIELD_NUMBER: _ClassVar[int]
    ref: _session_ref_pb2.SessionRef
    sha256: str
    def __init__(self, ref: _Optional[_Union[_session_ref_pb2.SessionRef, _Mapping]] = ..., sha256: _Optional[str] = ...) -> None: ...

class PromptImage(_message.Message):
    __slots__ = ("mime_type", "data")
    MIME_TYPE_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    mime_type: str
    data: bytes
    def __init__(self, mime_type: _Optional[str] = ..., data: _Optional[bytes] = ...) -> None: ...

class GetStorageStatsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class StorageStats(_message.Message):
    __slots__ = ("backend", "location", "size_bytes", "page_count", "page_size", "freelist_count", "session_count", "event_count")
    BACKEND_FIELD_NUMBER: _ClassVar[int]
    LOCATION_FIELD_NUMBER: _ClassVar[int]
    SIZE_BYTES_FIELD_NUMBER: _ClassVar[int]
    PAGE_COUNT_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    FREELIST_COUNT_FIELD_NUMBER: _ClassVar[int]
    SESSION_COUNT_FIELD_NUMBER: _ClassVar[int]
    EVENT_COUNT_FIELD_NUMBER: _ClassVar[int]
    backend: str
    location: str
    size_bytes: int
    page_count: int
    page_size: int
    freelist_count: int
    session_count: int
    event_count: int
    def __init__(self, backend: _Optional[str] = ..., location: _Optional[str] = ..., size_bytes: _Optional[int] = ..., page_count: _Optional[int] = ..., page_size: _Optional[int] = ..., freelist_count: _Optional[int] = ..., session_count: _Optional[int] = ..., event_count: _Optional[int] = ...) -> None: ...

class RunMaintenanceRequest(_message.Message):
    __slots__ = ("active_session_ids", "retention_days", "max_saved_sessions", "reason", "app_name")
    ACTIVE_SESSION_IDS_FIELD_NUMBER: _ClassVar[int]
    RETENTION_DAYS_FIELD_NUMBER: _ClassVar[int]
    MAX_SAVED_SESSIONS_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    APP_NAME_FIELD_NUMBER: _ClassVar[int]
    active_session_ids: _containers.RepeatedScalarFieldContainer[str]
    retention_days: int
    max_saved_sessions: int
    reason: str
    app_name: str
    def __init__(self, active_session_ids: _Optional[_Iterable[str]] = ..., retention_days: _Optional[int] = ..., max_saved_sessions: _Optional[int] = ..., reason: _Optional[str] = ..., app_name: _Optional[str] = ...) -> None: ...

class MaintenanceReport(_message.Message):
    __slots__ = ("deleted_empty", "deleted_expired", "deleted_over_cap", "deleted_ids", "vacuumed", "vacuum_skipped_reason", "size_before", "size_after", "duration_ms", "skipped_active")
    DELETED_EMPTY_FIELD_NUMBER: _ClassVar[int]
    DELETED_EXPIRED_FIELD_NUMBER: _ClassVar[int]
    DELETED_OVER_CAP_FIELD_NUMBER: _ClassVar[int]
    DELETED_IDS_FIELD_NUMBER: _ClassVar[int]
    VACUUMED_FIELD_NUMBER: _ClassVar[int]
    VACUUM_SKIPPED_REASON_FIELD_NUMBER: _ClassVar[int]
    SIZE_BEFORE_FIELD_NUMBER: _ClassVar[int]
    SIZE_AFTER_FIELD_NUMBER: _ClassVar[int]
    DURATION_MS_FIELD_NUMBER: _ClassVar[int]
    SKIPPED_ACTIVE_FIELD_NUMBER: _ClassVar[int]
    deleted_empty: int
    deleted_expired: int
    deleted_over_cap: int
    deleted_ids: _containers.RepeatedScalarFieldContainer[str]
    vacuumed: bool
    vacuum_skipped_reason: str
    size_before: int
    size_after: int
    duration_ms: float
    skipped_active: int
    def __init__(self, deleted_empty: _Optional[int] = ..., deleted_expired: _Optional[int] = ..., deleted_over_cap: _Optional[int] = ..., deleted_ids: _Optional[_Iterable[str]] = ..., vacuumed: _Optional[bool] = ..., vacuum_skipped_reason: _Optional[str] = ..., size_before: _Optional[int] = ..., size_after: _Optional[int] = ..., duration_ms: _Optional[float] = ..., skipped_active: _Optional[int] = ...) -> None: ...

class GetOwedVacuumRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class OwedVacuum(_message.Message):
    __slots__ = ("owed", "deleted", "since")
    OWED_FIELD_NUMBER: _ClassVar[int]
    DELETED_FIELD_NUMBER: _ClassVar[int]
    SINCE_FIELD_NUMBER: _ClassVar[int]
    owed: bool
    deleted: int
    since: float
    def __init__(self, owed: _Optional[bool] = ..., deleted: _Optional[int] = ..., since: _Optional[float] = ...) -> None: ...

class RunDeferredVacuumRequest(_message.Message):
    __slots__ = ("active_session_ids",)
    ACTIVE_SESSION_IDS_FIELD_NUMBER: _ClassVar[int]
    active_session_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, active_session_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class UseDataDirRequest(_message.Message):
    __slots__ = ("zotero_data_dir",)
    ZOTERO_DATA_DIR_FIELD_NUMBER: _ClassVar[int]
    zotero_data_dir: str
    def __init__(self, zotero_data_dir: _Optional[str] = ...) -> None: ...

class UseDataDirReply(_message.Message):
    __slots__ = ("location", "changed")
    LOCATION_FIELD_NUMBER: _ClassVar[int]
    CHANGED_FIELD_NUMBER: _ClassVar[int]
    location: str
    changed: bool
    def __init__(self, location: _Optional[str] = ..., changed: _Optional[bool] = ...) -> None: ...
