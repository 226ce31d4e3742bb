"""The resident memory of the whole stack, by service: `zocrates run` started, idle, then with
the 38 papers indexed (embeddings done) and after ten offline research turns, for one or more
checkouts side by side (each its own stack on a fresh copy of the same library).

RSS is read from /proc (``statm``) for every process of the stack's tree, named by the module it
runs (``services.<name>``); a service's figure includes its children (the library's extraction
workers, when running). Goal (issue 26, the library service beside the agent): the stack at most
100 MB above the checkout before the split, at each point.

    .venv/bin/python bench/bench_stack_memory.py --workdir /tmp/mem --code /tmp/before,. [--check]
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import shutil
import time

from _stack import tree_rss
from bench_answers import ROOT, Stack, ask
from goals import Goal, Result, add_check_flag, report

from tests.support import zotero_fixture as zf

QUESTIONS = ROOT / "bench" / "data" / "answer_questions.jsonl"
EXTRA_MB = 100.0
POINTS = ("idle", "indexed", "after 10 turns")


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for entry in pathlib.Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(entry.name))
    return found


def by_service(root: int) -> dict[str, float]:
    """MB of each service process under the supervisor ``root`` (children included)."""
    out: dict[str, float] = {}
    for pid in _children(root):
        try:
            argv = (pathlib.Path("/proc") / str(pid) / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        name = next((a.decode() for a in argv if a.startswith(b"services.")), str(pid))
        out[name.removeprefix("services.")] = tree_rss(pid) / 1e6
    statm = (pathlib.Path("/proc") / str(root) / "statm").read_text().split()
    out["(supervisor)"] = int(statm[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6
    return out


def measure(
    code: pathlib.Path, workdir: pathlib.Path, questions: list[str]
) -> dict[str, dict[str, float]]:
    label = code.name or str(code)
    zotero = workdir / f"Zotero-{label}"
    shutil.rmtree(zotero, ignore_errors=True)
    zf.build_zotero_library(zotero)
    stack = Stack(zotero, code, workdir / f"stack-{label}.log")
    stack.index_args = ["--help"]  # Stack's own index step a no-op: "idle" has no index
    figures: dict[str, dict[str, float]] = {}
    with stack:
        assert stack.proc is not None
        time.sleep(5)
        figures["idle"] = by_service(stack.proc.pid)
        with stack.client() as api:
            events = api.post("/library/sync", json={"follow_embedding": True}, timeout=3600)
            assert events.status_code == 200, events.text[:300]
            deadline = time.monotonic() + 3600
            while api.get("/library/status").json()["embedding_phase"]["chunks_pending"]:
                assert time.monotonic() < deadline
                time.sleep(2)
            time.sleep(3)
            figures["indexed"] = by_service(stack.proc.pid)
            for question in questions[:10]:
                session = api.post("/sessions", json={"title": "memory"}).json()["session"]["id"]
                ask(api, session, question)
            time.sleep(3)
            figures["after 10 turns"] = by_service(stack.proc.pid)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--workdir", required=True, type=pathlib.Path)
    parser.add_argument(
        "--code", default=".", help="checkouts, comma-separated, the first the one before"
    )
    add_check_flag(parser)
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    questions = [
        json.loads(line)["question"]
        for line in QUESTIONS.read_text().splitlines()
        if line.strip() and json.loads(line)["kind"] == "single"
    ]
    codes = [pathlib.Path(c).resolve() for c in args.code.split(",")]
    runs = {str(c): measure(c, args.workdir, questions) for c in codes}
    for code, figures in runs.items():
        print(f"code: {code}")
        services = sorted({s for f in figures.values() for s in f})
        print(f"{'MB':<16}" + "".join(f"{p:>16}" for p in POINTS))
        for service in services:
            row = "".join(f"{figures[p].get(service, 0):>16.0f}" for p in POINTS)
            print(f"{service:<16}{row}")
        print(f"{'stack':<16}" + "".join(f"{sum(figures[p].values()):>16.0f}" for p in POINTS))
    results: list[Result] = []
    if len(codes) > 1:
        before = runs[str(codes[0])]
        for code in codes[1:]:
            after = runs[str(code)]
            for point in POINTS:
                extra = sum(after[point].values()) - sum(before[point].values())
                print(f"{code.name} - {codes[0].name}, {point}: {extra:+.0f} MB")
                results.append((Goal(f"stack RSS above before, {point}", EXTRA_MB, " MB"), extra))
    raise SystemExit(report(results, check=args.check))


if __name__ == "__main__":
    main()
