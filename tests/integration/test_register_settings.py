"""``/register`` moves every service: after the plugin registers a Zotero data directory other
than the one the stack started on, the settings saved there (the preferences pane's ``PUT
/config``) reach research and compaction, not only the gateway and sessions.

Every service starts on directory A (as ``make run`` does); the plugin registers B and points
the coordinator and the compaction summarizer at ``openai/...`` models on a local server that
speaks OpenAI's wire format (the permitted stand-in at the model boundary). The server's record
of which model each request named proves which file each service read: A's settings are the
offline defaults, which never call it.
"""

from __future__ import annotations

import asyncio
import json
import os
import pathlib
import time
from typing import Any

os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # before anything imports litellm

import httpx
import pytest

from services.agent.research.runtime import API_KEY_ENV
from services.reranker.models import CrossEncoder, Embedder
from tests.support import zotero_fixture as zf
from tests.support.openai_server import CAPABLE_MODEL, message_text, serve_openai
from tests.support.sse import post_stream
from tests.support.stack import (
    running_agent,
    running_compactor,
    running_gateway,
    running_library,
    running_reranker,
    running_sessions,
)

pytestmark = [
    pytest.mark.timeout(300),
    pytest.mark.filterwarnings("ignore:Item .* is using the `ReadOnly` qualifier:UserWarning"),
    pytest.mark.filterwarnings("ignore:Accessing the 'model_:DeprecationWarning"),
]

ANSWER = "Answered by the model the registered directory names."
SUMMARY = "The user asked what came first; the model answered."


def _reply(body: dict[str, Any]) -> str:
    if body.get("model") == "summarizer-b":
        return SUMMARY
    return ANSWER


async def test_settings_saved_after_register_reach_research_and_compaction(
    tmp_path: pathlib.Path,
    monkeypatch: pytest.MonkeyPatch,
    cross_encoder: CrossEncoder,
    embedder: Embedder,
) -> None:
    monkeypatch.setenv(API_KEY_ENV, "sk-zocrates-test")
    first = zf.build_zotero_library(tmp_path / "a" / "Zotero", files=("lme4__lmer.pdf",))
    second = zf.build_zotero_library(tmp_path / "b" / "Zotero", files=("lme4__lmer.pdf",))
    with serve_openai(_reply) as server:
        async with (
            running_reranker(
                load_reranker=lambda: cross_encoder, load_embedder=lambda: embedder
            ) as reranker,
            running_sessions(first) as sessions,
            running_library(first, reranker_addr=reranker.runtime.address) as library,
            running_agent(
                first,
                sessions_addr=sessions.runtime.address,
                reranker_addr=reranker.runtime.address,
                library_addr=library.runtime.address,
            ) as agent,
            running_compactor(
                first,
                sessions_addr=sessions.runtime.address,
                reranker_addr=reranker.runtime.address,
            ) as compactor,
            running_gateway(
                first,
                sessions.runtime.address,
                agent_addr=agent.runtime.address,
                library_addr=library.runtime.address,
                compactor_addr=compactor.runtime.address,
            ) as gateway,
        ):
            await gateway.app.state.gateway.startup_done.wait()
            token = (first / "zocrates-data" / "gateway.token").read_text().strip()
            async with httpx.AsyncClient(
                base_url=gateway.url, headers={"Authorization": f"Bearer {token}"}, timeout=120
            ) as http:
                registered = await http.post("/register", json={"zotero_data_dir": str(second)})
                assert registered.status_code == 200, registered.text
                assert registered.json()["changed"] is True
                saved = await http.put(
                    "/config",
                    json={
                        "coordinator_model": "openai/coordinator-b",
                        "compaction_summarizer_model": "openai/summarizer-b",
                        "model_api_base": server.api_base,
                        **CAPABLE_MODEL,
                        # Compact after the first turn, whatever its size.
                        "adaptive_compaction_retention_turns": 0,
                        "adaptive_compaction_min_turns": 1,
                        "adaptive_compaction_token_floor": 0,
                        "adaptive_compaction_token_ceiling": 1,
                    },
                )
                assert saved.status_code == 200, saved.text
                created = await http.post("/sessions", json={"title": "registered"})
                assert created.status_code == 201, created.text
                session_id = created.json()["session"]["id"]

                status, events, error = await post_stream(
                    http, "/chat", {"session_id": session_id, "prompt": "What came first?"}
                )
                assert status == 200, error
                done = events[-1]
                assert done[0] == "done" and done[1]["status"] == "completed", events[-3:]
                assert done[1]["answer"].strip() == ANSWER

                # Compaction runs after the turn, off its path: wait for the summarizer's call.
                deadline = time.monotonic() + 60
                while not any(e.body.get("model") == "summarizer-b" for e in server.exchanges):
                    assert time.monotonic() < deadline, [
                        e.body.get("model") for e in server.exchanges
                    ]
                    await asyncio.sleep(0.1)
                summarized = next(e for e in server.exchanges if e.body["model"] == "summarizer-b")
                prompt = " ".join(message_text(m) for m in summarized.body["messages"])
                assert "What came first?" in prompt

    models = [e.body.get("model") for e in server.exchanges]
    assert "coordinator-b" in models and not server.errors, (models, server.errors)
    # The directory the stack started on keeps its own settings: nothing was written there.
    started_on = json.loads((first / "zocrates-data" / "zocrates_config.json").read_text())
    assert started_on["coordinator_model"] == "offline"
    assert started_on["compaction_summarizer_model"] == "offline"
