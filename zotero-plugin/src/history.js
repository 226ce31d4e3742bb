/**
 * A session's message list (messages.js): `fromSession(GET /sessions/{id})` rebuilds user
 * messages and one bubble per turn (intermediate events, tool calls and thoughts as steps; a
 * `pending_hitl` as the checkpoint of its turn's bubble), and the list operations the
 * controller uses (start a turn, the paused bubble, what a rewind restores).
 */
import {
  checkpointFrom,
  checkpointStep,
  createBubble,
  createUserMessage,
  joinAnswer,
} from "./bubble.js";

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
