/**
 * The controller's core: the pane's state, its listeners, and the helpers every group of
 * actions shares (notices in the pane's language, the composer, the session list, applying a
 * session, updating a bubble). The actions live beside it: session-actions.js,
 * scope-actions.js, turn-actions.js and notices.js; controller.js puts them together.
 */
import * as M from "../messages.js";
import * as S from "../scope.js";
import { DEFAULT_TITLE, sortSessions } from "./format.js";
import { infoNotice } from "./notices.js";

export const LAST_SESSION_PREF = "lastSessionID";

/** Prefs kept in memory (tests, the harness without storage). */
export function memoryPrefs(initial = {}) {
  const store = { ...initial };
  return { get: (k) => store[k], set: (k, v) => (store[k] = v), store };
}

/**
 * The state and the shared helpers (`ctx`) of one controller.
 * @param {{getClient: () => object, prefs: {get, set}, now: () => number,
 *          log: (m: string) => void, t: Function | null}} options
 */
export function createCore({ getClient, prefs, now, log, t }) {
  const listeners = new Set();
  const ctx = { alive: true, listeners, prefs, now, log };

  const state = {
    phase: "starting", // "starting" | "ready" | "offline"
    sessions: [],
    session: null, // {id, title}
    messages: [],
    loadingSession: false,
    scope: S.createScope(),
    modeChosen: false, // the user picked a scope: it no longer follows Zotero's selection
    selection: { selectedItems: [], collection: null },
    selectionSeen: false,
    readerSelection: null,
    composer: { text: "", version: 0, focus: false },
    editing: null, // {userMessageId, invocationId}
    streaming: null, // {bubbleId, kind, abort}
    notice: null,
    reveal: null, // {id, version}: the view scrolls this message into view
    imagesLoading: null, // Promise while restored image snippets fetch their bytes
  };

  const emit = (kind = "change") => {
    if (!ctx.alive) return;
    for (const fn of listeners) {
      try {
        fn(state, kind);
      } catch (err) {
        log(`listener failed: ${err?.stack || err?.message || err}`);
      }
    }
  };

  const client = () => getClient();
  const busy = () => !!state.streaming;
  const setNotice = (notice) => {
    state.notice = notice;
  };

  // The pane's notices: a Fluent message (sidebar.ftl zocrates-notice-*) with the pane's
  // localization, the English beside it without one (tests, a bare controller).
  const say = (id, english, args) => (t ? t(id, args) : english);

  const BUSY = {
    switch: "switch chats",
    new: "start a new chat",
    delete: "delete this chat",
    send: "send another question",
    checkpoint: "answer the checkpoint",
    rewind: "rewind",
    edit: "edit a question",
  };

  function blockWhileStreaming(what) {
    if (!busy()) return false;
    setNotice(
      infoNotice(
        say(
          `zocrates-notice-busy-${what}`,
          `Zocrates is still answering. Wait for it, or press Stop, before you ${BUSY[what]}.`,
        ),
      ),
    );
    emit();
    return true;
  }

  function restoreComposer(text, { focus = true } = {}) {
    state.composer = { text: String(text ?? ""), version: state.composer.version + 1, focus };
  }

  function manifestFrom(session) {
    return {
      id: session.id,
      title: session.title || DEFAULT_TITLE,
      created_at: session.created_at ?? now() / 1000,
      updated_at: session.updated_at ?? now() / 1000,
      event_count: session.event_count ?? 0,
    };
  }

  function upsertManifest(manifest) {
    const others = state.sessions.filter((s) => s.id !== manifest.id);
    const old = state.sessions.find((s) => s.id === manifest.id) || {};
    state.sessions = sortSessions([...others, { ...old, ...manifest }]);
  }

  function applySession(session) {
    const f = M.fromSession(session);
    state.session = { id: f.id, title: f.title || DEFAULT_TITLE };
    state.messages = f.messages;
    state.editing = null;
    upsertManifest({
      id: f.id,
      title: state.session.title,
      ...(f.updatedAt ? { updated_at: f.updatedAt } : {}),
    });
    prefs.set(LAST_SESSION_PREF, f.id);
    const pending = M.pendingBubble(state.messages);
    if (pending) reveal(pending.id);
  }

  function reveal(id) {
    state.reveal = { id, version: (state.reveal?.version || 0) + 1 };
  }

  function updateBubble(id, fn) {
    const index = state.messages.findIndex((m) => m.id === id);
    if (index === -1) return null;
    const updated = fn(state.messages[index]);
    const messages = state.messages.slice();
    messages[index] = updated;
    // The local user message learns its invocation id from its answer (rewind / edit need it).
    if (updated.invocationId) {
      for (let k = index - 1; k >= 0; k--) {
        if (messages[k].kind !== "user") continue;
        if (!messages[k].invocationId)
          messages[k] = { ...messages[k], invocationId: updated.invocationId };
        break;
      }
    }
    state.messages = messages;
    return updated;
  }

  return Object.assign(ctx, {
    state,
    emit,
    client,
    busy,
    setNotice,
    say,
    blockWhileStreaming,
    restoreComposer,
    manifestFrom,
    upsertManifest,
    applySession,
    reveal,
    updateBubble,
  });
}
