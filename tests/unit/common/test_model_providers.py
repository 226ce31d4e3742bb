"""What a role's LiteLLM model is called with (services/common/models.py): a local server gets
a placeholder key (never the user's OPENAI_API_KEY), every call a max_tokens and a local one a
timeout."""

from __future__ import annotations

import pytest

from services.common.models import LOCAL_CALL_TIMEOUT, NO_KEY, ROLE_MAX_TOKENS, resolve_model


def _args(model: object) -> dict[str, object]:
    return dict(model._additional_args)  # type: ignore[attr-defined]


def test_a_local_server_gets_a_placeholder_key_a_limit_and_a_timeout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-the-users-own-openai-key")
    local = resolve_model(
        "openai/smollm2",
        api_base="http://127.0.0.1:8080/v1",
        max_tokens=ROLE_MAX_TOKENS["coordinator"],
    )
    assert _args(local) == {
        "api_base": "http://127.0.0.1:8080/v1",
        "api_key": NO_KEY,
        "max_tokens": 1024,
        "timeout": LOCAL_CALL_TIMEOUT,
    }
    keyed = resolve_model("openai/x", api_base="http://127.0.0.1:8080/v1", api_key="sk-server")
    assert _args(keyed)["api_key"] == "sk-server"
    ollama = resolve_model("ollama_chat/llama3.2", api_base="http://127.0.0.1:11434")
    assert "api_key" not in _args(ollama)  # Ollama's own API takes none
    hosted = resolve_model("openrouter/anthropic/claude-sonnet-4", max_tokens=2048)
    assert _args(hosted) == {"max_tokens": 2048}  # its key from the environment, no timeout
