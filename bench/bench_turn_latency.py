"""How long an offline turn takes, and where the time goes: idle, while the library's
embedding phase runs beside it, and (``--large``) while a large library's keyword phase runs.

The whole stack (`zocrates run` from each ``--code`` checkout, no key: the built-in offline
model) on the 38 papers, indexed once; bench_answers' questions (single-paper, multi-paper,
out-of-library) each in its own chat session, timed from the question to the answer (a turn
that pauses at a deep-research checkpoint is resumed with "synthesize now", and both requests
count). Then a stack is started again (the reranker's score cache empty) on a fresh index of
the same papers: once they are searchable by keyword, the same questions are asked while the
embedding phase gives every passage its vector (a full re-index with unchanged text keeps the
vectors, so it has no embedding phase to measure); a turn counts as "during the embedding
phase" only if chunks were still pending when its answer came. Turns then search by keyword
and by the vectors embedded so far.

The services send their spans to a collector in this process (``ZOCRATES_OTLP_ENDPOINT``), so
each turn's time is split by stage: the search tools, the cross-encoder's rerank of passages,
the synthesizer (which scores the candidate sentences), and the gRPC calls to the reranker.

With ``--large DIR`` (``../shared/data/large-library/fetch.sh DIR``: 3,250 PDFs, 50,000
pages), a third stack starts on a copy of the idle stack's index (the 38 papers, searchable and
embedded) and a Zotero library of the 38 papers with the large library's PDFs added
(``bench_large_library.build_library``): `zocrates index` then reads the 3,250 new PDFs (the 38
are unchanged), and the same questions are asked while that keyword phase runs. The stack's
resident memory (``bench_stack_memory.by_service``) is sampled meanwhile: its peak, and once the
keyword phase is over.

Each checkout is run one after the other on the same index copy, so a table compares them side
by side (docs/benchmarks.md, "Offline turn latency"); bench_answers.py scores the answers:

    .venv/bin/python bench/bench_turn_latency.py --workdir /tmp/latency \\
        --code /tmp/before,. [--every 2] [--no-sync] [--large DIR] [--check]

``--check``: p50 at most 2 s idle, and at most 1.5x idle during the embedding phase (the last
checkout); with ``--large``, at most 1.5x idle during the large keyword phase, and the stack's
memory after it at most 100 MB above the first checkout's.
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import json
import math
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import threading
import time
from typing import Any

import grpc
import httpx

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_answers import ZOCRATES, Stack, ask, read_jsonl
from bench_large_library import build_library
from bench_stack_memory import by_service
from goals import Goal, add_check_flag
from goals import report as check_goals
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2 as otlp
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2_grpc as otlp_grpc

from tests.support import zotero_fixture
from tests.support.ports import free_port

GOALS = (
    Goal("offline turn p50, idle", 2.0, " s"),
    Goal("offline turn p50 during the embedding phase / idle", 1.5, "x"),
)
LARGE_GOALS = (
    Goal("offline turn p50 during the large library's keyword phase / idle", 1.5, "x"),
    Goal("stack RSS after the large keyword phase, above the first checkout", 100.0, " MB"),
)
# Asked first on each stack (not among the measured questions: their scores would be kept).
WARM_UP = [
    {"id": "w1", "kind": "warm-up", "question": "What is a random intercept in a mixed model?"},
    {"id": "w2", "kind": "warm-up", "question": "How are standard errors made robust?"},
]
# What each stage's spans are called (ADK's, the agent's, the gRPC client's).
STAGES = {
    "search tools": ("execute_tool search_corpus", "execute_tool read_section",
                     "execute_tool search_library_items"),
    "rerank passages": ("rerank_evidence",),
    "synthesizer": ("invoke_agent synthesizer",),
    "reranker RPCs": ("/zocrates.reranker.v1.RerankerService/Rerank",),
    "embed RPCs": ("/zocrates.reranker.v1.RerankerService/Embed",),
}  # fmt: skip


class Spans(otlp_grpc.TraceServiceServicer):
    """An OTLP/gRPC collector that keeps (name, start, end) of every span it is sent."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.spans: list[tuple[str, float, float]] = []

    def Export(self, request: Any, context: Any) -> Any:
        with self.lock:
            for resource in request.resource_spans:
                for scope in resource.scope_spans:
                    for s in scope.spans:
                        self.spans.append(
                            (s.name, s.start_time_unix_nano / 1e9, s.end_time_unix_nano / 1e9)
                        )
        return otlp.ExportTraceServiceResponse()

    def between(self, start: float, end: float) -> list[tuple[str, float, float]]:
        with self.lock:
            return [s for s in self.spans if s[1] >= start - 0.05 and s[2] <= end + 0.05]


def collector() -> tuple[grpc.Server, Spans, str]:
    spans = Spans()
    server = grpc.server(concurrent.futures.ThreadPoolExecutor(max_workers=4))
    otlp_grpc.add_TraceServiceServicer_to_server(spans, server)
    port = free_port()
    server.add_insecure_port(f"127.0.0.1:{port}")
    server.start()
    return server, spans, f"http://127.0.0.1:{port}"


def stage_seconds(spans: list[tuple[str, float, float]]) -> dict[str, float]:
    """Seconds per stage in one turn (spans of a stage that overlap are counted once)."""
    out: dict[str, float] = {}
    for stage, names in STAGES.items():
        windows = sorted((s, e) for n, s, e in spans if n in names)
        busy, until = 0.0, float("-inf")
        for start, end in windows:
            if end > until:
                busy += end - max(start, until)
                until = end
        out[stage] = busy
    return out


def percentile(values: list[float], share: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def ask_timed(
    api: httpx.Client, spans: Spans, questions: list[dict[str, Any]], label: str,
    still: threading.Event | None = None, show: bool = False,
) -> list[dict[str, Any]]:  # fmt: skip
    """Each question in a session of its own: seconds, stages, and (with ``still``) whether
    the embedding phase was still running when the answer came."""
    rows = []
    for q in questions:
        if still is not None and not still.is_set():
            break  # the embedding phase is over: the rest would be idle turns
        sid = str(
            api.post("/sessions", json={"title": f"{label} {q['id']}"}).json()["session"]["id"]
        )
        started = time.time()
        done = ask(api, sid, q["question"])
        ended = time.time()
        time.sleep(0.3)  # the services' span batches (exported every 0.2 s here)
        turn_spans = spans.between(started, ended)
        names: dict[str, float] = collections.defaultdict(float)
        for name, start, end in turn_spans:
            names[name] += end - start
        row = {
            "id": q["id"],
            "kind": q["kind"],
            "seconds": ended - started,
            "stages": stage_seconds(turn_spans),
            "names": dict(names),
            "cited": len(done.get("citations") or []),
            "during": still.is_set() if still is not None else False,
        }
        rows.append(row)
        if show:
            shown = {k: v for k, v in row.items() if k not in ("stages", "names")}
            print(label, json.dumps(shown), flush=True)
    return rows


def keyword_phase_runs(
    stack: Stack, index: subprocess.Popen[bytes], running: threading.Event,
    memory: list[dict[str, float]],
) -> None:  # fmt: skip
    """Clears ``running`` once `zocrates index --no-wait` has returned (every PDF of the large
    library read) and the library says its keyword phase is over; samples the stack's memory
    (by service) every second meanwhile."""
    assert stack.proc is not None
    with stack.client(timeout=60) as api:
        while True:
            memory.append(by_service(stack.proc.pid))
            if index.poll() is not None:
                phase = api.get("/library/status").json().get("keyword_phase") or {}
                if not phase.get("running"):
                    break
            time.sleep(1.0)
    running.clear()


def large_keyword_phase(
    code: pathlib.Path, large_zotero: pathlib.Path, index: pathlib.Path, workdir: pathlib.Path,
    spans: Spans, questions: list[dict[str, Any]], args: argparse.Namespace,
) -> dict[str, Any]:  # fmt: skip
    """Turns asked while `zocrates index` reads the large library's PDFs into ``index`` (a copy
    of the 38 papers' index), and the stack's memory meanwhile and after."""
    for stale in ("sessions.db", "sessions.db-wal", "sessions.db-shm"):
        (large_zotero / "zocrates-data" / stale).unlink(missing_ok=True)
    stack = Stack(large_zotero, code, workdir / f"stack-{code.name}-large.log")
    stack.env["ZOCRATES_INDEX_DIR"] = str(index)
    stack.index_args = ["--help"]  # the sync is started below, beside the questions
    with stack, stack.client(timeout=600) as api:
        assert stack.proc is not None
        ask_timed(api, spans, WARM_UP, "warm-up")
        before_sync = by_service(stack.proc.pid)
        with (workdir / f"index-{code.name}-large.log").open("ab") as out:
            syncing = subprocess.Popen(
                [str(ZOCRATES), "index", "--no-wait"], cwd=code, env=stack.env,
                stdout=out, stderr=subprocess.STDOUT,
            )  # fmt: skip
        started = time.monotonic()
        running = threading.Event()
        running.set()
        memory: list[dict[str, float]] = []
        watcher = threading.Thread(
            target=keyword_phase_runs, args=(stack, syncing, running, memory)
        )
        watcher.start()
        # One pass: a question asked again would find its scores in the reranker's cache.
        during = ask_timed(
            api, spans, questions, f"{code.name} large", still=running, show=args.show
        )
        watcher.join()
        syncing.wait()
        seconds = time.monotonic() - started
        time.sleep(3)
        after = by_service(stack.proc.pid)
        status = api.get("/library/status").json()
    peak = max(memory, key=lambda m: sum(m.values())) if memory else {}
    print(
        f"{code.name}: large keyword phase {seconds:.0f} s, {status.get('items')} items, "
        f"{status.get('chunks')} chunks; {len([r for r in during if r['during']])} turns during it"
    )
    return {
        "during": [r for r in during if r["during"]],
        "seconds": seconds,
        "memory": {"before sync": before_sync, "peak": peak, "after keyword phase": after},
    }


def embedding_runs(stack: Stack, running: threading.Event) -> None:
    """Clears ``running`` once the library's embedding phase has no chunk pending."""
    with stack.client(timeout=60) as api:
        while True:
            phase = api.get("/library/status").json().get("embedding_phase") or {}
            if not phase.get("chunks_pending"):
                break
            time.sleep(0.5)
    running.clear()


def run_checkout(
    code: pathlib.Path, zotero_dir: pathlib.Path, workdir: pathlib.Path,
    questions: list[dict[str, Any]], args: argparse.Namespace,
) -> dict[str, Any]:  # fmt: skip
    server, spans, endpoint = collector()
    os.environ["ZOCRATES_OTLP_ENDPOINT"] = endpoint
    os.environ["OTEL_BSP_SCHEDULE_DELAY"] = "200"
    # A log of its own per stack: Stack waits for "Zocrates is running" in it.
    logs = {phase: workdir / f"stack-{code.name}-{phase}.log" for phase in ("idle", "sync")}
    for log_file in logs.values():
        log_file.unlink(missing_ok=True)
    try:
        # Each phase on a stack of its own: the reranker's score cache starts empty, so the
        # second phase does not find the first one's scores.
        with Stack(zotero_dir, code, logs["idle"]) as stack, stack.client(timeout=600) as api:
            ask_timed(api, spans, WARM_UP, "warm-up")  # models loaded, caches warm
            idle = ask_timed(api, spans, questions, f"{code.name} idle", show=args.show)
        during: list[dict[str, Any]] = []
        if not args.no_sync:
            # A fresh index: `zocrates index` returns once every paper is searchable by
            # keyword, and the embedding phase then runs beside the questions.
            fresh = workdir / f"index-fresh-{code.name}"
            shutil.rmtree(fresh, ignore_errors=True)
            stack = Stack(zotero_dir, code, logs["sync"])
            stack.env["ZOCRATES_INDEX_DIR"] = str(fresh)
            stack.index_args = ["--no-wait"]
            with stack, stack.client(timeout=600) as api:
                running = threading.Event()
                running.set()
                thread = threading.Thread(target=embedding_runs, args=(stack, running))
                thread.start()
                during = ask_timed(
                    api, spans, questions, f"{code.name} embedding", still=running, show=args.show
                )
                thread.join()
            during = [r for r in during if r["during"]]
        large = None
        if args.large:
            # The idle stack's index (the 38 papers, embedded) is the starting point.
            index = workdir / f"index-large-{code.name}"
            shutil.rmtree(index, ignore_errors=True)
            shutil.copytree(zotero_dir / "zocrates-data" / "library", index)
            large = large_keyword_phase(
                code, args.large_zotero, index, workdir, spans, questions, args
            )
    finally:
        server.stop(0)
        os.environ.pop("ZOCRATES_OTLP_ENDPOINT", None)
    return {"code": str(code), "idle": idle, "during": during, "large": large}


def summary(rows: list[dict[str, Any]]) -> dict[str, float]:
    seconds = [r["seconds"] for r in rows]
    out = {
        "n": float(len(rows)),
        "p50": statistics.median(seconds) if seconds else float("nan"),
        "p95": percentile(seconds, 0.95),
    }
    for stage in STAGES:
        values = [r["stages"][stage] for r in rows]
        out[stage] = statistics.mean(values) if values else float("nan")
    return out


def report(results: list[dict[str, Any]]) -> dict[str, float]:
    columns = []
    for result in results:
        name = pathlib.Path(result["code"]).name or result["code"]
        columns.append((f"{name} idle", summary(result["idle"])))
        if result["during"]:
            columns.append((f"{name} embedding", summary(result["during"])))
        if result.get("large") and result["large"]["during"]:
            columns.append((f"{name} large sync", summary(result["large"]["during"])))
    print(f"{'seconds':<26}" + "".join(f"{label:>20}" for label, _ in columns))
    for key in ("n", "p50", "p95", *STAGES):
        shown = "turns" if key == "n" else key if key in ("p50", "p95") else f"  {key}, mean"
        cells = "".join(
            f"{int(s[key]):>20}" if key == "n" else f"{s[key]:>20.2f}" for _, s in columns
        )
        print(f"{shown:<26}{cells}")
    by_kind: dict[str, list[float]] = collections.defaultdict(list)
    for r in results[-1]["idle"]:
        by_kind[r["kind"]].append(r["seconds"])
    print("last checkout, idle, p50 by kind: " + ", ".join(
        f"{k} {statistics.median(v):.2f} s (n={len(v)})" for k, v in by_kind.items()))  # fmt: skip
    totals: dict[str, float] = collections.defaultdict(float)
    for r in results[-1]["idle"]:
        for name, seconds in r["names"].items():
            totals[name] += seconds / len(results[-1]["idle"])
    print("last checkout, idle, span seconds per turn (summed, nested spans overlap):")
    for name, seconds in sorted(totals.items(), key=lambda x: -x[1])[:14]:
        print(f"  {seconds:7.3f}  {name}")
    last = results[-1]
    idle = summary(last["idle"])["p50"]
    during = summary(last["during"])["p50"] if last["during"] else float("nan")
    figures = {"idle_p50": idle, "ratio": during / idle}
    if last.get("large"):
        for result in results:
            name = pathlib.Path(result["code"]).name
            for point, by in result["large"]["memory"].items():
                shown = ", ".join(f"{k} {v:.0f}" for k, v in sorted(by.items()))
                print(f"{name} memory, {point}: stack {sum(by.values()):.0f} MB ({shown})")
        large = summary(last["large"]["during"])["p50"] if last["large"]["during"] else math.nan
        figures["large_ratio"] = large / idle
        first = sum(results[0]["large"]["memory"]["after keyword phase"].values())
        figures["large_extra_mb"] = (
            sum(last["large"]["memory"]["after keyword phase"].values()) - first
        )
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--workdir", required=True, help="the library copy and its index (kept)")
    parser.add_argument(
        "--code", default=".", help="comma-separated checkouts, run one after the other"
    )
    parser.add_argument("--every", type=int, default=1, help="only every K-th question")
    parser.add_argument("--no-sync", action="store_true", help="idle turns only")
    parser.add_argument("--show", action="store_true", help="print each turn")
    parser.add_argument("--save", default=None, help="write every turn's figures to this JSON")
    parser.add_argument(
        "--large", type=pathlib.Path, default=None,
        help="the large library (fetch.sh's folder): turns during its keyword phase too",
    )  # fmt: skip
    parser.add_argument("--large-limit", type=int, default=0, help="only N of its PDFs")
    add_check_flag(parser)
    args = parser.parse_args()
    workdir = pathlib.Path(args.workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    zotero_dir = zotero_fixture.every_paper_library(workdir / "Zotero")
    questions = read_jsonl("answer_questions.jsonl")[:: max(1, args.every)]
    args.large_zotero = None
    if args.large:
        args.large_zotero = build_library(args.large.resolve(), workdir, args.large_limit)
    results = []
    for code in [pathlib.Path(c).resolve() for c in args.code.split(",") if c]:
        for stale in ("sessions.db", "sessions.db-wal", "sessions.db-shm"):
            (zotero_dir / "zocrates-data" / stale).unlink(missing_ok=True)
        results.append(run_checkout(code, zotero_dir, workdir, questions, args))
    figures = report(results)
    if args.save:
        pathlib.Path(args.save).write_text(json.dumps(results, indent=1))
    checked = [(GOALS[0], figures["idle_p50"]), (GOALS[1], figures["ratio"])]
    if args.large:
        checked += [
            (LARGE_GOALS[0], figures["large_ratio"]),
            (LARGE_GOALS[1], figures["large_extra_mb"] if len(results) > 1 else math.nan),
        ]
    sys.exit(check_goals(checked, check=args.check))


if __name__ == "__main__":
    main()
