/**
 * Chat state: the assistant bubble of a turn, and the message list of a session.
 *
 * `applyEvent(bubble, {event, data})` folds one SSE event of POST /chat or /chat/resume into
 * a bubble and returns a new bubble (the old one is not changed):
 *
 * - `message` with kind `answer`: partial messages carry text deltas that are appended; the
 *   non-partial message that follows carries the whole text and replaces what the deltas
 *   built. Thought parts go to the steps as thoughts, whatever the kind.
 * - `message` with kind `step` / `thought`: function calls, function results (summaries), the
 *   search agents' notes and thoughts, into the collapsed steps list.
 * - `request_input`: the checkpoint card (`bubble.checkpoint`), status `paused`.
 * - `done`: `completed` (citations, and the answer when nothing streamed) or `paused`.
 * - `error`: status `error` with `{code, message}`.
 *
 * Bubble continuity: `beginResume(bubble, choice)` records the user's choice and the same
 * bubble then takes the events of the /chat/resume stream — steps and answer keep
 * accumulating, no new bubble is made.
 *
 * `fromSession(session)` rebuilds the message list of GET /sessions/{id}: user messages, and
 * one bubble per turn in which intermediate events (search subagents), tool calls and
 * thoughts are steps; a `pending_hitl` becomes the checkpoint of its turn's bubble.
 */

import { describeError } from "./errors.js";

/** @typedef {"streaming" | "paused" | "completed" | "error" | "stopped"} BubbleStatus */

let localCounter = 0;
const localId = (prefix) =>
  `${prefix}-local-${Date.now().toString(36)}-${(localCounter++).toString(36)}`;

/** A new, empty assistant bubble (status `streaming`). */
export function createBubble({ id, invocationId = "", status = "streaming" } = {}) {
  return {
    kind: "assistant",
    id: id || localId("a"),
    invocationId,
    segments: [], // answer pieces: {text, open, author}
    answer: "",
    steps: [],
    checkpoint: null, // {interruptId, invocationId, message, payload}
    decisions: [], // answered checkpoints: {interruptId, action, guidance, extensionNumber}
    resumedFrom: null, // the checkpoint a running resume answered (to restore if it fails)
    citations: [],
    status,
    error: null,
    passes: 1,
  };
}

/** A user message (text plus the scope it was sent with, as the session API's `context`). */
export function createUserMessage({
  id,
  text,
  context = null,
  invocationId = "",
  timestamp = null,
} = {}) {
  return {
    kind: "user",
    id: id || localId("u"),
    text: String(text ?? ""),
    context: context || null,
    invocationId,
    timestamp,
  };
}

function clone(b) {
  return {
    ...b,
    segments: b.segments.map((s) => ({ ...s })),
    steps: b.steps.map((s) => ({ ...s })),
    decisions: b.decisions.map((d) => ({ ...d })),
    citations: b.citations.slice(),
  };
}

function joinAnswer(segments) {
  return segments
    .map((s) => s.text)
    .filter((t) => t && t.trim())
    .join("\n\n");
}

function closeOpen(b) {
  for (const s of b.segments) s.open = false;
  for (const s of b.steps) if ("open" in s) s.open = false;
}

/** Append a delta to the open piece of `list` (matching `match`), or start one. */
function streamInto(list, match, delta, make) {
  for (let k = list.length - 1; k >= 0; k--) {
    if (list[k].open && match(list[k])) {
      list[k].text += delta;
      return;
    }
  }
  list.push({ ...make(), text: delta, open: true });
}

/** Replace the open piece with the whole text and close it, or add a closed piece. */
function finalInto(list, match, full, make) {
  for (let k = list.length - 1; k >= 0; k--) {
    if (list[k].open && match(list[k])) {
      list[k].text = full;
      list[k].open = false;
      return;
    }
  }
  if (full) list.push({ ...make(), text: full, open: false });
}

function resultStep(summary, author) {
  const step = {
    type: "result",
    name: String(summary?.name || ""),
    status: summary?.status || "success",
    author,
  };
  for (const key of [
    "count",
    "items",
    "pages",
    "title",
    "notice",
    "budget_notice",
    "message",
    "code",
  ]) {
    if (summary && summary[key] != null)
      step[key === "budget_notice" ? "budgetNotice" : key] = summary[key];
  }
  return step;
}

function applyMessage(b, data) {
  const author = data.author || "";
  const partial = !!data.partial;
  const kind = data.kind || "step";
  if (!b.invocationId && data.invocation_id) b.invocationId = data.invocation_id;
  let answerText = "";
  let thoughtText = "";
  let noteText = "";
  let hasAnswer = false;
  let hasThought = false;
  let hasNote = false;
  for (const part of data.parts || []) {
    if (part == null || typeof part !== "object") continue;
    if (typeof part.text === "string") {
      if (part.thought) {
        thoughtText += part.text;
        hasThought = true;
      } else if (kind === "answer") {
        answerText += part.text;
        hasAnswer = true;
      } else {
        noteText += part.text;
        hasNote = true;
      }
    } else if (!partial && part.function_call) {
      b.steps.push({
        type: "call",
        name: String(part.function_call.name || ""),
        args: part.function_call.args ?? {},
        author,
      });
    } else if (!partial && part.function_response) {
      b.steps.push(resultStep(part.function_response, author));
    }
  }
  const sameAuthor = (type) => (s) => s.type === type && s.author === author;
  if (hasThought) {
    const make = () => ({ type: "thought", author });
    if (partial) streamInto(b.steps, sameAuthor("thought"), thoughtText, make);
    else finalInto(b.steps, sameAuthor("thought"), thoughtText, make);
  }
  if (hasNote) {
    const make = () => ({ type: "note", author });
    if (partial) streamInto(b.steps, sameAuthor("note"), noteText, make);
    else finalInto(b.steps, sameAuthor("note"), noteText, make);
  }
  if (hasAnswer) {
    const make = () => ({ author });
    const match = (s) => s.author === author;
    if (partial) streamInto(b.segments, match, answerText, make);
    else finalInto(b.segments, match, answerText, make);
  }
}

/** The checkpoint of a `request_input` event or a session's `pending_hitl`. */
export function checkpointFrom(data) {
  if (!data || !data.interrupt_id) return null;
  return {
    interruptId: String(data.interrupt_id),
    invocationId: String(data.invocation_id || ""),
    message: data.message ?? "",
    payload: data.payload && typeof data.payload === "object" ? data.payload : {},
  };
}

function checkpointStep(cp) {
  return {
    type: "checkpoint",
    interruptId: cp.interruptId,
    extensionNumber: cp.payload.extension_number ?? null,
    maxExtensions: cp.payload.max_extensions ?? null,
    gaps: Array.isArray(cp.payload.gaps) ? cp.payload.gaps.length : 0,
  };
}

/**
 * Fold one SSE event into a bubble.
 * @param {ReturnType<typeof createBubble>} bubble
 * @param {{event: string, data: any}} ev
 * @returns a new bubble
 */
export function applyEvent(bubble, ev) {
  const b = clone(bubble);
  const data = ev?.data ?? {};
  switch (ev?.event) {
    case "message":
      applyMessage(b, data);
      if (b.status !== "error") b.status = "streaming";
      break;
    case "request_input": {
      const cp = checkpointFrom(data);
      if (!cp) break;
      closeOpen(b);
      b.checkpoint = cp;
      b.resumedFrom = null;
      if (!b.invocationId) b.invocationId = cp.invocationId;
      b.steps.push(checkpointStep(cp));
      b.status = "paused";
      break;
    }
    case "done":
      closeOpen(b);
      if (data.invocation_id && !b.invocationId) b.invocationId = data.invocation_id;
      b.resumedFrom = null;
      if (data.status === "paused") {
        b.status = "paused";
      } else {
        b.status = "completed";
        b.checkpoint = null;
        if (Array.isArray(data.citations) && data.citations.length)
          b.citations = data.citations.slice();
        // A remote model's tokens and cost for the turn; the offline model sends none.
        if (data.usage && typeof data.usage === "object") b.usage = { ...data.usage };
        if (!joinAnswer(b.segments) && data.answer)
          b.segments.push({ text: String(data.answer), open: false, author: "" });
      }
      break;
    case "error":
      closeOpen(b);
      b.status = "error";
      b.error = {
        code: data.code || "error",
        message: data.display || describeError({ code: data.code, message: data.message }),
      };
      break;
    default:
      return bubble; // unknown events (future additions) change nothing
  }
  b.answer = joinAnswer(b.segments);
  return b;
}

/** Fold several events. */
export function applyEvents(bubble, events) {
  let b = bubble;
  for (const ev of events) b = applyEvent(b, ev);
  return b;
}

/**
 * The user answered the checkpoint: the same bubble now takes the /chat/resume stream.
 * @param {{action: "extend_budget" | "synthesize", guidance?: string}} choice
 */
export function beginResume(bubble, { action, guidance = "" } = {}) {
  if (!bubble.checkpoint) throw new Error("beginResume: this bubble has no pending checkpoint");
  const b = clone(bubble);
  const cp = b.checkpoint;
  const decision = {
    type: "decision",
    interruptId: cp.interruptId,
    action,
    guidance: String(guidance || "").trim(),
    extensionNumber: cp.payload.extension_number ?? null,
  };
  b.decisions.push({ ...decision });
  b.steps.push(decision);
  b.resumedFrom = cp;
  b.checkpoint = null;
  b.status = "streaming";
  b.error = null;
  b.passes += 1;
  return b;
}

/**
 * The resume request never reached the agent (the gateway was down, the request was refused):
 * put the card back so the user can answer it again, and show why.
 */
export function abortResume(bubble, error = null) {
  if (!bubble.resumedFrom) return bubble;
  const b = clone(bubble);
  const cp = b.resumedFrom;
  b.checkpoint = cp;
  b.resumedFrom = null;
  b.decisions = b.decisions.filter((d) => d.interruptId !== cp.interruptId);
  b.steps = b.steps.filter((s) => !(s.type === "decision" && s.interruptId === cp.interruptId));
  b.passes = Math.max(1, b.passes - 1);
  b.status = "paused";
  b.error = error ? { code: error.code || "error", message: error.message || String(error) } : null;
  return b;
}

/** The user stopped the stream (abort). */
export function stopBubble(bubble) {
  const b = clone(bubble);
  closeOpen(b);
  if (b.status === "streaming") b.status = "stopped";
  b.answer = joinAnswer(b.segments);
  return b;
}

// ---------------------------------------------------------------- sessions

function appendHistoryMessage(b, m) {
  const author = m.author || "";
  const text = typeof m.text === "string" ? m.text : "";
  if (m.thought) {
    if (text) b.steps.push({ type: "thought", text, author, open: false });
    return;
  }
  if (text) {
    if (m.intermediate) b.steps.push({ type: "note", text, author, open: false });
    else b.segments.push({ text, open: false, author });
  }
  for (const call of m.tool_calls || []) {
    b.steps.push({ type: "call", name: String(call.name || ""), args: call.args ?? {}, author });
  }
  for (const result of m.tool_results || []) {
    b.steps.push({
      type: "result",
      name: String(result.name || ""),
      status: result.status || null,
      author,
    });
    // The research tool's citations (quote, verified): the marks the live turn showed.
    if (Array.isArray(result.citations) && result.citations.length)
      b.citations = result.citations.slice();
  }
  // A remote model's turn: its tokens and cost, on the turn's answer (none offline).
  if (m.usage && typeof m.usage === "object") b.usage = { ...m.usage };
}

/**
 * The message list of a formatted session (GET /sessions/{id}, POST /sessions, rewind).
 * @returns {{id, title, createdAt, updatedAt, messages: Array, pendingHitl}}
 */
export function fromSession(session) {
  const s = session || {};
  const messages = [];
  let current = null;
  for (const m of s.messages || []) {
    if (!m || typeof m !== "object") continue;
    if (m.role === "user") {
      messages.push(
        createUserMessage({
          id: m.id,
          text: m.text,
          context: m.context || null,
          invocationId: m.invocation_id || "",
          timestamp: m.timestamp ?? null,
        }),
      );
      current = null;
      continue;
    }
    const inv = m.invocation_id || "";
    if (!current || (inv && current.invocationId && inv !== current.invocationId)) {
      current = createBubble({ id: m.id, invocationId: inv, status: "completed" });
      current.timestamp = m.timestamp ?? null;
      messages.push(current);
    }
    if (!current.invocationId && inv) current.invocationId = inv;
    appendHistoryMessage(current, m);
  }
  for (const msg of messages) if (msg.kind === "assistant") msg.answer = joinAnswer(msg.segments);

  const cp = checkpointFrom(s.pending_hitl);
  if (cp) {
    let target = null;
    for (let k = messages.length - 1; k >= 0; k--) {
      const msg = messages[k];
      if (msg.kind === "assistant" && msg.invocationId === cp.invocationId) {
        target = msg;
        break;
      }
    }
    if (!target) {
      const last = messages[messages.length - 1];
      if (last && last.kind === "assistant") target = last;
      else {
        target = createBubble({ invocationId: cp.invocationId, status: "completed" });
        messages.push(target);
      }
    }
    target.checkpoint = cp;
    target.steps.push(checkpointStep(cp));
    target.status = "paused";
    if (!target.invocationId) target.invocationId = cp.invocationId;
  }
  return {
    id: s.id || "",
    title: s.title || "",
    createdAt: s.created_at ?? null,
    updatedAt: s.updated_at ?? null,
    messages,
    pendingHitl: cp,
  };
}

/** Start a turn: the user's message and the (empty, streaming) bubble that will answer it. */
export function startTurn(messages, { text, context = null }) {
  const user = createUserMessage({ text, context });
  const bubble = createBubble();
  return { messages: [...messages, user, bubble], user, bubble };
}

/** Replace the message with the same id (a bubble after applyEvent). */
export function replaceMessage(messages, updated) {
  return messages.map((m) => (m.id === updated.id ? updated : m));
}

/** The bubble that waits at a checkpoint, if any (there is at most one per session). */
export function pendingBubble(messages) {
  for (let k = messages.length - 1; k >= 0; k--) {
    const m = messages[k];
    if (m.kind === "assistant" && m.checkpoint) return m;
  }
  return null;
}

/**
 * What editing or rewinding to a user message needs: the invocation to rewind (that turn and
 * everything after it go), the text to put back in the composer, and the scope it was sent
 * with (see scope.js `scopeFromContext`). Null when the message is unknown or has no
 * invocation id (a message that was never saved).
 */
export function rewindTarget(messages, userMessageId) {
  const index = messages.findIndex((m) => m.kind === "user" && m.id === userMessageId);
  if (index === -1) return null;
  const m = messages[index];
  if (!m.invocationId) return null;
  return { index, invocationId: m.invocationId, text: m.text, context: m.context };
}

/** The messages before `index` (what the chat shows while a rewind is on its way). */
export function truncateAt(messages, index) {
  return messages.slice(0, Math.max(0, index));
}

/** Counts for the collapsed steps header ("6 steps: 4 searches, 2 reads ..."). */
export function stepSummary(bubble) {
  const calls = bubble.steps.filter((s) => s.type === "call");
  const byName = {};
  for (const c of calls) byName[c.name] = (byName[c.name] || 0) + 1;
  return {
    total: bubble.steps.length,
    calls: calls.length,
    thoughts: bubble.steps.filter((s) => s.type === "thought").length,
    byName,
    extensions: bubble.decisions.filter((d) => d.action === "extend_budget").length,
  };
}
