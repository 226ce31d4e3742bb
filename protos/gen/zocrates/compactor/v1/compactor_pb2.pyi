from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Optional as _Optional

DESCRIPTOR: _descriptor.FileDescriptor

class EvaluateRequest(_message.Message):
    __slots__ = ("app_name", "user_id", "session_id", "config_json")
    APP_NAME_FIELD_NUMBER: _ClassVar[int]
    USER_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    CONFIG_JSON_FIELD_NUMBER: _ClassVar[int]
    app_name: str
    user_id: str
    session_id: str
    config_json: str
    def __init__(self, app_name: _Optional[str] = ..., user_id: _Optional[str] = ..., session_id: _Optional[str] = ..., config_json: _Optional[str] = ...) -> None: ...

class CompactionOutcome(_message.Message):
    __slots__ = ("outcome", "reason", "completed_turns", "effective_min_turns", "prompt_tokens", "forced", "probed", "probability", "verdict", "threshold", "decision_model", "probe_latency_ms", "start_timestamp", "end_timestamp", "summarized_turns", "retained_turns", "compaction_event_id", "took_ms")
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    COMPLETED_TURNS_FIELD_NUMBER: _ClassVar[int]
    EFFECTIVE_MIN_TURNS_FIELD_NUMBER: _ClassVar[int]
    PROMPT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    FORCED_FIELD_NUMBER: _ClassVar[int]
    PROBED_FIELD_NUMBER: _ClassVar[int]
    PROBABILITY_FIELD_NUMBER: _ClassVar[int]
    VERDICT_FIELD_NUMBER: _ClassVar[int]
    THRESHOLD_FIELD_NUMBER: _ClassVar[int]
    DECISION_MODEL_FIELD_NUMBER: _ClassVar[int]
    PROBE_LATENCY_MS_FIELD_NUMBER: _ClassVar[int]
    START_TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    END_TIMESTAMP_FIELD_NUMBER: _ClassVar[int]
    SUMMARIZED_TURNS_FIELD_NUMBER: _ClassVar[int]
    RETAINED_TURNS_FIELD_NUMBER: _ClassVar[int]
    COMPACTION_EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    TOOK_MS_FIELD_NUMBER: _ClassVar[int]
    outcome: str
    reason: str
    completed_turns: int
    effective_min_turns: int
    prompt_tokens: int
    forced: bool
    probed: bool
    probability: float
    verdict: str
    threshold: float
    decision_model: str
    probe_latency_ms: float
    start_timestamp: float
    end_timestamp: float
    summarized_turns: int
    retained_turns: int
    compaction_event_id: str
    took_ms: float
    def __init__(self, outcome: _Optional[str] = ..., reason: _Optional[str] = ..., completed_turns: _Optional[int] = ..., effective_min_turns: _Optional[int] = ..., prompt_tokens: _Optional[int] = ..., forced: _Optional[bool] = ..., probed: _Optional[bool] = ..., probability: _Optional[float] = ..., verdict: _Optional[str] = ..., threshold: _Optional[float] = ..., decision_model: _Optional[str] = ..., probe_latency_ms: _Optional[float] = ..., start_timestamp: _Optional[float] = ..., end_timestamp: _Optional[float] = ..., summarized_turns: _Optional[int] = ..., retained_turns: _Optional[int] = ..., compaction_event_id: _Optional[str] = ..., took_ms: _Optional[float] = ...) -> None: ...
