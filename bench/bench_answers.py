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

``--pipelines offline,small,tools --local-llm`` asks the same questions of each pipeline in
turn, on one stack and one index, and prints one table side by side (docs/benchmarks.md,
"Local model"): ``offline`` is the built-in extractive model; ``small`` a real local model
(SmolLM2-135M-Instruct behind llama.cpp's OpenAI-compatible server, started from .venv-llm,
`make llm-deps`) in every role with the small-model pipeline (``model_tool_calling: off``:
the fixed search policy, the model writes the answer); ``tools`` the same model trusted to
call tools. Each adds seconds and tokens per turn, turns that errored or hung (no answer in
``--turn-timeout`` seconds), and citations shown as verified whose quote is not on the PDF's
page when the bench reads that page itself.

``--check`` compares the scores with the goals of docs/benchmarks.md ("Offline answers"): the
gold page 0.90 and the gold sentence 0.80 (single-paper), needed papers 0.80 (multi-paper),
abstention 0.95 (out-of-library), the right paper 0.80 (follow-ups).
"""

from __future__ import annotations

import argparse
import contextlib
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

from services.agent.research.citations import on_page
from tests.support import zotero_fixture
from tests.support.local_llm import CONTEXT as LLM_CONTEXT
from tests.support.local_llm import MODEL as LLM_MODEL
from tests.support.local_llm import llama_server
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
            # the checkout's own generated protos too: an older one's differ from this one's
            "PYTHONPATH": os.pathsep.join([str(code), str(code / "protos" / "gen")]),
        }
        for key in list(self.env):
            if key.endswith("_API_KEY"):
                del self.env[key]
        self.proc: subprocess.Popen[bytes] | None = None
        self.index_args: list[str] = []  # ["--no-wait"]: return once searchable by keyword

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
            [str(ZOCRATES), "index", *self.index_args],
            cwd=self.code,
            env=self.env,
            capture_output=True,
            text=True,
        )
        if index.returncode != 0:
            raise RuntimeError(index.stderr[-3000:])
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=60)

    def client(self, timeout: float = 600) -> httpx.Client:
        token = (self.zotero_dir / "zocrates-data" / "gateway.token").read_text().strip()
        return httpx.Client(
            base_url=f"http://127.0.0.1:{self.base}",
            headers={"Authorization": f"Bearer {token}"},
            timeout=timeout,
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


PIPELINES = ("offline", "small", "tools")
ROLES = ("coordinator_model", "subagent_model", "synthesizer_model", "compaction_summarizer_model")


def pipeline_config(pipeline: str, api_base: str) -> dict[str, Any]:
    """The preferences of one pipeline: every role offline, or on the local model."""
    if pipeline == "offline":
        return {role: "offline" for role in ROLES}
    return {
        **{role: LLM_MODEL for role in ROLES},
        "model_api_base": api_base,
        "model_tool_calling": "off" if pipeline == "small" else "on",
        "model_context_window": LLM_CONTEXT,
    }


class PageTexts:
    """The pages of the library's PDFs as this bench reads them (pypdfium2), to check each
    citation shown as verified against its page independently of the services."""

    def __init__(self) -> None:
        folder = zotero_fixture.default_papers_dir()
        self.files = {zotero_fixture.paper_item_key(f.name): f for f in folder.glob("*.pdf")}
        self.cache: dict[tuple[str, int], str] = {}

    def text(self, item_key: str, page: int) -> str | None:
        import pypdfium2

        key = (item_key, page)
        if key not in self.cache:
            path = self.files.get(item_key)
            if path is None:
                return None
            pdf = pypdfium2.PdfDocument(str(path))
            try:
                if not 1 <= page <= len(pdf):
                    self.cache[key] = ""
                else:
                    self.cache[key] = pdf[page - 1].get_textpage().get_text_range()
            finally:
                pdf.close()
        return self.cache[key]

    def false_verified(self, citations: list[dict[str, Any]]) -> int:
        """Citations shown as verified whose quote is not on the cited page."""
        wrong = 0
        for c in citations:
            if c.get("verified") is True and c.get("quote"):
                text = self.text(str(c["item_key"]), int(c["page"]))
                if text is not None and not on_page(str(c["quote"]), text):
                    wrong += 1
        return wrong


def timed_ask(
    api: httpx.Client, session_id: str, question: str, pages: PageTexts
) -> tuple[dict[str, Any], dict[str, Any]]:
    """``ask``, never raising: (done, measures) where a turn that failed or hung is
    ``errored`` with an empty answer."""
    started = time.perf_counter()
    try:
        done = ask(api, session_id, question)
        errored = ""
    except (RuntimeError, httpx.HTTPError) as exc:
        done, errored = {}, f"{type(exc).__name__}: {exc}"[:300]
    usage = done.get("usage") or {}
    citations = list(done.get("citations") or [])
    return done, {
        "seconds": round(time.perf_counter() - started, 2),
        "tokens": int(usage.get("input_tokens") or 0) + int(usage.get("output_tokens") or 0),
        "errored": errored,
        "false_verified": pages.false_verified(citations),
    }


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
    if args.every > 1:  # every kind of question, in a shorter run
        questions, conversations = questions[:: args.every], conversations[:: args.every]
    code = pathlib.Path(args.code or ROOT).resolve()
    if args.capture:  # the stack's synthesizer appends what it is given (replay_answers.py)
        capture = pathlib.Path(args.capture).resolve()
        capture.unlink(missing_ok=True)
        os.environ[CAPTURE_ENV] = str(capture)
    (workdir / "stack.log").unlink(missing_ok=True)  # this run's log only (scores are read back)
    pipelines = [p.strip() for p in args.pipelines.split(",") if p.strip()]
    unknown = sorted(set(pipelines) - set(PIPELINES))
    if unknown:
        raise SystemExit(f"unknown pipeline(s) {unknown}: choose from {', '.join(PIPELINES)}")
    if any(p != "offline" for p in pipelines) and not args.local_llm:
        raise SystemExit("the small and tools pipelines need --local-llm")
    pages = PageTexts()
    out: dict[str, Any] = {"code": str(code), "pipelines": {}}
    with contextlib.ExitStack() as running:
        api_base = (
            running.enter_context(llama_server(workdir / "llama.log", context=LLM_CONTEXT))
            if args.local_llm
            else ""
        )
        stack = running.enter_context(Stack(zotero_dir, code, workdir / "stack.log"))
        api = running.enter_context(stack.client(timeout=args.turn_timeout))
        for pipeline in pipelines:
            response = api.put("/config", json=pipeline_config(pipeline, api_base))
            if response.status_code != 200:
                raise RuntimeError(f"config of {pipeline} refused: {response.text[:300]}")
            started = time.perf_counter()
            results = ask_all(api, questions, conversations, pages, args.show, pipeline)
            out["pipelines"][pipeline] = {
                "results": results,
                "seconds": time.perf_counter() - started,
            }
    out["best_scores"] = best_scores(workdir / "stack.log")
    return out


def ask_all(
    api: httpx.Client,
    questions: list[dict[str, Any]],
    conversations: list[dict[str, Any]],
    pages: PageTexts,
    show: bool,
    pipeline: str,
) -> dict[str, list[Any]]:
    results: dict[str, list[Any]] = {"single": [], "multi": [], "abstain": [], "follow": []}

    def session(title: str) -> str:
        return str(api.post("/sessions", json={"title": title}).json()["session"]["id"])

    for q in questions:
        done, measures = timed_ask(api, session(f"{pipeline} {q['id']}"), q["question"], pages)
        answer, citations = str(done.get("answer") or ""), list(done.get("citations") or [])
        gold = [s for p in q["papers"] for s in p.get("gold", [])]
        row = {
            "id": q["id"],
            "page": page_hit(citations, q["papers"]),
            "sentence": sentence_hit(answer, gold) if gold else False,
            "coverage": coverage(citations, q["papers"]),
            "abstained": abstained(answer, citations),
            **measures,
            "answer": answer,
        }
        results[q["kind"]].append(row)
        if show:
            print(pipeline, json.dumps({k: v for k, v in row.items() if k != "answer"}), flush=True)
    for c in conversations:
        sid = session(f"{pipeline} {c['id']}")
        turns = []
        for turn in c["turns"]:
            done, measures = timed_ask(api, sid, turn["question"], pages)
            turns.append(measures)
        last = c["turns"][-1]
        answer, citations = str(done.get("answer") or ""), list(done.get("citations") or [])
        gold = [s for p in last["papers"] for s in p.get("gold", [])]
        keys = {zotero_fixture.paper_item_key(p["file"]) for p in last["papers"]}
        row = {
            "id": c["id"],
            "paper": bool(keys & {k for k, _ in cited(citations)}),
            "page": page_hit(citations, last["papers"]),
            "sentence": sentence_hit(answer, gold) if gold else False,
            "seconds": round(sum(t["seconds"] for t in turns) / len(turns), 2),
            "tokens": sum(t["tokens"] for t in turns) // len(turns),
            "errored": "; ".join(t["errored"] for t in turns if t["errored"]),
            "false_verified": sum(t["false_verified"] for t in turns),
            "answer": answer,
        }
        results["follow"].append(row)
        if show:
            print(pipeline, json.dumps({k: v for k, v in row.items() if k != "answer"}), flush=True)
    return results


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
    """The offline model's goals, and the local model's (small-model pipeline): the gold page
    at least as often as the offline model, no citation shown as verified off its page, no
    turn errored or hung, a turn at most 60 s."""
    runs = summary["pipelines"]
    out: list[Result] = []
    if "offline" in runs:
        r = runs["offline"]["results"]
        out += [
            (Goal(what, limit, at_least=True), share(r[group], key) if r[group] else None)
            for group, key, what, limit in GOALS
        ]
    if "small" in runs:
        rows = all_rows(runs["small"]["results"])
        if "offline" in runs:
            offline_page = share(runs["offline"]["results"]["single"], "page")
            out.append(
                (
                    Goal(
                        "small pipeline: gold page (+-1) as often as offline",
                        offline_page,
                        at_least=True,
                    ),
                    share(runs["small"]["results"]["single"], "page"),
                )
            )
        out.append(
            (
                Goal("small pipeline: verified citations off their page", 0),
                total(rows, "false_verified"),
            )
        )
        out.append(
            (
                Goal("small pipeline: turns errored or hung", 0),
                sum(bool(r["errored"]) for r in rows),
            )
        )
        out.append((Goal("small pipeline: slowest turn, s", 60.0), max(r["seconds"] for r in rows)))
    return out


def share(rows: list[dict[str, Any]], key: str) -> float:
    return sum(float(r[key]) for r in rows) / len(rows) if rows else float("nan")


def all_rows(results: dict[str, list[Any]]) -> list[dict[str, Any]]:
    return [row for group in ("single", "multi", "abstain", "follow") for row in results[group]]


def total(rows: list[dict[str, Any]], key: str) -> int:
    return int(sum(int(r.get(key) or 0) for r in rows))


def median(values: list[float]) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def report(summary: dict[str, Any]) -> None:
    runs = summary["pipelines"]
    names = list(runs)
    print(
        f"code: {summary['code']}  ("
        + ", ".join(f"{n} {runs[n]['seconds']:.0f} s" for n in names)
        + ")"
    )
    print(f"{'measure':<44} " + " ".join(f"{n:>9}" for n in names) + "  n")

    def line(label: str, value: Any, n: int) -> None:
        cells = []
        for name in names:
            v = value(runs[name]["results"])
            cells.append(f"{v:>9.3f}" if isinstance(v, float) else f"{v:>9}")
        print(f"{label:<44} " + " ".join(cells) + f"  {n}")

    first = runs[names[0]]["results"]
    answered = len(first["single"]) + len(first["multi"])
    line(
        "cites the gold page (+-1), single-paper",
        lambda r: share(r["single"], "page"),
        len(first["single"]),
    )
    line(
        "contains the gold sentence, single-paper",
        lambda r: share(r["single"], "sentence"),
        len(first["single"]),
    )
    line(
        "contains a gold sentence, all answerable",
        lambda r: share(r["single"] + r["multi"], "sentence"),
        answered,
    )
    line(
        "needed papers cited, multi-paper",
        lambda r: share(r["multi"], "coverage"),
        len(first["multi"]),
    )
    line(
        "abstains, out-of-library",
        lambda r: share(r["abstain"], "abstained"),
        len(first["abstain"]),
    )
    line(
        "wrongly abstains, answerable",
        lambda r: share(r["single"] + r["multi"], "abstained"),
        answered,
    )
    line(
        "follow-up cites the right paper",
        lambda r: share(r["follow"], "paper"),
        len(first["follow"]),
    )
    line(
        "follow-up contains the gold sentence",
        lambda r: share(r["follow"], "sentence"),
        len(first["follow"]),
    )
    rows = len(all_rows(first))
    line(
        "verified citations not on their page", lambda r: total(all_rows(r), "false_verified"), rows
    )
    line("turns errored or hung", lambda r: sum(bool(x["errored"]) for x in all_rows(r)), rows)
    line("seconds per turn, median", lambda r: median([x["seconds"] for x in all_rows(r)]), rows)
    line("seconds per turn, slowest", lambda r: max(x["seconds"] for x in all_rows(r)), rows)
    line("tokens per turn, median", lambda r: int(median([x["tokens"] for x in all_rows(r)])), rows)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--workdir", required=True, help="the library copy and its index (kept)")
    parser.add_argument("--code", default=None, help="run the stack from this checkout instead")
    parser.add_argument("--limit", type=int, default=0, help="only the first N questions")
    parser.add_argument(
        "--every", type=int, default=1, help="only every K-th question and conversation"
    )
    parser.add_argument("--show", action="store_true", help="print each question's scores")
    parser.add_argument("--save", default=None, help="write every answer and score to this JSON")
    parser.add_argument(
        "--capture",
        default=None,
        help="write each synthesis input to this JSON-lines file, for bench/replay_answers.py",
    )
    parser.add_argument(
        "--pipelines",
        default="offline",
        help=f"comma-separated, of {', '.join(PIPELINES)} (default: offline)",
    )
    parser.add_argument(
        "--local-llm",
        action="store_true",
        help="start SmolLM2-135M behind llama.cpp's server from .venv-llm (make llm-deps)",
    )
    parser.add_argument(
        "--turn-timeout", type=float, default=300.0, help="seconds before a turn counts as hung"
    )
    add_check_flag(parser)
    args = parser.parse_args()
    summary = run(args)
    if args.save:
        pathlib.Path(args.save).write_text(json.dumps(summary, indent=1))
    report(summary)
    if "offline" in summary["pipelines"]:
        calibration(summary, read_jsonl("answer_questions.jsonl"))
    sys.exit(check_goals(goals(summary), check=args.check))


if __name__ == "__main__":
    main()
