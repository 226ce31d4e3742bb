/**
 * The chat pane's state and actions, without any DOM: sessions (list, open, new, rename,
 * delete; the first chat of a user who has none, made once: first-session.js), the scope
 * chooser and pinned snippets (passages and images), sending a question and folding its stream
 * into the assistant bubble, the checkpoint card's grant / synthesize (the resumed stream goes
 * on in the SAME bubble), rewind and edit (the turn's prompt, scope and snippets come back),
 * and notices that say what to do when the gateway is down, the token is wrong or a 409
 * arrives. The view (view.js) renders `state` whenever a listener is called.
 *
 * Everything outside is injected: `getClient()` (api.js client), `prefs` ({get, set}) and the
 * clock, so the controller runs under node --test with a fake client.
 */
import { ACTIONS, buildCardModel, resumeBody } from "../card.js";
import { Codes, describeError, isAbortError } from "../errors.js";
import * as M from "../messages.js";
import * as S from "../scope.js";
import { createSessionStarter } from "./first-session.js";
import { DEFAULT_TITLE, sortSessions, titleFromPrompt } from "./format.js";

export const LAST_SESSION_PREF = "lastSessionID";

/** What the notice offers for each error code (the view renders these as buttons). */
export const NOTICE_ACTIONS = Object.freeze({
  [Codes.GATEWAY_DOWN]: ["retry", "settings"],
  [Codes.TOKEN_MISSING]: ["retry", "settings"],
  [Codes.UNAUTHORIZED]: ["retry", "settings"],
  host_not_allowed: ["settings"],
  forbidden: ["settings"],
  [Codes.CHECKPOINT_PENDING]: ["show-card", "discard-paused"],
  [Codes.SESSION_BUSY]: ["retry"],
  [Codes.STALE_INTERRUPT]: ["reload"],
  [Codes.SESSION_NOT_FOUND]: ["new-chat"],
  [Codes.STREAM_INTERRUPTED]: ["reload"],
  starting_up: ["retry"],
  maintenance_running: ["retry"],
  sessions_unavailable: ["retry"],
  sessions_timeout: ["retry"],
});

/** A notice from an error (a GatewayError, an SSE error's data, or any Error). */
export function noticeFrom(error, extra = {}) {
  const code = error?.code || "error";
  const message = error?.display || error?.message || describeError(error || {});
  return {
    level: "error",
    code,
    message,
    status: error?.status || error?.http_status || 0,
    actions: [...(NOTICE_ACTIONS[code] || [])],
    ...extra,
  };
}

export function infoNotice(message, extra = {}) {
  return { level: "info", code: "info", message, status: 0, actions: [], ...extra };
}

/** Prefs kept in memory (tests, the harness without storage). */
export function memoryPrefs(initial = {}) {
  const store = { ...initial };
  return { get: (k) => store[k], set: (k, v) => (store[k] = v), store };
}

/**
 * The scope to restore for a rewound or edited message: the turn's mode, items, collection and
 * snippets; what the turn did not have comes from the current Zotero selection, so the chooser
 * keeps its other options.
 */
export function restoredScope(context, selection = {}) {
  const fromTurn = S.scopeFromContext(context);
  const current = S.scopeFromSelection(null, selection);
  return S.createScope({
    mode: fromTurn.mode,
    items: fromTurn.items.length ? fromTurn.items : current.items,
    collection: fromTurn.collection || current.collection,
    snippets: fromTurn.snippets,
  });
}

/** The user message a bubble answers (the one right before it). */
export function userMessageFor(messages, bubbleId) {
  const index = messages.findIndex((m) => m.id === bubbleId);
  for (let k = index - 1; k >= 0; k--) if (messages[k].kind === "user") return messages[k];
  return null;
}

/**
 * @param {{getClient: () => object, prefs?: {get, set}, now?: () => number, log?: (m: string) => void,
 *          AbortController?: typeof AbortController, firstSession?: Function}} options
 *   AbortController: Zotero's plugin sandbox has none of its own; the pane passes the window's.
 *   firstSession: the app's one starter (first-session.js), shared by every window's pane.
 */
export function createChatController({
  getClient,
  prefs = memoryPrefs(),
  now = () => Date.now(),
  log = () => {},
  AbortController: Abort = globalThis.AbortController,
  t = null,
  firstSession = createSessionStarter(),
} = {}) {
  if (typeof getClient !== "function")
    throw new TypeError("createChatController needs getClient()");
  const listeners = new Set();
  let alive = true;

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
    if (!alive) return;
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

  /**
   * Open a stream and fold its events into the bubble. Returns "streamed", "stopped" or
   * "refused" (the gateway did not accept the request: `onRefused` runs, a notice is set).
   */
  async function runStream(bubbleId, kind, start, { onRefused = () => {}, retry = null } = {}) {
    const abort = new Abort();
    state.streaming = { bubbleId, kind, abort };
    emit();
    let stream;
    try {
      stream = await start(abort.signal);
    } catch (err) {
      state.streaming = null;
      if (isAbortError(err)) {
        updateBubble(bubbleId, M.stopBubble);
        emit();
        return "stopped";
      }
      onRefused(err);
      setNotice(noticeFrom(err, retry ? { retry } : {}));
      emit();
      return "refused";
    }
    try {
      for await (const ev of stream) {
        const b = updateBubble(bubbleId, (bubble) => M.applyEvent(bubble, ev));
        if (ev.event === "request_input" && b) reveal(b.id);
        emit(ev.event === "message" ? "stream" : "change");
      }
    } catch (err) {
      if (isAbortError(err)) updateBubble(bubbleId, M.stopBubble);
      else {
        updateBubble(bubbleId, (b) =>
          M.applyEvent(b, {
            event: "error",
            data: { code: Codes.STREAM_INTERRUPTED, message: String(err?.message || err) },
          }),
        );
      }
    }
    if (state.streaming?.bubbleId === bubbleId) state.streaming = null;
    const sid = state.session?.id;
    if (sid) upsertManifest({ id: sid, updated_at: now() / 1000 });
    emit();
    return "streamed";
  }

  /** Open the first chat (the app's starter makes it once, or finds the one made meanwhile). */
  async function openFirstSession() {
    const { sessions, created } = await firstSession(client());
    state.sessions = sortSessions([...state.sessions, ...sessions].filter(unique));
    state.phase = "ready";
    if (busy()) {
      emit();
      return false;
    }
    if (created) {
      applySession(created);
      setNotice(null);
      emit();
      return true;
    }
    return controller.openSession(state.sessions[0].id);
  }

  const unique = (s, k, all) => all.findIndex((x) => x.id === s.id) === k;

  /**
   * Fetch the bytes of the image snippets a restored scope names by sha256 (rewind, edit): the
   * chips show their thumbnails, and send waits for them. An image that cannot come back is
   * unpinned, with a notice.
   */
  function loadImages() {
    const sessionId = state.session?.id;
    const wanted = state.scope.snippets.filter(S.needsImageData);
    if (!sessionId || !wanted.length) return null;
    const run = (async () => {
      let lost = 0;
      for (const snippet of wanted) {
        let image = null;
        try {
          image = await client().getImage(sessionId, snippet.image.sha256);
        } catch (err) {
          log(`image ${snippet.image.sha256.slice(0, 12)}: ${err?.code || err?.message || err}`);
        }
        const index = state.scope.snippets.indexOf(snippet);
        if (index === -1) continue; // unpinned meanwhile, or another scope restored
        if (image?.data) {
          state.scope = S.replaceSnippet(state.scope, index, S.withImageData(snippet, image));
        } else {
          state.scope = S.removeSnippet(state.scope, index);
          lost += 1;
        }
        emit();
      }
      if (lost) {
        setNotice(
          infoNotice(
            say(
              "zocrates-notice-image-lost",
              "An image pinned to that question could not be brought back; pin it again from the reader.",
              { count: lost },
            ),
          ),
        );
        emit();
      }
    })().finally(() => {
      if (state.imagesLoading === run) state.imagesLoading = null;
    });
    state.imagesLoading = run;
    return run;
  }

  const controller = {
    get state() {
      return state;
    },

    subscribe(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },

    /** Load the session list and open the last used chat (or the newest); a user without
     * any chat gets a first one (made once, first-session.js). */
    async init() {
      state.phase = "starting";
      setNotice(null);
      emit();
      try {
        const sessions = await client().listSessions();
        if (!sessions.length) {
          await openFirstSession();
          return;
        }
        state.sessions = sortSessions(sessions);
        state.phase = "ready";
        const last = prefs.get(LAST_SESSION_PREF);
        const pick = state.sessions.find((s) => s.id === last) || state.sessions[0];
        await controller.openSession(pick.id);
      } catch (err) {
        state.phase = "offline";
        setNotice(noticeFrom(err, { retry: () => controller.init() }));
        emit();
      }
    },

    /** The pane was shown (opened from its rail, the View menu or the shortcut): a user who
     * deleted every chat gets a fresh one, as when a window opens. */
    async showing() {
      if (state.phase !== "ready" || state.session || busy() || state.loadingSession) return false;
      try {
        return await openFirstSession();
      } catch (err) {
        setNotice(noticeFrom(err, { retry: () => controller.showing() }));
        emit();
        return false;
      }
    },

    async refreshSessions() {
      try {
        state.sessions = sortSessions(await client().listSessions());
        emit();
      } catch (err) {
        setNotice(noticeFrom(err, { retry: () => controller.refreshSessions() }));
        emit();
      }
    },

    async openSession(id) {
      if (state.session?.id === id && state.messages.length && !state.loadingSession) {
        emit();
        return true;
      }
      if (blockWhileStreaming("switch")) return false;
      state.loadingSession = true;
      emit();
      try {
        const session = await client().getSession(id);
        // A question sent meanwhile owns the view: do not switch under its stream.
        if (busy()) return false;
        applySession(session);
        state.phase = "ready";
        setNotice(null);
        return true;
      } catch (err) {
        if (err?.code === Codes.SESSION_NOT_FOUND) {
          state.sessions = state.sessions.filter((s) => s.id !== id);
          if (state.session?.id === id) {
            state.session = null;
            state.messages = [];
          }
        }
        setNotice(noticeFrom(err, { retry: () => controller.openSession(id) }));
        return false;
      } finally {
        state.loadingSession = false;
        emit();
      }
    },

    async reloadSession() {
      const id = state.session?.id;
      if (!id || busy()) return false;
      state.messages = [];
      return controller.openSession(id);
    },

    /** A new chat (an empty current chat is reused rather than making another). */
    async newSession() {
      if (blockWhileStreaming("new")) return false;
      if (state.session && state.messages.length === 0) {
        restoreComposer(state.composer.text);
        emit();
        return true;
      }
      try {
        const session = await client().createSession(DEFAULT_TITLE);
        upsertManifest(manifestFrom(session));
        if (busy()) {
          // a question was sent meanwhile: keep its chat on screen, the new one is in the list
          emit();
          return false;
        }
        applySession(session);
        state.phase = "ready";
        setNotice(null);
        restoreComposer("");
        emit();
        return true;
      } catch (err) {
        setNotice(noticeFrom(err, { retry: () => controller.newSession() }));
        emit();
        return false;
      }
    },

    async renameSession(id, title) {
      const clean = String(title ?? "")
        .trim()
        .slice(0, 200);
      if (!clean) return false;
      try {
        const session = await client().renameSession(id, clean);
        upsertManifest({ id, title: session?.title || clean });
        if (state.session?.id === id)
          state.session = { ...state.session, title: session?.title || clean };
        emit();
        return true;
      } catch (err) {
        setNotice(noticeFrom(err));
        emit();
        return false;
      }
    },

    async deleteSession(id) {
      if (state.streaming && state.session?.id === id && blockWhileStreaming("delete"))
        return false;
      try {
        await client().deleteSession(id);
      } catch (err) {
        if (err?.code !== Codes.SESSION_NOT_FOUND) {
          setNotice(noticeFrom(err, { retry: () => controller.deleteSession(id) }));
          emit();
          return false;
        }
      }
      state.sessions = state.sessions.filter((s) => s.id !== id);
      if (prefs.get(LAST_SESSION_PREF) === id) prefs.set(LAST_SESSION_PREF, "");
      if (state.session?.id === id) {
        state.session = null;
        state.messages = [];
        state.editing = null;
        const next = state.sessions[0];
        if (next) return controller.openSession(next.id).then(() => true);
      }
      emit();
      return true;
    },

    // ------------------------------------------------------------ scope

    /** Zotero's selection changed: selected items / current collection. */
    setSelection(selection) {
      const next = {
        selectedItems: selection?.selectedItems || [],
        collection: selection?.collection || null,
      };
      if (JSON.stringify(next) === JSON.stringify(state.selection) && state.selectionSeen) return;
      state.selectionSeen = true;
      state.selection = next;
      // Until the user picks a scope, it follows Zotero: the narrowest one the selection allows.
      const previous = state.modeChosen ? state.scope : { ...state.scope, mode: undefined };
      state.scope = S.scopeFromSelection(previous, state.selection);
      emit();
    },

    setMode(mode) {
      state.scope = S.setMode(state.scope, mode);
      state.modeChosen = true;
      emit();
    },

    /** The reader's current text selection (offered as a focal snippet), or null. */
    setReaderSelection(snippet) {
      state.readerSelection = snippet || null;
      emit();
    },

    pinSnippet(snippet) {
      const s = snippet || state.readerSelection;
      if (!s) return false;
      const before = state.scope.snippets.length;
      const image = S.isImageSnippet(s);
      state.scope = S.addSnippet(state.scope, s);
      if (!image && state.readerSelection && s.text === state.readerSelection.text)
        state.readerSelection = null;
      if (state.scope.snippets.length === before && !S.canAddSnippet(state.scope, { image })) {
        setNotice(
          infoNotice(
            image && S.canAddSnippet(state.scope)
              ? say(
                  "zocrates-notice-pin-image-limit",
                  `At most ${S.LIMITS.images} images can be pinned to a question.`,
                  { max: S.LIMITS.images },
                )
              : say(
                  "zocrates-notice-pin-limit",
                  `At most ${S.LIMITS.snippets} passages can be pinned to a question.`,
                  { max: S.LIMITS.snippets },
                ),
          ),
        );
      }
      restoreComposer(state.composer.text);
      emit();
      return state.scope.snippets.length > before;
    },

    removeSnippet(index) {
      state.scope = S.removeSnippet(state.scope, index);
      emit();
    },

    /** An info notice from outside the pane (an image annotation that could not be read). */
    notify(message) {
      setNotice(infoNotice(String(message)));
      emit();
    },

    /** The composer's text as the user types (kept so that nothing is lost on re-render). */
    setDraft(text) {
      state.composer = { ...state.composer, text: String(text ?? ""), focus: false };
    },

    // ------------------------------------------------------------ turns

    /**
     * Send a question. Returns false when it was not sent (empty, still answering, refused):
     * the text then stays in (or comes back to) the composer.
     */
    async send(text) {
      const prompt = String(text ?? "").trim();
      if (!prompt) return false;
      if (blockWhileStreaming("send")) return false;
      // Images restored from an earlier question go out with their bytes.
      if (state.imagesLoading) await state.imagesLoading;
      let body;
      try {
        if (!state.session) {
          const ok = await controller.newSession();
          if (!ok) {
            restoreComposer(prompt);
            emit();
            return false;
          }
        }
        if (state.editing) {
          const session = await client().rewind(state.session.id, state.editing.invocationId);
          applySession(session);
        }
        body = S.chatBody({ sessionId: state.session.id, prompt, scope: state.scope });
      } catch (err) {
        setNotice(
          err instanceof RangeError || err instanceof TypeError
            ? infoNotice(err.message)
            : noticeFrom(err),
        );
        restoreComposer(prompt);
        emit();
        return false;
      }
      const base = state.messages;
      const context = { ...S.contextFromScope(state.scope), active_mode: state.scope.mode };
      const firstTurn = !base.some((m) => m.kind === "user");
      const { messages, bubble } = M.startTurn(base, { text: prompt, context });
      state.messages = messages;
      setNotice(null);
      restoreComposer("", { focus: true });
      const sessionId = state.session.id;
      const outcome = await runStream(
        bubble.id,
        "chat",
        (signal) => client().chat(body, { signal }),
        {
          onRefused: () => {
            state.messages = base;
            restoreComposer(prompt);
          },
          retry: () => controller.send(prompt),
        },
      );
      if (
        outcome !== "refused" &&
        firstTurn &&
        (!state.session?.title || state.session.title === DEFAULT_TITLE) &&
        state.session?.id === sessionId
      ) {
        controller.renameSession(sessionId, titleFromPrompt(prompt)).catch(() => {});
      }
      return outcome !== "refused";
    },

    /** Stop the running answer (the gateway cancels the run). */
    stop() {
      state.streaming?.abort.abort();
    },

    /** The checkpoint card's choice: the same bubble takes the /chat/resume stream. */
    async resume(bubbleId, action, guidance = "") {
      if (blockWhileStreaming("checkpoint")) return false;
      const bubble = state.messages.find((m) => m.id === bubbleId);
      if (!bubble?.checkpoint || !state.session) return false;
      let body;
      try {
        body = resumeBody({
          sessionId: state.session.id,
          card: buildCardModel(bubble.checkpoint),
          action,
          guidance,
        });
      } catch (err) {
        setNotice(infoNotice(err.message));
        emit();
        return false;
      }
      updateBubble(bubbleId, (b) => M.beginResume(b, { action, guidance }));
      setNotice(null);
      const outcome = await runStream(
        bubbleId,
        "resume",
        (signal) => client().resume(body, { signal }),
        {
          onRefused: () => updateBubble(bubbleId, (b) => M.abortResume(b, null)),
          retry: () => controller.resume(bubbleId, action, guidance),
        },
      );
      return outcome !== "refused";
    },

    grant(bubbleId, guidance = "") {
      return controller.resume(bubbleId, ACTIONS.EXTEND, guidance);
    },

    synthesize(bubbleId, guidance = "") {
      return controller.resume(bubbleId, ACTIONS.SYNTHESIZE, guidance);
    },

    /**
     * Rewind to a user message: that turn and everything after it are discarded on the
     * gateway; its prompt goes back into the composer with the scope and snippets it had.
     */
    async rewindTo(userMessageId) {
      if (blockWhileStreaming("rewind")) return false;
      const target = M.rewindTarget(state.messages, userMessageId);
      if (!target || !state.session) {
        setNotice(
          infoNotice(
            say(
              "zocrates-notice-rewind-unsaved",
              "This question was not saved yet, so there is nothing to rewind.",
            ),
          ),
        );
        emit();
        return false;
      }
      try {
        const session = await client().rewind(state.session.id, target.invocationId);
        applySession(session);
      } catch (err) {
        setNotice(noticeFrom(err, { retry: () => controller.rewindTo(userMessageId) }));
        emit();
        return false;
      }
      state.scope = restoredScope(target.context, state.selection);
      state.modeChosen = true;
      restoreComposer(target.text);
      loadImages();
      setNotice(
        infoNotice(
          say(
            "zocrates-notice-rewound",
            "Rewound: the question is back in the box below, with the scope and passages it was asked with.",
          ),
        ),
      );
      emit();
      return true;
    },

    /** Discard the paused turn of a bubble (its checkpoint goes too). */
    async discardTurn(bubbleId) {
      const user = userMessageFor(state.messages, bubbleId);
      if (!user) return false;
      return controller.rewindTo(user.id);
    },

    /** Edit a previous question: its text and scope come back; sending rewinds, then asks. */
    startEdit(userMessageId) {
      if (blockWhileStreaming("edit")) return false;
      const target = M.rewindTarget(state.messages, userMessageId);
      if (!target) {
        setNotice(
          infoNotice(
            say(
              "zocrates-notice-edit-unsaved",
              "This question was not saved yet, so it cannot be edited.",
            ),
          ),
        );
        emit();
        return false;
      }
      state.editing = { userMessageId, invocationId: target.invocationId };
      state.scope = restoredScope(target.context, state.selection);
      state.modeChosen = true;
      restoreComposer(target.text);
      setNotice(null);
      loadImages();
      emit();
      return true;
    },

    cancelEdit() {
      if (!state.editing) return;
      state.editing = null;
      state.scope = S.scopeFromSelection(state.scope, state.selection);
      restoreComposer("");
      emit();
    },

    /** A notice's button. */
    async runAction(action) {
      const notice = state.notice;
      switch (action) {
        case "retry":
          setNotice(null);
          emit();
          if (notice?.retry) return notice.retry();
          return controller.init();
        case "reload":
          setNotice(null);
          return controller.reloadSession();
        case "new-chat":
          setNotice(null);
          return controller.newSession();
        case "show-card": {
          const pending = M.pendingBubble(state.messages);
          setNotice(null);
          if (pending) {
            reveal(pending.id);
            emit();
            return true;
          }
          return controller.reloadSession();
        }
        case "discard-paused": {
          let pending = M.pendingBubble(state.messages);
          if (!pending) {
            await controller.reloadSession();
            pending = M.pendingBubble(state.messages);
          }
          if (!pending) return false;
          const keep = { text: state.composer.text, scope: state.scope };
          const ok = await controller.discardTurn(pending.id);
          if (ok && keep.text.trim() && notice?.code === Codes.CHECKPOINT_PENDING) {
            // The question the user was trying to send stays in the composer, with its scope.
            state.scope = keep.scope;
            restoreComposer(keep.text);
            setNotice(
              infoNotice(
                say(
                  "zocrates-notice-discarded",
                  "The paused turn was discarded. Your new question is ready to send.",
                ),
              ),
            );
            emit();
          }
          return ok;
        }
        case "dismiss":
        default:
          setNotice(null);
          emit();
          return true;
      }
    },

    dismissNotice() {
      setNotice(null);
      emit();
    },

    destroy() {
      state.streaming?.abort.abort();
      alive = false;
      listeners.clear();
    },
  };
  return controller;
}
