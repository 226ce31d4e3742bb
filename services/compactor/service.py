"""The compactor's work for one session: load it, run the post-turn lifecycle, append.

``Compactor.evaluate`` reads ``zocrates_config.json`` (so preferences apply at the next turn),
loads the session through the sessions service, runs :func:`evaluate_and_compact` and appends
the compaction event when there is one. It fails open: a probe, summarizer or append that
fails leaves the session untouched and reports why. The gateway calls it only when the
envelope gate opened on the figures the agent reported with ``done``; the gate is applied
again here to the session as loaded (a closed gate returns before any model or embedding is
touched and opens neither span below).

Telemetry: ``compaction_decision_probe`` (openinference kind EVALUATOR) around the probe and
``compact_session_history`` (kind LLM) around the summary, with the attributes listed under
"Spans" in ``docs/compaction.md``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import os
import pathlib
import time
from typing import Any

import numpy as np
from google.adk.errors import StaleSessionError
from google.adk.sessions.base_session_service import BaseSessionService
from opentelemetry import trace

from services.common.adk.turns import compaction_figures
from services.common.app_config import ConfigStore, ZocratesConfig
from services.common.errors import NotFound, ZocratesError
from services.common.local_models import window_for
from services.common.models import ROLE_MAX_TOKENS, resolve_model
from services.compactor import metrics
from services.compactor.decision import (
    RUBRIC_INSTRUCTIONS,
    Decision,
    DecisionModel,
    DecisionsApiClient,
)
from services.compactor.engine import CompactionOutcome, evaluate_and_compact
from services.compactor.local_decision import LocalDecisionModel
from services.compactor.summarizer import (
    CompactionPlan,
    ExtractiveSummarizer,
    ModelSummarizer,
    Summarizer,
    Summary,
    summarizer_prompt,
)
from services.compactor.turns import DecisionState

logger = logging.getLogger(__name__)

LOCAL_DECISION_MODEL = "local"
OFFLINE_SUMMARIZER = "offline"


def _tokens(text: str) -> int:
    return max(1, len(text) // 4)


class _TracedDecision:
    """Wraps a decision model in the ``compaction_decision_probe`` span. Its input is the
    decision state and the rubric (the one the Decisions API is asked; the local model
    approximates it)."""

    def __init__(self, inner: DecisionModel, name: str, tracer: trace.Tracer) -> None:
        self.tracer = tracer
        self.inner = inner
        self.name = name
        self.model = name
        self.completed_turns = 0
        self.prompt_tokens = 0

    async def decide(self, state: DecisionState, *, threshold: float) -> Decision:
        with self.tracer.start_as_current_span("compaction_decision_probe") as span:
            span.set_attribute("openinference.span.kind", "EVALUATOR")
            span.set_attribute(
                "input.value",
                json.dumps(
                    {
                        "earlier_discussion": state.earlier_discussion,
                        "latest_turn": state.latest_turn,
                        "rubric": RUBRIC_INSTRUCTIONS,
                    }
                ),
            )
            decision = await self.inner.decide(state, threshold=threshold)
            logger.debug("decision signals: %s", decision.signals)
            span.set_attribute(
                "output.value",
                json.dumps({"probability": decision.probability, "verdict": decision.verdict}),
            )
            span.set_attribute("compaction.decision.model", decision.model or self.name)
            span.set_attribute("compaction.decision.latency_ms", round(decision.latency_ms, 2))
            span.set_attribute("compaction.decision.threshold", threshold)
            span.set_attribute("compaction.decision.verdict", decision.verdict)
            span.set_attribute("compaction.decision.reason", decision.reason)
            span.set_attribute(
                "metadata",
                json.dumps(
                    {
                        "completed_turns": self.completed_turns,
                        "prompt_tokens": self.prompt_tokens,
                    }
                ),
            )
            return decision


class _TracedSummarizer:
    """Wraps a summarizer in the ``compact_session_history`` span."""

    def __init__(self, inner: Summarizer, model: str, tracer: trace.Tracer) -> None:
        self.inner = inner
        self.model = model
        self.tracer = tracer

    async def summarize(self, plan: CompactionPlan) -> Summary:
        with self.tracer.start_as_current_span("compact_session_history") as span:
            prompt = summarizer_prompt(plan)
            span.set_attribute("openinference.span.kind", "LLM")
            span.set_attribute("llm.model_name", self.model)
            span.set_attribute("input.value", prompt)
            span.set_attribute(
                "compaction.summarize.range", [plan.start_timestamp, plan.end_timestamp]
            )
            span.set_attribute("compaction.summarize.first_turn", plan.first_new_turn)
            span.set_attribute("compaction.summarize.last_turn", plan.last_turn)
            span.set_attribute("compaction.summarize.new_turns", len(plan.new_turns))
            span.set_attribute("compaction.summarize.retained_turns", len(plan.retained_turns))
            span.set_attribute("compaction.summarize.subsumes", plan.subsumed_compactions)
            summary = await self.inner.summarize(plan)
            # The model's reported counts; an estimate (4 characters a token) without them.
            span.set_attribute("llm.token_count.prompt", summary.prompt_tokens or _tokens(prompt))
            span.set_attribute("output.value", summary.text)
            span.set_attribute(
                "llm.token_count.completion", summary.completion_tokens or _tokens(summary.text)
            )
            span.set_attribute(
                "compaction.summarize.token_counts",
                "reported" if summary.prompt_tokens is not None else "estimated",
            )
            return summary


class _ModelOnFirstUse:
    """A model summarizer resolved when a summary is needed, not for every evaluation: a
    closed gate must not pay for importing LiteLLM (seconds) or fail on a bad model name."""

    def __init__(self, spec: str, api_base: str, context_window: int = 0) -> None:
        self.spec = spec
        self.api_base = api_base
        self.context_window = context_window  # model_context_window: 0 asks the server

    async def summarize(self, plan: CompactionPlan) -> Summary:
        max_tokens = ROLE_MAX_TOKENS["compaction_summarizer"]
        window = await window_for(self.spec, self.api_base, self.context_window)
        if window is not None:
            # A small local model's summary: at most an eighth of its window (512 tokens, about
            # 380 words, of a 4,096-token one); at 40-60 tokens/s each token is felt.
            max_tokens = max(128, min(max_tokens, window // 8))
        llm = await asyncio.to_thread(
            resolve_model,
            self.spec,
            api_base=self.api_base,
            api_key=os.environ.get("ZOCRATES_MODEL_API_KEY", ""),
            max_tokens=max_tokens,
        )
        room = None if window is None else max(window - max_tokens - 128, 256)
        return await ModelSummarizer(llm, max_prompt_tokens=room).summarize(plan)


class Compactor:
    def __init__(
        self,
        *,
        session_service: BaseSessionService,
        embed: Any,
        data_dir: pathlib.Path,
        decisions_url: str = "https://openrouter.ai",
        tracer: trace.Tracer | None = None,
    ) -> None:
        self.tracer = tracer or trace.get_tracer("zocrates.compactor")
        self.sessions = session_service
        self.embed = embed
        self.config_store = ConfigStore(data_dir)
        self.decisions_url = decisions_url
        self._remote: dict[str, DecisionsApiClient] = {}

    async def aclose(self) -> None:
        for client in self._remote.values():
            await client.aclose()

    def _decision_model(self, config: ZocratesConfig) -> tuple[DecisionModel, str]:
        name = config.adaptive_compaction_decision_model
        if name == LOCAL_DECISION_MODEL:

            async def embed(texts: list[str]) -> np.ndarray:
                return await self.embed(texts)  # type: ignore[no-any-return]

            return LocalDecisionModel(embed), name
        client = self._remote.get(name)
        if client is None:
            client = DecisionsApiClient(
                self.decisions_url, api_key=os.environ.get("OPENROUTER_API_KEY", ""), model=name
            )
            self._remote[name] = client
        return client, name

    def _summarizer(self, config: ZocratesConfig) -> tuple[Summarizer, str]:
        spec = config.compaction_summarizer_model
        if spec == OFFLINE_SUMMARIZER:
            return ExtractiveSummarizer(), "offline-extractive"
        return _ModelOnFirstUse(spec, config.model_api_base, config.model_context_window), spec

    async def evaluate(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        config: ZocratesConfig | None = None,
    ) -> dict[str, Any]:
        """Gate, probe and compact one session. ``config``: the settings the request carries
        (the gateway's read of the registered data directory's file); None: this service's own
        zocrates_config.json."""
        started = time.perf_counter()
        if config is None:
            config = await asyncio.to_thread(self.config_store.load)
        session = await self.sessions.get_session(
            app_name=app_name, user_id=user_id, session_id=session_id
        )
        if session is None:
            raise NotFound(f"No session {session_id!r}.", code="session_not_found")
        decision_model, decision_name = self._decision_model(config)
        traced_decision = _TracedDecision(decision_model, decision_name, self.tracer)
        figures = compaction_figures(session.events)
        traced_decision.completed_turns = figures.turns_since_compaction
        traced_decision.prompt_tokens = figures.prompt_tokens or 0
        summarizer, summarizer_name = self._summarizer(config)
        try:
            outcome = await evaluate_and_compact(
                session.events,
                config=config,
                decision_model=traced_decision,
                summarizer=_TracedSummarizer(summarizer, summarizer_name, self.tracer),
            )
        except ZocratesError as exc:  # the summarizer's model failed: fail open
            logger.warning("compaction of %s failed open: %s", session_id, exc)
            metrics.record_evaluation(
                outcome="failed_open",
                reason=exc.code,
                gate="none",
                seconds=time.perf_counter() - started,
            )
            return self._result("failed_open", exc.code, None, started)
        result_kind = _kind(outcome)
        reason = outcome.reason
        event_id = ""
        if outcome.event is not None:
            try:
                appended = await self.sessions.append_event(session, outcome.event)
                event_id = appended.id
            except StaleSessionError:
                # A request changed the session meanwhile: nothing is lost, the next turn's
                # evaluation sees the new history.
                result_kind, reason = "failed_open", "stale_session"
                fresh = await self.sessions.get_session(
                    app_name=app_name, user_id=user_id, session_id=session_id
                )
                known = {e.id for e in session.events}
                newer = [e for e in (fresh.events if fresh else []) if e.id not in known]
                logger.warning(
                    "compaction of %s lost a race (%d events when loaded, %d now; new: %s)",
                    session_id,
                    len(session.events) - 1,
                    len(fresh.events) if fresh else -1,
                    [(e.author, e.invocation_id) for e in newer][:5],
                )
        result = self._result(result_kind, reason, outcome, started)
        result["compaction_event_id"] = event_id
        metrics.record_evaluation(
            outcome=result_kind,
            reason=reason,
            gate=outcome.gate.outcome,
            seconds=time.perf_counter() - started,
        )
        level = logging.INFO if result_kind in ("compacted", "continue") else logging.DEBUG
        logger.log(
            level,
            "compaction of %s: %s (%s) turns=%s tokens=%s p=%s",
            session_id,
            result_kind,
            reason,
            result.get("completed_turns"),
            result.get("prompt_tokens"),
            result.get("probability"),
        )
        return result

    @staticmethod
    def _result(
        kind: str, reason: str, outcome: CompactionOutcome | None, started: float
    ) -> dict[str, Any]:
        result: dict[str, Any] = {
            "outcome": kind,
            "reason": reason,
            "took_ms": round((time.perf_counter() - started) * 1000, 3),
            "probability": math.nan,
            "probed": False,
        }
        if outcome is None:
            return result
        gate = outcome.gate
        result.update(
            completed_turns=gate.turns,
            effective_min_turns=gate.effective_min_turns,
            prompt_tokens=gate.prompt_tokens or 0,
            forced=gate.outcome == "force",
            retained_turns=gate.retention_turns,
        )
        if outcome.decision is not None:
            d = outcome.decision
            result.update(
                probed=True,
                probability=math.nan if d.probability is None else d.probability,
                verdict=d.verdict,
                threshold=d.threshold,
                decision_model=d.model,
                probe_latency_ms=round(d.latency_ms, 2),
            )
        if outcome.plan is not None:
            result.update(
                start_timestamp=outcome.plan.start_timestamp,
                end_timestamp=outcome.plan.end_timestamp,
                summarized_turns=outcome.plan.last_turn,
            )
        return result


def _kind(outcome: CompactionOutcome) -> str:
    if outcome.event is not None:
        return "compacted"
    if outcome.reason == "probe_continue":
        return "continue"
    return "skipped"
