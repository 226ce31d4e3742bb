import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { buildCardModel } from "../src/card.js";
import {
  abortResume,
  applyEvent,
  applyEvents,
  beginResume,
  createBubble,
  fromSession,
  pendingBubble,
  replaceMessage,
  rewindTarget,
  startTurn,
  stepSummary,
  stopBubble,
  truncateAt,
} from "../src/messages.js";
import { scopeFromContext } from "../src/scope.js";
import {
  ANSWER,
  CITATIONS,
  chatStreamPaused,
  INVOCATION,
  msg,
  PAYLOAD,
  pausedSession,
  resumeStreamCompleted,
} from "./fixtures.js";

const types = (b) => b.steps.map((s) => s.type);

describe("one stream into a bubble", () => {
  test("a turn that pauses: steps collapse, thoughts are not doubled, the card is set", () => {
    const b = applyEvents(createBubble(), chatStreamPaused());
    assert.equal(b.status, "paused");
    assert.equal(b.answer, "");
    assert.equal(b.invocationId, INVOCATION);
    assert.deepEqual(types(b), ["call", "thought", "call", "result", "checkpoint"]);
    assert.equal(b.steps[1].text, "Look for lme4 optimizers.");
    assert.equal(b.steps[1].open, false);
    assert.deepEqual(b.steps[0], {
      type: "call",
      name: "search_library",
      args: { request: PAYLOAD.request },
      author: "coordinator",
    });
    assert.equal(b.steps[3].count, 5);
    assert.equal(b.steps[3].budgetNotice, "3 retrieval calls left of 10.");
    assert.equal(b.checkpoint.interruptId, "interrupt_ext_1");
    assert.equal(b.checkpoint.invocationId, INVOCATION);
    assert.deepEqual(b.checkpoint.payload, PAYLOAD);
    assert.equal(b.steps[4].extensionNumber, 1);
  });

  test("partial answer deltas append; the full message replaces them", () => {
    let b = createBubble();
    b = applyEvent(
      b,
      msg({ author: "synthesizer", kind: "answer", partial: true, parts: [{ text: "Hel" }] }),
    );
    b = applyEvent(
      b,
      msg({ author: "synthesizer", kind: "answer", partial: true, parts: [{ text: "lo wor" }] }),
    );
    assert.equal(b.answer, "Hello wor");
    assert.equal(b.segments[0].open, true);
    b = applyEvent(
      b,
      msg({ author: "synthesizer", kind: "answer", parts: [{ text: "Hello, world." }] }),
    );
    assert.equal(b.answer, "Hello, world.");
    assert.equal(b.segments.length, 1);
    assert.equal(b.segments[0].open, false);
  });

  test("answer texts of separate model calls are kept as separate paragraphs", () => {
    const b = applyEvents(createBubble(), [
      msg({
        author: "coordinator",
        kind: "answer",
        parts: [{ text: "I'll search your library." }],
      }),
      msg({ author: "synthesizer", kind: "answer", partial: true, parts: [{ text: "Answer " }] }),
      msg({ author: "synthesizer", kind: "answer", partial: true, parts: [{ text: "text" }] }),
      msg({ author: "synthesizer", kind: "answer", parts: [{ text: "Answer text." }] }),
    ]);
    assert.equal(b.answer, "I'll search your library.\n\nAnswer text.");
  });

  test("thought parts of an answer message go to the steps", () => {
    const b = applyEvent(
      createBubble(),
      msg({
        author: "coordinator",
        kind: "answer",
        parts: [
          { text: "Planning.", thought: true },
          { text: "Done.", thought: false },
        ],
      }),
    );
    assert.equal(b.answer, "Done.");
    assert.deepEqual(
      b.steps.map((s) => [s.type, s.text]),
      [["thought", "Planning."]],
    );
  });

  test("step-kind text is a note, streamed like the answer", () => {
    const b = applyEvents(createBubble(), [
      msg({
        author: "search_subagent",
        kind: "step",
        partial: true,
        parts: [{ text: "Searching " }],
      }),
      msg({ author: "search_subagent", kind: "step", partial: true, parts: [{ text: "now" }] }),
      msg({ author: "search_subagent", kind: "step", parts: [{ text: "Searching now." }] }),
    ]);
    assert.deepEqual(
      b.steps.map((s) => [s.type, s.text, s.open]),
      [["note", "Searching now.", false]],
    );
    assert.equal(b.answer, "");
  });

  test("function parts of partial events are not counted twice", () => {
    const call = { function_call: { name: "search_corpus", args: { query: "x" } } };
    const b = applyEvents(createBubble(), [
      msg({ author: "search_subagent", kind: "step", partial: true, parts: [call] }),
      msg({ author: "search_subagent", kind: "step", parts: [call] }),
    ]);
    assert.deepEqual(types(b), ["call"]);
  });

  test("done without a streamed answer takes done.answer; citations are kept", () => {
    const b = applyEvent(createBubble(), {
      event: "done",
      data: {
        status: "completed",
        invocation_id: "i1",
        answer: "Short [1].",
        citations: CITATIONS,
      },
    });
    assert.equal(b.status, "completed");
    assert.equal(b.answer, "Short [1].");
    assert.deepEqual(b.citations, CITATIONS);
    assert.equal(b.invocationId, "i1");
  });

  test("a remote model's done carries the turn's tokens and cost; the offline one none", () => {
    const usage = {
      model: "openai/gpt-4o-mini",
      input_tokens: 1234,
      output_tokens: 210,
      cost_usd: 0.00031,
    };
    const remote = applyEvent(createBubble(), {
      event: "done",
      data: { status: "completed", invocation_id: "i1", answer: "A [1].", usage },
    });
    assert.deepEqual(remote.usage, usage);
    assert.notEqual(remote.usage, usage);
    const offline = applyEvent(createBubble(), {
      event: "done",
      data: { status: "completed", invocation_id: "i2", answer: "A [1].", usage: null },
    });
    assert.equal(offline.usage ?? null, null);
    const reloaded = fromSession({
      id: "s",
      messages: [
        { id: "u1", role: "user", text: "Q", invocation_id: "i1" },
        {
          id: "a1",
          role: "assistant",
          author: "synthesizer",
          text: "A",
          invocation_id: "i1",
          usage,
        },
      ],
    });
    assert.deepEqual(reloaded.messages[1].usage, usage);
  });

  test("an error event ends the bubble with an actionable message", () => {
    let b = applyEvent(
      createBubble(),
      msg({ author: "synthesizer", kind: "answer", partial: true, parts: [{ text: "Par" }] }),
    );
    b = applyEvent(b, {
      event: "error",
      data: { status: "error", code: "stream_interrupted", message: "" },
    });
    assert.equal(b.status, "error");
    assert.equal(b.error.code, "stream_interrupted");
    assert.match(b.error.message, /connection to Zocrates was lost/);
    assert.equal(b.answer, "Par");
    assert.equal(b.segments[0].open, false);
    const shown = applyEvent(createBubble(), {
      event: "error",
      data: { code: "lock_lost", message: "m", display: "Shown." },
    });
    assert.equal(shown.error.message, "Shown.");
  });

  test("applyEvent never changes the bubble it is given; unknown events are ignored", () => {
    const before = applyEvents(createBubble(), chatStreamPaused().slice(0, 3));
    const snapshot = JSON.stringify(before);
    const after = applyEvent(before, chatStreamPaused()[3]);
    assert.equal(JSON.stringify(before), snapshot);
    assert.notEqual(after, before);
    assert.equal(applyEvent(before, { event: "ping", data: {} }), before);
  });

  test("stopping a stream closes what was open", () => {
    let b = applyEvent(
      createBubble(),
      msg({ author: "synthesizer", kind: "answer", partial: true, parts: [{ text: "Half" }] }),
    );
    b = stopBubble(b);
    assert.equal(b.status, "stopped");
    assert.equal(b.segments[0].open, false);
    assert.equal(b.answer, "Half");
  });
});

describe("bubble continuity across /chat/resume", () => {
  test("a resume continues the same bubble: steps and answer accumulate", () => {
    const paused = applyEvents(createBubble(), chatStreamPaused());
    const stepsBefore = paused.steps.length;
    let b = beginResume(paused, { action: "extend_budget", guidance: "  focus on brms  " });
    assert.equal(b.id, paused.id);
    assert.equal(b.status, "streaming");
    assert.equal(b.checkpoint, null);
    assert.deepEqual(b.decisions, [
      {
        type: "decision",
        interruptId: "interrupt_ext_1",
        action: "extend_budget",
        guidance: "focus on brms",
        extensionNumber: 1,
      },
    ]);
    const resume = resumeStreamCompleted();
    // mid-stream: the partial deltas so far
    const mid = applyEvents(b, resume.slice(0, 4));
    assert.equal(mid.answer, ANSWER.slice(0, ANSWER.indexOf("brms compiles")));
    b = applyEvents(b, resume);
    assert.equal(b.id, paused.id);
    assert.equal(b.status, "completed");
    assert.equal(b.answer, ANSWER, "the full message replaced the deltas (no doubled text)");
    assert.deepEqual(b.citations, CITATIONS);
    assert.equal(b.passes, 2);
    assert.deepEqual(types(b).slice(0, stepsBefore), types(paused));
    assert.deepEqual(types(b).slice(stepsBefore), ["decision", "call", "result", "result"]);
    assert.deepEqual(stepSummary(b), {
      total: 9,
      calls: 3,
      thoughts: 1,
      byName: { search_library: 1, search_corpus: 1, read_document: 1 },
      extensions: 1,
    });
  });

  test("two extensions then synthesis, all in one bubble", () => {
    const second = {
      ...PAYLOAD,
      extension_number: 2,
      ceilings: PAYLOAD.next_ceilings,
      next_ceilings: { budget: 20, word_ceiling: 15000, max_chunks: 25 },
    };
    let b = applyEvents(createBubble(), chatStreamPaused());
    b = beginResume(b, { action: "extend_budget" });
    b = applyEvents(b, [
      msg({
        author: "search_subagent",
        kind: "step",
        parts: [{ function_call: { name: "search_corpus", args: { query: "brms" } } }],
      }),
      {
        event: "request_input",
        data: {
          interrupt_id: "interrupt_ext_2",
          invocation_id: INVOCATION,
          message: "again",
          payload: second,
        },
      },
      {
        event: "done",
        data: { status: "paused", invocation_id: INVOCATION, answer: "", citations: [] },
      },
    ]);
    assert.equal(b.status, "paused");
    assert.equal(b.checkpoint.interruptId, "interrupt_ext_2");
    assert.equal(buildCardModel(b.checkpoint).badge, "Deep Research: Extension 2 of 2");
    b = beginResume(b, { action: "synthesize" });
    b = applyEvents(b, resumeStreamCompleted().slice(2));
    assert.equal(b.status, "completed");
    assert.equal(b.answer, ANSWER);
    assert.equal(b.passes, 3);
    assert.deepEqual(
      b.decisions.map((d) => [d.interruptId, d.action]),
      [
        ["interrupt_ext_1", "extend_budget"],
        ["interrupt_ext_2", "synthesize"],
      ],
    );
    assert.equal(b.steps.filter((s) => s.type === "checkpoint").length, 2);
  });

  test("a resume that never started puts the card back", () => {
    const paused = applyEvents(createBubble(), chatStreamPaused());
    const resumed = beginResume(paused, { action: "synthesize" });
    const back = abortResume(resumed, { code: "gateway_down", message: "Zocrates is not running" });
    assert.equal(back.status, "paused");
    assert.deepEqual(back.checkpoint, paused.checkpoint);
    assert.deepEqual(back.decisions, []);
    assert.deepEqual(types(back), types(paused));
    assert.equal(back.error.code, "gateway_down");
    assert.equal(abortResume(paused), paused);
    assert.throws(
      () => beginResume(createBubble(), { action: "synthesize" }),
      /no pending checkpoint/,
    );
  });
});

describe("sessions from GET /sessions/{id}", () => {
  test("a paused turn, reloaded after a restart, shows the card again", () => {
    const view = fromSession(pausedSession());
    assert.equal(view.id, "session-1726000000");
    assert.equal(view.title, "lmer optimizers");
    assert.deepEqual(
      view.messages.map((m) => m.kind),
      ["user", "assistant"],
    );
    const [user, bubble] = view.messages;
    assert.equal(user.text, PAYLOAD.request);
    assert.equal(user.invocationId, INVOCATION);
    assert.equal(bubble.status, "paused");
    assert.equal(bubble.checkpoint.interruptId, "interrupt_ext_1");
    assert.equal(bubble.invocationId, INVOCATION);
    assert.deepEqual(types(bubble), ["call", "thought", "call", "result", "checkpoint"]);
    assert.equal(bubble.answer, "");
    assert.equal(pendingBubble(view.messages), bubble);
    assert.deepEqual(view.pendingHitl, bubble.checkpoint);

    const card = buildCardModel(bubble.checkpoint);
    assert.equal(card.badge, "Deep Research: Extension 1 of 2");
    assert.equal(card.primary.label, "Grant Deep Research Extension (+5 calls, +3,750 words)");

    // and the reloaded bubble resumes like a live one
    let b = beginResume(bubble, { action: "extend_budget", guidance: "brms" });
    b = applyEvents(b, resumeStreamCompleted());
    assert.equal(b.id, bubble.id);
    assert.equal(b.status, "completed");
    assert.equal(b.answer, ANSWER);
    assert.equal(pendingBubble(replaceMessage(view.messages, b)), null);
  });

  test("completed turns: intermediate events are steps of their turn's bubble", () => {
    const session = {
      id: "s",
      title: "t",
      messages: [
        { id: "u1", role: "user", text: "Q1", invocation_id: "i1", intermediate: false },
        {
          id: "a1",
          role: "assistant",
          author: "coordinator",
          text: "",
          invocation_id: "i1",
          intermediate: false,
          tool_calls: [{ name: "search_library", args: {} }],
        },
        {
          id: "a2",
          role: "assistant",
          author: "search_subagent",
          text: "Found two papers.",
          invocation_id: "i1",
          intermediate: true,
        },
        {
          id: "a3",
          role: "assistant",
          author: "search_subagent",
          text: "",
          invocation_id: "i1",
          intermediate: true,
          tool_results: [{ name: "search_corpus" }],
        },
        {
          id: "a4",
          role: "assistant",
          author: "synthesizer",
          text: ANSWER,
          invocation_id: "i1",
          intermediate: false,
        },
        {
          id: "a5",
          role: "assistant",
          author: "coordinator",
          text: "",
          invocation_id: "i1",
          intermediate: false,
          tool_results: [{ name: "search_library" }],
        },
        { id: "u2", role: "user", text: "Q2", invocation_id: "i2", intermediate: false },
        {
          id: "b1",
          role: "assistant",
          author: "coordinator",
          text: "Hello again.",
          invocation_id: "i2",
          intermediate: false,
        },
      ],
      pending_hitl: null,
    };
    const view = fromSession(session);
    assert.deepEqual(
      view.messages.map((m) => `${m.kind}:${m.id}`),
      ["user:u1", "assistant:a1", "user:u2", "assistant:b1"],
    );
    const first = view.messages[1];
    assert.equal(first.answer, ANSWER);
    assert.equal(first.status, "completed");
    assert.deepEqual(
      first.steps.map((s) => `${s.type}:${s.name || s.text}`),
      [
        "call:search_library",
        "note:Found two papers.",
        "result:search_corpus",
        "result:search_library",
      ],
    );
    assert.equal(view.messages[3].answer, "Hello again.");
    assert.equal(view.pendingHitl, null);
    assert.equal(pendingBubble(view.messages), null);
  });

  test("a reloaded turn keeps its citations' quotes and checks", () => {
    const citations = [
      {
        n: 1,
        item_key: "K1",
        title: "T",
        page: 10,
        quote: "We choose d by KPSS tests.",
        verified: false,
        found_on_page: 11,
      },
    ];
    const view = fromSession({
      id: "s",
      messages: [
        { id: "u1", role: "user", text: "Q1", invocation_id: "i1" },
        {
          id: "a4",
          role: "assistant",
          author: "synthesizer",
          text: '"We choose d by KPSS tests." [1, p. 10]',
          invocation_id: "i1",
        },
        {
          id: "a5",
          role: "assistant",
          author: "coordinator",
          text: "",
          invocation_id: "i1",
          tool_results: [{ name: "search_library", citations }],
        },
      ],
    });
    const bubble = view.messages[1];
    assert.deepEqual(bubble.citations, citations);
    assert.notEqual(bubble.citations, citations); // a copy, not the response's array
    // A result without citations leaves the bubble's alone.
    const plain = fromSession({
      messages: [
        {
          id: "a1",
          role: "assistant",
          text: "x",
          invocation_id: "i",
          tool_results: [{ name: "search_corpus" }],
        },
      ],
    });
    assert.deepEqual(plain.messages[0].citations, []);
  });

  test("a pending checkpoint with no assistant message yet gets its own bubble", () => {
    const s = pausedSession();
    s.messages = s.messages.slice(0, 1);
    const view = fromSession(s);
    assert.deepEqual(
      view.messages.map((m) => m.kind),
      ["user", "assistant"],
    );
    assert.equal(view.messages[1].checkpoint.interruptId, "interrupt_ext_1");
    assert.equal(view.messages[1].status, "paused");
  });

  test("messages of another invocation without a user message start a new bubble", () => {
    const view = fromSession({
      messages: [
        { id: "a", role: "assistant", text: "one", invocation_id: "i1" },
        { id: "b", role: "assistant", text: "two", invocation_id: "i2" },
      ],
    });
    assert.deepEqual(
      view.messages.map((m) => m.answer),
      ["one", "two"],
    );
    assert.deepEqual(fromSession(null).messages, []);
  });
});

describe("turns, rewind and edit", () => {
  test("startTurn adds the user's message and a streaming bubble", () => {
    const { messages, user, bubble } = startTurn([], { text: "Why?", context: { snippets: [] } });
    assert.deepEqual(messages, [user, bubble]);
    assert.equal(bubble.status, "streaming");
    assert.equal(user.text, "Why?");
    const next = replaceMessage(messages, applyEvent(bubble, chatStreamPaused()[0]));
    assert.equal(next[1].steps.length, 1);
    assert.equal(messages[1].steps.length, 0);
  });

  test("rewinding to a user message gives its invocation, text and scope", () => {
    const view = fromSession(pausedSession());
    const target = rewindTarget(view.messages, "u1");
    assert.equal(target.invocationId, INVOCATION);
    assert.equal(target.text, PAYLOAD.request);
    assert.equal(target.index, 0);
    const scope = scopeFromContext(target.context);
    assert.equal(scope.mode, "items");
    assert.deepEqual(scope.items, [{ item_key: "ABCD2345", title: "lme4" }]);
    assert.deepEqual(scope.snippets, [
      { text: "bobyqa is the default", item_key: "ABCD2345", page: 3, title: "lme4" },
    ]);
    assert.deepEqual(truncateAt(view.messages, target.index), []);
    assert.equal(rewindTarget(view.messages, "nope"), null);
    const { messages, user } = startTurn([], { text: "unsaved" });
    assert.equal(rewindTarget(messages, user.id), null, "a message never saved has no invocation");
  });
});
