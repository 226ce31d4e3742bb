"""Token counts estimated from characters, for fitting prompts to a local model's window.

About three characters a token for English prose with numbers and names (SmolLM2's and Llama's
tokenizers give 3.5-4.5 on papers): an over-count leaves room and never overflows the window.
The agent's writer (services/agent/research/grounding.py) and the compactor's summarizer fit
their prompts with it.
"""

from __future__ import annotations

FIT_CHARS_PER_TOKEN = 3.0


def fit_tokens(text: str) -> int:
    """The tokens ``text`` is counted as when it must fit a window (an over-count)."""
    return int(len(text) / FIT_CHARS_PER_TOKEN) + 1


def fit_chars(tokens: int) -> int:
    """The characters that ``tokens`` tokens of a window hold, by the same count."""
    return int(tokens * FIT_CHARS_PER_TOKEN)
