"""A model following the research agents' instructions, as a responder for
:func:`tests.support.openai_server.serve_openai` (the permitted stand-in for a hosted model).

``Model()`` decides each reply from the Chat Completions request, the way a model reading its
instructions would. It tells the role by the request's system message (each agent's
instruction) and

- coordinator: calls ``search_library`` with the user's latest message; once this turn's
  ``search_library`` result is in its prompt, answers with a short text;
- search subagent: calls ``search_corpus`` with the research request of its prompt (``k`` 6),
  then ``conclude_search`` with the pages found and no gaps, or, with ``extend=True``,
  ``request_search_extension`` naming :data:`MISSING` as the missing aspect;
- synthesizer: streams an answer to whatever the question was, citing ``[n, p. N]`` with the
  number and page of evidence block 1 of its prompt (and block 2 when there is one), ending in
  a ``# Cited Sources`` section. The answer starts with :data:`ANSWER_OPENING`; with
  ``reasoning`` set, the reply is a reasoning model's: that reasoning, then the answer.

A request from no known role, or a synthesizer prompt without evidence, raises; the server then
answers 500 and records the error (``OpenAIServer.errors``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from services.agent.research.agents import (
    COORDINATOR,
    COORDINATOR_INSTRUCTION,
    SEARCH_SUBAGENT,
    SUBAGENT_INSTRUCTION,
    SYNTHESIZER_INSTRUCTION,
)
from services.agent.research.library_tools import SEARCH_CORPUS
from services.agent.research.retrieval_tools import CONCLUDE_SEARCH, REQUEST_SEARCH_EXTENSION
from services.common.adk.names import SEARCH_LIBRARY, SYNTHESIZER
from tests.support.openai_server import Reasoned, Reply, ToolCall, message_text

# Evidence block n of the synthesizer's prompt (evidence.synthesis_prompt): its number, item
# key and page.
BLOCK_RE = re.compile(r'^### \[(\d+)\] .*?"[^"\n]*" item ([A-Z0-9]{8}), p\. (\d+)', re.MULTILINE)
# What the subagent says is missing when it asks for an extension (``extend=True``).
MISSING = "how brms compares its sampler with lmer's optimizer"
EXTENSION_JUSTIFICATION = "The comparison with brms needs more reading."
# The coordinator's reply once search_library has answered (its result is the turn's answer).
COORDINATOR_DONE = "The answer above is from your library."
ANSWER_OPENING = "The passages found in your library answer this"


def role_of(body: dict[str, Any]) -> str:
    """Which agent sent the request, from its system message (each role's instruction)."""
    messages = body.get("messages") or []
    system = message_text(messages[0]) if messages and messages[0]["role"] == "system" else ""
    for role, instruction in (
        (COORDINATOR, COORDINATOR_INSTRUCTION),
        (SEARCH_SUBAGENT, SUBAGENT_INSTRUCTION),
        (SYNTHESIZER, SYNTHESIZER_INSTRUCTION),
    ):
        if instruction.splitlines()[0] in system:
            return role
    raise AssertionError(f"a request from no known role; system message: {system[:300]!r}")


def tool_names(body: dict[str, Any]) -> set[str]:
    """The names of the tools the request offers the model."""
    return {t["function"]["name"] for t in body.get("tools") or []}


def tool_messages(body: dict[str, Any], name: str) -> list[dict[str, Any]]:
    """The ``tool`` messages answering the assistant's calls of ``name``."""
    return _tool_messages(body["messages"], name)


def last_user_text(body: dict[str, Any]) -> str:
    """The text of the request's last ``user`` message ("" when there is none)."""
    users = [message_text(m) for m in body["messages"] if m["role"] == "user"]
    return users[-1] if users else ""


def _tool_messages(messages: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    ids = {
        call["id"]
        for m in messages
        if m["role"] == "assistant"
        for call in m.get("tool_calls") or []
        if call["function"]["name"] == name
    }
    return [m for m in messages if m["role"] == "tool" and m["tool_call_id"] in ids]


def _this_turn(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages from the user's latest message on: the coordinator sees the whole
    conversation, whose earlier turns hold search_library results of their own. ADK passes
    other agents' events on as ``user`` messages starting "For context:"; those are not the
    user's."""
    starts = [
        i
        for i, m in enumerate(messages)
        if m["role"] == "user" and not message_text(m).lstrip().startswith("For context:")
    ]
    return messages[starts[-1] :] if starts else messages


@dataclass
class Model:
    """Answers like a model following its instructions; ``extend`` makes the subagent ask for a
    deep-research extension instead of concluding; ``reasoning``, when set, comes before the
    synthesizer's answer as its reasoning (``reasoning_content``); ``quotes=False`` makes the
    synthesizer cite pages without quoting them, as a careless model does (its citations are
    not on their pages, so the answer is backed by the papers' quotes)."""

    extend: bool = False
    reasoning: str = ""
    quotes: bool = True

    def __call__(self, body: dict[str, Any]) -> Reply:
        role = role_of(body)
        if role == COORDINATOR:
            if _tool_messages(_this_turn(body["messages"]), SEARCH_LIBRARY):
                return COORDINATOR_DONE
            return ToolCall(SEARCH_LIBRARY, {"request": last_user_text(body)})
        if role == SEARCH_SUBAGENT:
            return self._subagent(body)
        answer = self._synthesizer(body)
        return Reasoned(self.reasoning, answer) if self.reasoning else answer

    def _subagent(self, body: dict[str, Any]) -> ToolCall:
        found = tool_messages(body, SEARCH_CORPUS)
        if not found:
            prompt = last_user_text(body)
            match = re.search(r"Research request: (.+)", prompt)
            assert match, prompt
            return ToolCall(SEARCH_CORPUS, {"query": match.group(1).strip(), "k": 6})
        results = json.loads(found[-1]["content"])["results"]
        pages = sorted({f"{r['item_key']} p. {r['page']}" for r in results})
        summary = "Passages on the request: " + ", ".join(pages) + "."
        if self.extend:
            return ToolCall(
                REQUEST_SEARCH_EXTENSION,
                {
                    "justification": EXTENSION_JUSTIFICATION,
                    "covered_summary": summary,
                    "missing_aspects": [MISSING],
                },
            )
        return ToolCall(CONCLUDE_SEARCH, {"summary": summary, "gaps": []})

    def _synthesizer(self, body: dict[str, Any]) -> str:
        blocks = BLOCK_RE.findall(last_user_text(body))
        assert blocks, "the synthesizer's prompt holds no evidence block"
        (n, key, page), *rest = blocks
        # A capable model quotes its evidence: the first citation's sentence is on its page, so
        # the answer is shown as checked (one with no citation on its page is backed by the
        # papers' own sentences, services/agent/research/grounding.py).
        if not self.quotes:
            answer = (
                f"{ANSWER_OPENING} [{n}, p. {page}]: the cited page sets out what the question "
                "asks about."
            )
            return answer + f"\n\n# Cited Sources\n[{n}] item {key}, p. {page}"
        quote = _first_sentence(last_user_text(body), int(n))
        answer = (
            f'{ANSWER_OPENING}: "{quote}" [{n}, p. {page}]; the cited page sets out what the '
            "question asks about."
        )
        if rest:
            n2, _, page2 = rest[0]
            detail = _first_sentence(last_user_text(body), int(n2))
            answer += f' Further detail: "{detail}" [{n2}, p. {page2}].'
        return answer + f"\n\n# Cited Sources\n[{n}] item {key}, p. {page}"


def _first_sentence(prompt: str, n: int) -> str:
    """The first whole sentence of evidence block ``n`` of the synthesizer's prompt."""
    body = prompt.split(f"### [{n}] ", 1)[1].split("\n", 1)[1].split("\n### [", 1)[0]
    lines = [line for line in body.splitlines() if not line.startswith(("(found by:", "[page "))]
    flat = " ".join(" ".join(lines).replace('"', "'").split())
    for sentence in re.split(r"(?<=[.!?])\s+(?=[A-Z])", flat):
        if len(sentence.split()) >= 6:
            return sentence
    return flat[:200]
