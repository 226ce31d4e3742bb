"""Which query words keyword search keeps on a large library."""

from __future__ import annotations

from services.agent.library import terms


def test_small_libraries_keep_every_word() -> None:
    words = ["model", "optimizer", "mixed", *(f"w{i}" for i in range(12))]
    assert terms.select_words(words, {"model": 900}, total=1000) == words


def test_large_libraries_drop_common_words_and_keep_the_rarest_first() -> None:
    total = 100_000
    df = {"model": 58_000, "linear": 23_000, "optimizer": 4_000, "bobyqa": 300, "mixed": 5_000}
    kept = terms.select_words(["model", "linear", "optimizer", "bobyqa", "mixed"], df, total)
    assert kept == ["bobyqa", "optimizer", "mixed"]


def test_a_query_of_only_common_words_keeps_its_two_rarest() -> None:
    df = {"the": 97_000, "model": 58_000, "data": 70_000}
    assert terms.select_words(["the", "model", "data"], df, 100_000) == ["model", "data"]


def test_at_most_ten_words() -> None:
    words = [f"w{i}" for i in range(20)]
    assert len(terms.select_words(words, {}, 100_000)) == terms.MAX_QUERY_WORDS


def test_tokens_split_like_unicode61() -> None:
    assert terms.tokens("Derivative-free BOBYQA, l'optimiseur n°2") == {
        "derivative",
        "free",
        "bobyqa",
        "l",
        "optimiseur",
        "n",
        "2",
    }
    counts = terms.document_frequencies(["a b b", "b c"])
    assert counts == {"a": 1, "b": 2, "c": 1}
