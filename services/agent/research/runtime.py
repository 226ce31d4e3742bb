"""The research runtime of the agent service: builds the coordinator and its Runner from
``zocrates_config.json`` (models per role, the synthesizer's thinking, search harness) and
rebuilds them when those change, so a preferences edit takes effect at the next turn without a
restart. The settings come with each request (the gateway reads the file of the Zotero data
directory registered last); a request without them reads this service's own data directory's.
"""

from __future__ import annotations

import asyncio
import logging
import os
import pathlib
from typing import Any

from google.adk.runners import Runner
from google.adk.sessions.base_session_service import BaseSessionService

from services.agent.research.agents import build_coordinator
from services.agent.research.capabilities import plan_models
from services.agent.research.chat import ChatService
from services.agent.research.citations import library_page_reader
from services.agent.research.harness import Harness
from services.agent.research.library_tools import Tool
from services.agent.research.offline_answer import scorer_from_reranker
from services.agent.research.offline_llm import OfflineLlm
from services.agent.research.run_locks import KeyedLocks
from services.agent.research.usage import usage_recorder
from services.common.adk import compat as adk_compat
from services.common.app_config import ConfigStore, ZocratesConfig
from services.common.models import resolve_model
from services.common.reranking import Reranker
from services.common.thinking import thinking_config

logger = logging.getLogger(__name__)

API_KEY_ENV = "ZOCRATES_MODEL_API_KEY"


class ResearchRuntime:
    def __init__(
        self,
        *,
        app_name: str,
        session_service: BaseSessionService,
        library_tools: list[Tool],
        reranker: Reranker | None,
        online_tool: Tool | None,
        data_dir: pathlib.Path,
        streaming: bool = True,
    ) -> None:
        adk_compat.apply()
        self.app_name = app_name
        self.session_service = session_service
        self.library_tools = library_tools
        self.reranker = reranker
        self.online_tool = online_tool
        self.config_store = ConfigStore(data_dir)
        self.streaming = streaming
        self._key: tuple[Any, ...] | None = None
        self._chat: ChatService | None = None
        self._config = ZocratesConfig()
        self._locks = KeyedLocks()  # by session; outlives ChatService rebuilds (a model change)

    def harness(self) -> Harness:
        return Harness.from_config(self._config)

    async def chat_service(self, config: ZocratesConfig | None = None) -> ChatService:
        """The chat service for ``config`` (the settings the request carries, as the gateway
        read them from the registered Zotero data directory; None: this service's own
        zocrates_config.json), rebuilt when models or the synthesizer's thinking change."""
        if config is None:
            config = await asyncio.to_thread(self.config_store.load)
        self._config = config
        c = self._config
        # From LiteLLM's model map (imported the first time: seconds), before the rebuild below,
        # which must not wait: two turns would both rebuild.
        thinking = await asyncio.to_thread(
            thinking_config, c.synthesizer_model, c.synthesizer_thinking
        )
        key = (
            c.coordinator_model,
            c.subagent_model,
            c.synthesizer_model,
            c.synthesizer_thinking,
            c.model_api_base,
            c.model_tool_calling,
            c.model_context_window,
            c.online_search_enabled,
        )
        if self._chat is None or key != self._key:
            api_key = os.environ.get(API_KEY_ENV, "")
            specs = {
                "coordinator": c.coordinator_model,
                "search_subagent": c.subagent_model,
                "synthesizer": c.synthesizer_model,
            }
            plan = await plan_models(specs, c, api_key)
            # A role its model cannot run (it calls no tools) runs on the offline policy.
            effective = {
                role: spec if plan.runs[role] else "offline" for role, spec in specs.items()
            }

            read_pages = library_page_reader(self.library_tools)

            def model_for(role: str) -> Any:
                return resolve_model(
                    effective[role],
                    api_base=c.model_api_base,
                    api_key=api_key,
                    offline_factory=lambda: OfflineLlm(
                        role=role, reranker=self.reranker, read_pages=read_pages
                    ),
                    max_tokens=plan.max_tokens.get(role),
                )

            coordinator = build_coordinator(
                models=model_for,
                library_tools=self.library_tools,
                online_tool=self.online_tool if c.online_search_enabled else None,
                reranker=self.reranker,
                harness=self.harness,
                usage=lambda role: usage_recorder(effective[role], role=role),
                synthesizer_thinking=thinking,
                writer=plan.writer,
                scorer=scorer_from_reranker(self.reranker),
            )
            runner = Runner(
                app_name=self.app_name, agent=coordinator, session_service=self.session_service
            )
            self._chat = ChatService(
                runner=runner,
                session_service=self.session_service,
                app_name=self.app_name,
                streaming=self.streaming,
                locks=self._locks,
                model_api_base=c.model_api_base,
            )
            self._key = key if plan.settled else None
            logger.info(
                "research models: coordinator=%s subagent=%s synthesizer=%s (thinking %s%s)%s",
                *effective.values(),
                c.synthesizer_thinking,
                "" if thinking or c.synthesizer_thinking == "off" else ": not a thinking model",
                f"; writer window {plan.writer.context_window} tokens, answer at most "
                f"{plan.writer.max_tokens}"
                if plan.writer and plan.writer.context_window
                else "",
            )
        return self._chat

    async def current_chat_service(self) -> ChatService:
        """The chat service as the last turn's settings built it (for a rewind, which needs no
        settings of its own); built from this service's file when no turn ran yet."""
        return self._chat or await self.chat_service()
