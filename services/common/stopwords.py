"""English words that say nothing about what a text is about, for the code that compares texts
by their words.

:data:`STOPWORDS` is what every such comparison skips. Each one adds, beside its code, the
words its own matching must also skip (:func:`stopwords`), because each was tuned on its own:
the library search's query words (against the retrieval benchmark, ``docs/benchmarks.md``),
the check of a citation's quote against its page, the offline model's follow-ups, question
parts and search terms, and the compactor's count of substantive words (calibrated on the
labelled dialogues of ``tests/unit/compactor/dialogues.py``). A word moved into
:data:`STOPWORDS` changes all of them: add it to the list of the matcher that needs it.
"""

from __future__ import annotations

STOPWORDS = frozenset(
    """a about an and are as at be by can do does for from how i in into is it its of on or our
    that the their then there these this to use was we what when where which who why with""".split()
)


def stopwords(extra: str) -> frozenset[str]:
    """:data:`STOPWORDS` and the whitespace-separated words of ``extra``."""
    return STOPWORDS | frozenset(extra.split())
