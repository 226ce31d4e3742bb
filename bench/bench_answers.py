"""Answer quality as a user meets it: the whole stack (`zocrates run`, no key: the built-in
offline model), the 38 papers indexed, every question asked over HTTP in its own chat session.

Scored on bench/data/answer_questions.jsonl and bench/data/conversations.jsonl:

- page: the answer cites a gold page (+-1) of a gold paper;
- sentence: one sentence of the answer holds at least 60% of a gold sentence's content words;
- coverage (multi-paper questions): the share of the needed papers the answer cites;
- abstention (questions the library cannot answer): no citation and a plain "no evidence";
- follow-ups: the last turn of each conversation cites its gold paper.

A turn that stops at a deep-research checkpoint is resumed with "synthesize now" (a user who
wants the answer from what was found). Run it against another checkout for a before/after
table side by side (same index, same questions):

    .venv/bin/python bench/bench_answers.py --workdir /tmp/answers [--code /tmp/old-checkout] [--check]

``--capture FILE`` keeps what the synthesizer was given, for bench/replay_answers.py.

``--check`` compares the scores with the goals of docs/benchmarks.md ("Offline answers"): the
gold page 0.90 and the gold sentence 0.80 (single-paper), needed papers 0.80 (multi-paper),
abstention 0.95 (out-of-library), the right paper 0.80 (follow-ups).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import re
import signal
import subprocess
import sys
import time
from typing import Any

import httpx

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from goals import Goal, Result, add_check_flag
from goals import report as check_goals

from tests.support import zotero_fixture
from tests.support.ports import free_base_port
from tests.support.sse import post_stream_sync

DATA = ROOT / "bench" / "data"
# services.agent.research.offline_llm.CAPTURE_ENV (not imported: --code may be another checkout)
CAPTURE_ENV = "ZOCRATES_OFFLINE_CAPTURE"
ZOCRATES = pathlib.Path(sys.executable).parent / "zocrates"
# Not services.common.stopwords: the score must not move when the code it measures (another
# checkout, too) changes its own lists.
_STOP = frozenset(
    """the and for are was were with that this from which into their there these those then than
    its also has have had not but can may been being such when where what how why who whom
    each both other our out all any one two more most some very only over under between about
    does did done use used uses using""".split()
)
_CITE = re.compile(r"\[(\d{1,3})(?:\s*,\s*p+\.?\s*(\d{1,4}))?")
_NO_EVIDENCE = re.compile(r"no evidence|no passages|does not (?:cover|answer)|not found", re.I)


def read_jsonl(name: str) -> list[dict[str, Any]]:
    """A file of bench/data, a JSON object a line."""
    return [json.loads(x) for x in (DATA / name).read_text().splitlines() if x.strip()]


def content_words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) >= 3 and w not in _STOP}


def answer_body(answer: str) -> str:
    return answer.split("# Cited Sources", 1)[0]


def sentence_hit(answer: str, gold: list[str], share: float = 0.6) -> bool:
    """One sentence of the answer holds ``share`` of a gold sentence's content words."""
    pieces = [p for p in re.split(r"(?<=[.!?\"])\s+|\n+", answer_body(answer)) if p.strip()]
    bags = [content_words(p) for p in pieces]
    for sentence in gold:
        want = content_words(sentence)
        if want and any(len(want & bag) >= share * len(want) for bag in bags):
            return True
    return False


def cited(citations: list[dict[str, Any]]) -> list[tuple[str, int]]:
    return [(str(c.get("item_key")), int(c.get("page") or 0)) for c in citations]


def page_hit(citations: list[dict[str, Any]], papers: list[dict[str, Any]]) -> bool:
    for paper in papers:
        key = zotero_fixture.paper_item_key(paper["file"])
        pages = {p + d for p in paper["pages"] for d in (-1, 0, 1)}
        if any(k == key and page in pages for k, page in cited(citations)):
            return True
    return False


def coverage(citations: list[dict[str, Any]], papers: list[dict[str, Any]]) -> float:
    keys = {zotero_fixture.paper_item_key(p["file"]) for p in papers}
    got = {k for k, _ in cited(citations)}
    return len(keys & got) / len(keys) if keys else 1.0


def abstained(answer: str, citations: list[dict[str, Any]]) -> bool:
    return not citations and bool(_NO_EVIDENCE.search(answer))


class Stack:
    """`zocrates run` on free ports from ``code`` (a checkout; its services shadow ours)."""

    def __init__(self, zotero_dir: pathlib.Path, code: pathlib.Path, log: pathlib.Path) -> None:
        self.zotero_dir, self.code, self.log = zotero_dir, code, log
        self.base = free_base_port()
        self.env = {
            **os.environ,
            "ZOCRATES_PORT": str(self.base),
            "ZOCRATES_ZOTERO_DIR": str(zotero_dir),
            "PYTHONPATH": str(code),
        }
        for key in list(self.env):
            if key.endswith("_API_KEY"):
                del self.env[key]
        self.proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> Stack:
        out = self.log.open("ab")
        self.proc = subprocess.Popen(
            [str(ZOCRATES), "run"],
            cwd=self.code,
            env=self.env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        out.close()
        deadline = time.monotonic() + 300
        while "Zocrates is running" not in self.log.read_text(errors="replace"):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(self.log.read_text(errors="replace")[-3000:])
            time.sleep(0.3)
        index = subprocess.run(
            [str(ZOCRATES), "index"], cwd=self.code, env=self.env, capture_output=True, text=True
        )
        if index.returncode != 0:
            raise RuntimeError(index.stderr[-3000:])
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=60)

    def client(self) -> httpx.Client:
        token = (self.zotero_dir / "zocrates-data" / "gateway.token").read_text().strip()
        return httpx.Client(
            base_url=f"http://127.0.0.1:{self.base}",
            headers={"Authorization": f"Bearer {token}"},
            timeout=600,
        )


def _sse(api: httpx.Client, path: str, body: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    status, events, refusal = post_stream_sync(api, path, body)
    if status != 200:
        raise RuntimeError(f"{path}: {status} {refusal[:300]!r}")
    return events


def ask(api: httpx.Client, session_id: str, question: str) -> dict[str, Any]:
    """One turn: the ``done`` payload, after "synthesize now" at a checkpoint."""
    events = _sse(api, "/chat", {"session_id": session_id, "prompt": question})
    for _ in range(3):
        done = next((d for k, d in events if k == "done"), None)
        if done is not None and done.get("status") == "completed":
            return done
        card = next((d for k, d in events if k == "request_input"), None)
        if card is None:
            errors = [d for k, d in events if k == "error"]
            raise RuntimeError(f"turn ended without an answer: {errors or events[-1:]}")
        events = _sse(
            api,
            "/chat/resume",
            {
                "session_id": session_id,
                "invocation_id": card["invocation_id"],
                "interrupt_id": card["interrupt_id"],
                "response": {"action": "synthesize"},
            },
        )
    raise RuntimeError("three checkpoints in one turn")


def run(args: argparse.Namespace) -> dict[str, Any]:
    workdir = pathlib.Path(args.workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    zotero_dir = zotero_fixture.every_paper_library(workdir / "Zotero")
    for stale in ("sessions.db", "sessions.db-wal", "sessions.db-shm"):
        (zotero_dir / "zocrates-data" / stale).unlink(missing_ok=True)
    questions = read_jsonl("answer_questions.jsonl")
    conversations = read_jsonl("conversations.jsonl")
    if args.limit:
        questions, conversations = questions[: args.limit], conversations[: max(1, args.limit // 5)]
    code = pathlib.Path(args.code or ROOT).resolve()
    if args.capture:  # the stack's synthesizer appends what it is given (replay_answers.py)
        capture = pathlib.Path(args.capture).resolve()
        capture.unlink(missing_ok=True)
        os.environ[CAPTURE_ENV] = str(capture)
    (workdir / "stack.log").unlink(missing_ok=True)  # this run's log only (scores are read back)
    results: dict[str, list[Any]] = {"single": [], "multi": [], "abstain": [], "follow": []}
    started = time.perf_counter()
    with Stack(zotero_dir, code, workdir / "stack.log") as stack, stack.client() as api:

        def session(title: str) -> str:
            return str(api.post("/sessions", json={"title": title}).json()["session"]["id"])

        for q in questions:
            done = ask(api, session(q["id"]), q["question"])
            answer, citations = str(done.get("answer") or ""), list(done.get("citations") or [])
            gold = [s for p in q["papers"] for s in p.get("gold", [])]
            row = {
                "id": q["id"],
                "page": page_hit(citations, q["papers"]),
                "sentence": sentence_hit(answer, gold) if gold else False,
                "coverage": coverage(citations, q["papers"]),
                "abstained": abstained(answer, citations),
                "answer": answer,
            }
            results[q["kind"]].append(row)
            if args.show:
                print(json.dumps({k: v for k, v in row.items() if k != "answer"}), flush=True)
        for c in conversations:
            sid = session(c["id"])
            for turn in c["turns"]:
                done = ask(api, sid, turn["question"])
            last = c["turns"][-1]
            answer, citations = str(done.get("answer") or ""), list(done.get("citations") or [])
            gold = [s for p in last["papers"] for s in p.get("gold", [])]
            keys = {zotero_fixture.paper_item_key(p["file"]) for p in last["papers"]}
            results["follow"].append(
                {
                    "id": c["id"],
                    "paper": bool(keys & {k for k, _ in cited(citations)}),
                    "page": page_hit(citations, last["papers"]),
                    "sentence": sentence_hit(answer, gold) if gold else False,
                    "answer": answer,
                }
            )
    seconds = time.perf_counter() - started
    scores = best_scores(workdir / "stack.log")
    return {"results": results, "seconds": seconds, "code": str(code), "best_scores": scores}


_SCORED = re.compile(
    r"offline answer scored: best=(\S+) parts=\d+ sentences=\d+ (?:unmentioned=\S+ )?"
    r"question=(['\"])(.*)\2$"
)


def best_scores(log: pathlib.Path) -> dict[str, float]:
    """The offline synthesizer's best sentence score per question, from the agent's log."""
    out: dict[str, float] = {}
    for line in log.read_text(errors="replace").splitlines():
        m = _SCORED.search(line)
        if m:
            out[m.group(3)] = float(m.group(1))
    return out


def calibration(summary: dict[str, Any], questions: list[dict[str, Any]]) -> None:
    """Abstention at a few thresholds of the best cross-encoder score: answerable questions
    kept, out-of-library ones refused."""
    scores = summary.get("best_scores") or {}
    kinds = {q["question"][:300]: q["kind"] for q in questions}
    answerable = [v for k, v in scores.items() if kinds.get(k) in ("single", "multi")]
    foreign = [v for k, v in scores.items() if kinds.get(k) == "abstain"]
    if not answerable or not foreign:
        return
    print(
        f"best sentence score: answerable min {min(answerable):.2f}, "
        f"out-of-library max {max(foreign):.2f}"
    )
    print(f"{'threshold':>9} {'answerable kept':>16} {'out-of-library refused':>23}")
    for t in (-8.0, -7.0, -6.0, -5.0, -4.0, -3.0, -2.0):
        kept = sum(v >= t for v in answerable) / len(answerable)
        refused = sum(v < t for v in foreign) / len(foreign)
        print(f"{t:>9.1f} {kept:>16.3f} {refused:>23.3f}")


# (results group, score, what) -> at least this share.
GOALS = (
    ("single", "page", "cites the gold page (+-1), single-paper", 0.90),
    ("single", "sentence", "contains the gold sentence, single-paper", 0.80),
    ("multi", "coverage", "needed papers cited, multi-paper", 0.80),
    ("abstain", "abstained", "abstains, out-of-library", 0.95),
    ("follow", "paper", "follow-up cites the right paper", 0.80),
)


def goals(summary: dict[str, Any]) -> list[Result]:
    r = summary["results"]
    return [
        (Goal(what, limit, at_least=True), share(r[group], key) if r[group] else None)
        for group, key, what, limit in GOALS
    ]


def share(rows: list[dict[str, Any]], key: str) -> float:
    return sum(float(r[key]) for r in rows) / len(rows) if rows else float("nan")


def report(summary: dict[str, Any]) -> None:
    r = summary["results"]
    answered = r["single"] + r["multi"]
    print(f"code: {summary['code']}  ({summary['seconds']:.0f} s)")
    print(f"{'measure':<44} {'value':>7}  n")
    print(
        f"{'cites the gold page (+-1), single-paper':<44} {share(r['single'], 'page'):>7.3f}  {len(r['single'])}"
    )
    print(
        f"{'contains the gold sentence, single-paper':<44} {share(r['single'], 'sentence'):>7.3f}  {len(r['single'])}"
    )
    print(
        f"{'contains a gold sentence, all answerable':<44} {share(answered, 'sentence'):>7.3f}  {len(answered)}"
    )
    print(
        f"{'needed papers cited, multi-paper':<44} {share(r['multi'], 'coverage'):>7.3f}  {len(r['multi'])}"
    )
    print(
        f"{'abstains, out-of-library':<44} {share(r['abstain'], 'abstained'):>7.3f}  {len(r['abstain'])}"
    )
    print(
        f"{'wrongly abstains, answerable':<44} {share(answered, 'abstained'):>7.3f}  {len(answered)}"
    )
    print(
        f"{'follow-up cites the right paper':<44} {share(r['follow'], 'paper'):>7.3f}  {len(r['follow'])}"
    )
    print(
        f"{'follow-up contains the gold sentence':<44} {share(r['follow'], 'sentence'):>7.3f}  {len(r['follow'])}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--workdir", required=True, help="the library copy and its index (kept)")
    parser.add_argument("--code", default=None, help="run the stack from this checkout instead")
    parser.add_argument("--limit", type=int, default=0, help="only the first N questions")
    parser.add_argument("--show", action="store_true", help="print each question's scores")
    parser.add_argument("--save", default=None, help="write every answer and score to this JSON")
    parser.add_argument(
        "--capture",
        default=None,
        help="write each synthesis input to this JSON-lines file, for bench/replay_answers.py",
    )
    add_check_flag(parser)
    args = parser.parse_args()
    summary = run(args)
    if args.save:
        pathlib.Path(args.save).write_text(json.dumps(summary, indent=1))
    report(summary)
    calibration(summary, read_jsonl("answer_questions.jsonl"))
    sys.exit(check_goals(goals(summary), check=args.check))


if __name__ == "__main__":
    main()
