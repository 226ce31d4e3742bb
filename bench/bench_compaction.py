"""Post-turn compaction: the cost of the fast exit, of the local probe, and what compaction
saves over a long conversation.

1. Gate fast exit, in-process: ``evaluate_gate`` alone and ``evaluate_and_compact`` on a
   closed-gate session (no model, no embedding, no span).
2. Gate fast exit, round trip: gateway -> compactor -> sessions over gRPC
   (``CompactorClient.evaluate`` on a short session), next to a bare ``GetSession`` of the same
   session: the compactor's own share is the difference. That was every turn's cost until the
   gateway applied the gate itself; now: the gateway's check (``_compaction_due``: the config,
   stat'ed and cached, and ``evaluate_gate`` on the figures of ``done``), and the agent's
   ``compaction_figures`` over the events of a 30-turn session (in memory, before ``done``).
3. The local decision model's probe: one ``decide`` with bge-small through the reranker
   service (p50/p95).
4. A 30-turn scripted research conversation (three topics of ten turns): the coordinator's
   prompt size per turn without compaction and with it (local decision model, extractive
   summary), measured with ADK's own content building, as tokens (~4 characters each).

    python bench/bench_compaction.py [--turns 30] [--runs 200] [--check]

``--check``: the closed gate stays the sub-millisecond fast path (docs/benchmarks.md): p50 of
``evaluate_gate`` and of the gateway's ``_compaction_due`` at most 1 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import pathlib
import statistics
import sys
import tempfile
import time
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from goals import Goal, add_check_flag, report

from services.common.adk.compat import get_contents
from services.common.adk.turns import compaction_figures, extract_turns
from services.common.app_config import ConfigStore, ZocratesConfig
from services.common.compaction_gate import evaluate_gate
from services.compactor.client import CompactorClient
from services.compactor.engine import evaluate_and_compact
from services.compactor.local_decision import LocalDecisionModel
from services.compactor.summarizer import ExtractiveSummarizer
from services.compactor.turns import decision_state
from services.gateway.config import GatewaySettings
from services.gateway.locks.in_memory_chat_lock import InMemoryChatLock
from services.gateway.routers.chat import _compaction_due
from services.gateway.state import GatewayState
from services.reranker.client import RerankerClient
from services.sessions.remote_session_service import RemoteSessionService
from tests.support.stack import running_compactor, running_reranker, running_sessions
from tests.unit.compactor.session_events import SessionEvents

GATE = Goal("evaluate_gate p50, closed gate", 1000.0, " us")
GATEWAY_GATE = Goal("the gateway's _compaction_due p50, closed gate", 1000.0, " us")

TOPICS = (
    ("lme4", "GQ53K66Z", "random effects", "mixed model"),
    ("sandwich", "LRRIKN4N", "robust covariance", "heteroskedasticity"),
    ("glmnet", "VBXB558U", "lasso penalty", "Cox model"),
)


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def conversation(turns: int) -> list[tuple[str, str, str]]:
    """(question, findings summary, full answer) for ``turns`` research turns, topic by topic."""
    out = []
    per_topic = max(1, turns // len(TOPICS))
    for i in range(turns):
        name, key, a, b = TOPICS[min(i // per_topic, len(TOPICS) - 1)]
        question = f"In {name}, how does the {a} relate to the {b} (part {i + 1})?"
        summary = (
            f"{name} paper ({key}) p. {10 + i}: the {a} is estimated together with the {b}; "
            f"section {i % 5 + 2} gives the details."
        )
        answer = (
            f"The {a} in {name} ... [1, p. {10 + i}] " * 40
            + f"\n\n# Cited Sources\n[1] {name} ({key}), p. {10 + i}."
        )
        out.append((question, summary, answer))
    return out


def coordinator_tokens(events: list[Any]) -> int:
    contents = get_contents(None, events, "coordinator")
    chars = 0
    for content in contents:
        for part in content.parts or []:
            if part.text:
                chars += len(part.text)
            elif part.function_call is not None:
                chars += len(str(part.function_call.args))
            elif part.function_response is not None:
                chars += len(str(part.function_response.response))
    return chars // 4


async def prompt_sizes(turns: int, embed: Any) -> list[tuple[int, int, int, str]]:
    """(turn, tokens without compaction, tokens with it, what compaction did)."""
    config = ZocratesConfig(adaptive_compaction_token_floor=0)
    plain = SessionEvents()
    compacted = SessionEvents()
    model = LocalDecisionModel(embed)
    summarizer = ExtractiveSummarizer()
    rows = []
    for number, (question, summary, answer) in enumerate(conversation(turns), start=1):
        for s in (plain, compacted):
            s.research_turn(question, summary, answer=answer, prompt_tokens=None)
        without = coordinator_tokens(plain.events)
        with_before = coordinator_tokens(compacted.events)
        # Record what the coordinator would be charged, then compact after the turn.
        compacted.events[-1].usage_metadata = None
        outcome = await evaluate_and_compact(
            _with_tokens(compacted.events, with_before),
            config=config,
            decision_model=model,
            summarizer=summarizer,
        )
        if outcome.event is not None:
            outcome.event.timestamp = compacted.clock + 0.5
            compacted.events.append(outcome.event)
        rows.append((number, without, with_before, outcome.reason))
    return rows


def _with_tokens(events: list[Any], tokens: int) -> list[Any]:
    from google.genai import types

    for event in reversed(events):
        if event.isolation_scope is None and event.author == "coordinator":
            event.usage_metadata = types.GenerateContentResponseUsageMetadata(
                prompt_token_count=tokens
            )
            break
    return events


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=30)
    parser.add_argument("--runs", type=int, default=200)
    add_check_flag(parser)
    args = parser.parse_args()

    # 1. In-process fast exit.
    config = ZocratesConfig()
    s = SessionEvents()
    for question, summary, answer in conversation(2):
        s.research_turn(question, summary, answer=answer, prompt_tokens=1500)
    gate_times, engine_times = [], []
    for _ in range(args.runs):
        t = time.perf_counter()
        evaluate_gate(2, 1500, config)
        gate_times.append((time.perf_counter() - t) * 1e6)
        t = time.perf_counter()
        outcome = await evaluate_and_compact(
            s.events,
            config=config,
            decision_model=None,
            summarizer=None,  # type: ignore[arg-type]
        )
        engine_times.append((time.perf_counter() - t) * 1e6)
        assert outcome.reason == "few_turns"
    print("1. gate fast exit, in-process (closed gate, 2 research turns)")
    print(f"   evaluate_gate        p50 {statistics.median(gate_times):8.2f} us")
    print(
        f"   evaluate_and_compact p50 {statistics.median(engine_times):8.2f} us"
        f"   p95 {pct(engine_times, 0.95):8.2f} us"
    )

    with tempfile.TemporaryDirectory() as tmp:
        zotero = pathlib.Path(tmp) / "zotero"
        async with contextlib.AsyncExitStack() as stack:
            reranker = await stack.enter_async_context(running_reranker())
            sessions = await stack.enter_async_context(running_sessions(zotero))
            compactor = await stack.enter_async_context(
                running_compactor(
                    zotero,
                    sessions_addr=sessions.runtime.address,
                    reranker_addr=reranker.runtime.address,
                )
            )
            ConfigStore(zotero / "zocrates-data").load()
            remote = RemoteSessionService(sessions.runtime.address)
            client = CompactorClient(compactor.runtime.address)
            embedder = RerankerClient(reranker.runtime.address)
            session = await remote.create_session(app_name="zocrates", user_id="local")
            for event in s.events:
                await remote.append_event(session, event)
            rtt, get = [], []
            for _ in range(args.runs):
                t = time.perf_counter()
                await remote.get_session(
                    app_name="zocrates", user_id="local", session_id=session.id
                )
                get.append((time.perf_counter() - t) * 1000)
                t = time.perf_counter()
                result = await client.evaluate(
                    app_name="zocrates", user_id="local", session_id=session.id
                )
                rtt.append((time.perf_counter() - t) * 1000)
                assert result["outcome"] == "skipped"
            print("2. gate fast exit, round trip (the gateway's call after a turn)")
            print(
                f"   EvaluateAndCompact p50 {statistics.median(rtt):7.2f} ms"
                f"   p95 {pct(rtt, 0.95):7.2f} ms"
            )
            print(
                f"   GetSession alone   p50 {statistics.median(get):7.2f} ms"
                f"   (compactor's own share ~{statistics.median(rtt) - statistics.median(get):.2f} ms)"
            )
            state = GatewayState(
                settings=GatewaySettings.model_construct(),
                data_dir=zotero / "zocrates-data",
                token="",
                sessions=None,  # type: ignore[arg-type]  # not used by the gate
                agent=None,  # type: ignore[arg-type]
                chat_lock=InMemoryChatLock(ttl_seconds=60),
                config_store=ConfigStore(zotero / "zocrates-data"),
                compactor=client,
            )
            figures = {"turns_since_compaction": 2, "prompt_tokens": 1500}
            due = []
            for _ in range(args.runs):
                t = time.perf_counter()
                opens = await _compaction_due(state, session.id, figures)
                due.append((time.perf_counter() - t) * 1e6)
                assert not opens
            long = SessionEvents()
            for question, summary, answer in conversation(30):
                long.research_turn(question, summary, answer=answer, prompt_tokens=1500)
            figure_times = []
            for _ in range(max(20, args.runs // 10)):
                t = time.perf_counter()
                compaction_figures(long.events)
                figure_times.append((time.perf_counter() - t) * 1e6)
            print("   now: the gateway's own gate, no RPC and no span")
            print(
                f"   _compaction_due    p50 {statistics.median(due):7.1f} us"
                f"   p95 {pct(due, 0.95):7.1f} us"
                f"   ({statistics.median(rtt) * 1000 / statistics.median(due):.0f}x faster)"
            )
            print(
                f"   agent's compaction_figures, 30-turn session ({len(long.events)} events)"
                f"   p50 {statistics.median(figure_times):7.1f} us"
            )

            # 3. The local probe.
            model = LocalDecisionModel(embedder.embed)
            state = decision_state(extract_turns(s.events))
            probe = []
            for _ in range(max(20, args.runs // 10)):
                t = time.perf_counter()
                await model.decide(state, threshold=0.75)
                probe.append((time.perf_counter() - t) * 1000)
            print("3. local decision model (bge-small via the reranker service)")
            print(
                f"   decide p50 {statistics.median(probe):7.2f} ms   p95 {pct(probe, 0.95):7.2f} ms"
            )

            # 4. Prompt size over a long conversation.
            rows = await prompt_sizes(args.turns, embedder.embed)
            print(
                f"4. coordinator prompt per turn, {args.turns} research turns, 3 topics "
                "(tokens, ~4 chars each)"
            )
            print("   turn  without  with  compaction after the turn")
            for number, without, with_, reason in rows:
                print(f"   {number:4d}  {without:7d}  {with_:5d}  {reason}")
            total_without = sum(r[1] for r in rows)
            total_with = sum(r[2] for r in rows)
            print(
                f"   total  {total_without:7d}  {total_with:5d}"
                f"  ({total_with / total_without:.2f}x of the tokens sent)"
            )
            await client.close()
            await embedder.close()
            await remote.close()
    return report(
        [(GATE, statistics.median(gate_times)), (GATEWAY_GATE, statistics.median(due))],
        check=args.check,
    )


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
