"""Bodies of the session routes (and of rewind and registration, which return a session and a
maintenance report). The session is what the sessions service formats for the plugin."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from services.gateway.schemas.base import Success


class SessionManifest(BaseModel):
    id: str
    title: str
    created_at: float = Field(description="Unix time.")
    updated_at: float = Field(description="Unix time of the last event.")
    event_count: int


class SessionList(Success):
    sessions: list[SessionManifest] = Field(description="Oldest first.")


class ToolCall(BaseModel):
    name: str
    args: dict[str, Any]


class ToolResult(BaseModel):
    name: str
    citations: list[dict[str, Any]] = Field(
        default_factory=list,
        description=(
            "The research tool's answer citations (each with its quote and whether it was "
            "verified on its page); absent for other tools."
        ),
    )


class TurnUsage(BaseModel):
    """What a turn's model calls cost, summed (the figure its `done` event showed)."""

    model: str = Field(description="The models as configured, joined by ', ' when several.")
    input_tokens: int
    output_tokens: int
    cost_usd: float | None = Field(description="Estimate at list prices; null if unpriced.")


class SessionMessage(BaseModel):
    id: str = Field(description="The ADK event's id.")
    role: Literal["user", "assistant"]
    author: str
    text: str
    thought: bool
    timestamp: float
    invocation_id: str = Field(description="The turn; rewind takes it.")
    intermediate: bool = Field(description="A step of a search subagent, not the answer.")
    context: dict[str, Any] = Field(
        default_factory=dict,
        description=(
            "User messages only: the turn's scope (`active_mode`, `active_context_items`, "
            "`active_collection`, `snippets`), to restore on rewind or edit. An image snippet "
            "(`kind` `image`) has `image`: `mime_type`, `size`, `sha256`, `part`; its bytes "
            "come from `GET /sessions/{id}/images/{sha256}`."
        ),
    )
    tool_calls: list[ToolCall] = Field(default_factory=list, description="Absent when none.")
    tool_results: list[ToolResult] = Field(default_factory=list, description="Absent when none.")
    usage: TurnUsage | None = Field(
        default=None,
        description="On each turn's last answer message; absent for the offline model.",
    )


class PendingCheckpoint(BaseModel):
    """A deep-research checkpoint that waits for `POST /chat/resume`."""

    interrupt_id: str
    invocation_id: str
    message: str | None
    payload: Any = Field(description="The checkpoint card: what was covered, gaps, the offer.")


class FormattedSession(BaseModel):
    """A session as the plugin shows it: rewinds applied, compactions hidden."""

    id: str
    title: str
    created_at: float
    updated_at: float
    messages: list[SessionMessage]
    pending_hitl: PendingCheckpoint | None


class SessionBody(Success):
    session: FormattedSession


class ImageData(BaseModel):
    mime_type: str = Field(description="`image/png`, `image/jpeg` or `image/webp`.")
    data: str = Field(description="The image file, base64.")


class PromptImageBody(Success):
    """An image a prompt of the session carried, as `POST /chat` took it."""

    image: ImageData


class StorageStats(Success):
    backend: str = Field(description="`sqlite` or `postgresql`.")
    location: str = Field(description="File path, or the redacted database URL.")
    size_bytes: int
    page_count: int
    page_size: int
    freelist_count: int
    freelist_ratio: float = Field(description="Free pages over pages.")
    session_count: int
    event_count: int


class MaintenanceReport(BaseModel):
    deleted_empty: int
    deleted_expired: int
    deleted_over_cap: int
    deleted: int = Field(description="The three above, summed.")
    deleted_ids: list[str]
    skipped_active: int = Field(description="Sessions spared because a chat runs on them.")
    vacuumed: bool
    vacuum_skipped_reason: str | None = Field(
        description=(
            "`chat_in_progress`, `below_threshold`, `insufficient_disk`, `database_busy`, "
            "`not_supported`; null when VACUUM ran."
        )
    )
    size_before: int
    size_after: int
    duration_ms: float


class MaintenanceBody(MaintenanceReport, Success):
    pass
