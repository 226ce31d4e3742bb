"""Settings of the gateway (``ZOCRATES_`` environment variables)."""

from __future__ import annotations

from pydantic import Field, SecretStr, model_validator

from services.common import ports
from services.common.settings import CommonSettings

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1", "[::1]")


class GatewaySettings(CommonSettings):
    gateway_admin_port: int | None = Field(
        default=None, description="Admin HTTP port of the gateway. Default: base port + 10."
    )
    sessions_addr: str = Field(
        description=(
            "host:port of the sessions service. "
            "`zocrates run` sets it to 127.0.0.1:<base port + 1>."
        ),
    )
    agent_addr: str = Field(
        description=(
            "host:port of the agent service (research turns). "
            "`zocrates run` sets it to 127.0.0.1:<base port + 2>."
        ),
    )
    library_addr: str = Field(
        description=(
            "host:port of the library service (the /library routes: sync, status, search). "
            "`zocrates run` sets it to 127.0.0.1:<base port + 5>."
        ),
    )
    compactor_addr: str | None = Field(
        default=None,
        description=(
            "host:port of the compactor service, called after each completed turn. "
            "`zocrates run` sets it; unset: no post-turn compaction."
        ),
    )
    compaction_timeout_seconds: float = Field(
        default=60.0,
        gt=0,
        description="Longest a post-turn compaction may hold the session (then it is abandoned).",
    )
    compaction_wait_seconds: float = Field(
        default=60.0,
        ge=0,
        description=(
            "How long a new chat on a session waits for that session's post-turn compaction "
            "before answering 409 session_busy."
        ),
    )
    maintenance_wait_seconds: float = Field(
        default=60.0,
        ge=0,
        description=(
            "How long a chat, resume, rewind or delete waits for session maintenance that is "
            "running (started by any gateway replica) before answering 503 maintenance_running."
        ),
    )
    redis_url: str | None = Field(
        default=None,
        description=(
            "Redis URL for the in-flight chat locks (needed with more than one gateway replica). "
            "Unset: an in-process lock, valid for a single gateway."
        ),
    )
    redis_key_prefix: str = Field(
        default="zocrates", description="Prefix of every Redis key the gateway writes."
    )
    chat_lock_ttl_seconds: float = Field(
        default=30.0,
        gt=1.0,
        description="Time-to-live of a chat lock; renewed every third of it while held.",
    )
    allowed_hosts: list[str] = Field(
        default_factory=lambda: list(LOOPBACK_HOSTS),
        description=(
            "Host header values the gateway answers (DNS-rebinding defence). JSON list, e.g. "
            '["127.0.0.1","localhost","zocrates.lab.example"].'
        ),
    )
    allowed_origins: list[str] = Field(
        default_factory=list,
        description=(
            "Web origins whose pages may call the gateway (JSON list, e.g. "
            '["https://lab.example"]). A request with another web Origin is refused (403 '
            "origin_not_allowed) even with the token; no Origin, Zotero's own (chrome://, "
            "moz-extension://, resource://, zotero://) and null always pass."
        ),
    )
    gateway_token: SecretStr | None = Field(
        default=None,
        description=(
            "Bearer token clients must send. Unset: generated on first start into "
            "<data dir>/gateway.token (mode 0600), which the Zotero plugin reads."
        ),
    )
    rpc_timeout_seconds: float = Field(
        default=10.0, gt=0, description="Deadline of the gateway's calls to the services."
    )
    app_name: str = Field(default="zocrates", description="ADK app name of every session.")
    user_id: str = Field(
        default="local", description="ADK user id of the sessions this gateway serves."
    )

    @model_validator(mode="after")
    def _derive_ports(self) -> GatewaySettings:
        if self.gateway_admin_port is None:
            self.gateway_admin_port = ports.admin_port(self.port, "gateway")
        return self
