"""The gold data of the answer-quality benchmark, checked against the 38 real test papers.

``bench/data/answer_questions.jsonl`` (single-paper, multi-paper and abstain questions) and
``bench/data/conversations.jsonl`` (multi-turn conversations) cite files, pages and gold
sentences; these tests confirm that every citation points at a real page of a real PDF and
that every gold sentence can be found on its cited pages as ``extract_pages`` returns them.
"""

from __future__ import annotations

import collections
import functools
import json
import pathlib
import re
from collections.abc import Iterator
from typing import Any

import pytest

from services.library.pdf_text import extract_pages
from tests.support.zotero_fixture import default_papers_dir

REPO_ROOT = pathlib.Path(__file__).resolve().parents[3]
DATA = REPO_ROOT / "bench" / "data"
QUESTION_KINDS = {"single", "multi", "abstain"}
TURN_KINDS = {"switch", "new_subject"}
MIN_COVERAGE = 0.8
# Not services.common.stopwords: the benchmark's data is checked independently of the code
# it measures.
STOP_WORDS = frozenset(
    "the and for are was were with that this these those from into onto than then thus also "
    "has have had not but can may might will would should could which who whom whose what "
    "when where why how its their them they our your you his her she him all any each both "
    "such only other some more most very via per use used using one two".split()
)
_WORD_RE = re.compile(r"[^\W_]+")


@functools.lru_cache(maxsize=64)
def pages_of(file: str) -> tuple[str, ...]:
    """The extracted pages of one paper (each PDF is read once per test session)."""
    return tuple(extract_pages(default_papers_dir() / file))


@functools.lru_cache(maxsize=2048)
def page_words(file: str, page: int) -> frozenset[str]:
    return frozenset(_WORD_RE.findall(pages_of(file)[page - 1].lower()))


def content_words(text: str) -> list[str]:
    """Lower-cased alphanumeric words of 3+ characters, minus a small stop list."""
    words = _WORD_RE.findall(text.lower())
    return [word for word in words if len(word) >= 3 and word not in STOP_WORDS]


def load_jsonl(name: str) -> list[dict[str, Any]]:
    with open(DATA / name, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


@pytest.fixture(scope="module")
def questions() -> list[dict[str, Any]]:
    return load_jsonl("answer_questions.jsonl")


@pytest.fixture(scope="module")
def conversations() -> list[dict[str, Any]]:
    return load_jsonl("conversations.jsonl")


def cited_papers(
    questions: list[dict[str, Any]], conversations: list[dict[str, Any]]
) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every ``papers`` entry of both files, with a label saying where it comes from."""
    for question in questions:
        for paper in question["papers"]:
            yield question["id"], paper
    for conversation in conversations:
        for number, turn in enumerate(conversation["turns"], start=1):
            for paper in turn["papers"]:
                yield f"{conversation['id']} turn {number}", paper


def test_question_records_are_well_formed(questions: list[dict[str, Any]]) -> None:
    ids = [question["id"] for question in questions]
    assert len(ids) == len(set(ids)), [i for i, n in collections.Counter(ids).items() if n > 1]
    for question in questions:
        where = question["id"]
        assert set(question) == {"id", "kind", "question", "papers"}, where
        assert question["kind"] in QUESTION_KINDS, where
        assert isinstance(question["question"], str) and question["question"].strip(), where
        files = [paper["file"] for paper in question["papers"]]
        assert len(files) == len(set(files)), where
        if question["kind"] == "abstain":
            assert question["papers"] == [], where
            assert re.fullmatch(r"a\d{2}", where)
        elif question["kind"] == "multi":
            assert 2 <= len(files) <= 3, where
            assert re.fullmatch(r"m\d{2}", where)
        else:
            assert len(files) == 1, where


def test_kind_counts(questions: list[dict[str, Any]]) -> None:
    counts = collections.Counter(question["kind"] for question in questions)
    assert counts["single"] == 52
    assert counts["multi"] >= 12
    assert counts["abstain"] >= 12


def test_every_retrieval_question_appears_once_with_the_same_text(
    questions: list[dict[str, Any]],
) -> None:
    by_id = collections.defaultdict(list)
    for question in questions:
        by_id[question["id"]].append(question)
    retrieval = load_jsonl("retrieval_questions.jsonl")
    assert len(retrieval) == 52
    for source in retrieval:
        matches = by_id[source["id"]]
        assert len(matches) == 1, source["id"]
        assert matches[0]["kind"] == "single", source["id"]
        assert matches[0]["question"] == source["question"], source["id"]
        assert [paper["file"] for paper in matches[0]["papers"]] == [source["file"]]
    singles = {question["id"] for question in questions if question["kind"] == "single"}
    assert singles == {source["id"] for source in retrieval}


def test_conversations_are_well_formed(conversations: list[dict[str, Any]]) -> None:
    assert len(conversations) >= 12
    ids = [conversation["id"] for conversation in conversations]
    assert len(ids) == len(set(ids))
    for conversation in conversations:
        where = conversation["id"]
        assert set(conversation) == {"id", "turns"}, where
        assert re.fullmatch(r"c\d{2}", where)
        assert 2 <= len(conversation["turns"]) <= 3, where
        for number, turn in enumerate(conversation["turns"], start=1):
            assert set(turn) <= {"question", "papers", "kind"}, (where, number)
            assert isinstance(turn["question"], str) and turn["question"].strip()
            assert turn["papers"], (where, number)
            if number == 1:
                assert "kind" not in turn, where
            elif "kind" in turn:
                assert turn["kind"] in TURN_KINDS, (where, number)
    kinds = collections.Counter(
        turn.get("kind") for conversation in conversations for turn in conversation["turns"]
    )
    assert kinds["new_subject"] >= 1
    assert kinds["switch"] >= 2


def test_cited_files_and_pages_exist(
    questions: list[dict[str, Any]], conversations: list[dict[str, Any]]
) -> None:
    available = {pdf.name for pdf in default_papers_dir().glob("*.pdf")}
    for where, paper in cited_papers(questions, conversations):
        assert set(paper) == {"file", "pages", "gold"}, where
        assert paper["file"] in available, (where, paper["file"])
        pages = paper["pages"]
        assert pages and pages == sorted(set(pages)), (where, pages)
        count = len(pages_of(paper["file"]))
        for page in pages:
            assert isinstance(page, int) and 1 <= page <= count, (where, paper["file"], page)


def test_gold_sentences_are_on_the_cited_pages(
    questions: list[dict[str, Any]], conversations: list[dict[str, Any]]
) -> None:
    failures = []
    for where, paper in cited_papers(questions, conversations):
        file, gold = paper["file"], paper["gold"]
        assert 1 <= len(gold) <= 3, where
        count = len(pages_of(file))
        nearby = {p for page in paper["pages"] for p in (page - 1, page, page + 1)}
        pooled = frozenset().union(*(page_words(file, p) for p in nearby if 1 <= p <= count))
        for sentence in gold:
            assert isinstance(sentence, str) and sentence == sentence.strip(), where
            words = content_words(sentence)
            assert len(words) >= 3, (where, sentence)
            found = sum(word in pooled for word in words) / len(words)
            if found < MIN_COVERAGE:
                missing = sorted({word for word in words if word not in pooled})
                failures.append(f"{where} {file} {found:.0%} missing {missing}: {sentence}")
    assert not failures, "\n".join(failures)
