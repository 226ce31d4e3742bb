"""The decision state: completed turns serialized as the dialogue the decision model reads.

Turns themselves (what counts as one, the prior compaction, the coordinator's prompt size) are
read from session events by :mod:`services.common.adk.turns`, which the agent shares.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from services.common.adk.turns import Turn, clip_text

CHARS_PER_TOKEN = 4
DECISION_STATE_TOKENS = 500  # the whole serialized decision state (docs/compaction.md, step 2)


@dataclass(frozen=True, slots=True)
class DecisionState:
    """What the decision model reads: turns before N and turn N, as serial dialogue."""

    earlier_discussion: str
    latest_turn: str


def serialize_turn(turn: Turn, *, max_chars: int | None = None) -> str:
    """``**User**: ...\\n**Assistant**: ...``, cut to ``max_chars`` (the answer first)."""
    user = " ".join(turn.user_text.split())
    assistant = " ".join(turn.assistant_text.split())
    text = f"**User**: {user}\n**Assistant**: {assistant}"
    if max_chars is None or len(text) <= max_chars:
        return text
    head = f"**User**: {user}\n**Assistant**: "
    room = max_chars - len(head)
    if room >= 40:
        return head + clip_text(assistant, room)
    user_room = max(1, max_chars - len("**User**: \n**Assistant**: …") - 20)
    return f"**User**: {clip_text(user, user_room)}\n**Assistant**: {clip_text(assistant, 20)}"


def serialize_dialogue(turns: Iterable[Turn]) -> str:
    """Turns as serial dialogue, one blank line between turns."""
    return "\n\n".join(serialize_turn(t) for t in turns)


def decision_state(
    turns: Sequence[Turn], *, max_tokens: int = DECISION_STATE_TOKENS
) -> DecisionState:
    """Turns 1..N-1 as ``earlier_discussion`` and turn N as ``latest_turn``, together within
    ``max_tokens`` (4 characters a token): turn N is kept whole when it fits (else its answer
    is cut), and the earlier turns are dropped oldest first, the newest of them cut if it
    alone does not fit."""
    if not turns:
        return DecisionState("", "")
    budget = max(0, max_tokens) * CHARS_PER_TOKEN
    latest = serialize_turn(turns[-1], max_chars=budget)
    room = budget - len(latest) - 2
    kept: list[str] = []
    for turn in reversed(turns[:-1]):
        text = serialize_turn(turn)
        if len(text) <= room:
            kept.append(text)
            room -= len(text) + 2
            continue
        if not kept and room >= 80:
            kept.append(serialize_turn(turn, max_chars=room))
        break
    return DecisionState("\n\n".join(reversed(kept)), latest)
