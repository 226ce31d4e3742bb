/**
 * The controller's turns: send a question and fold its stream into the assistant bubble, stop
 * it, the checkpoint card's grant / synthesize (the resumed stream goes on in the SAME
 * bubble), rewind and edit (the turn's prompt, scope and snippets come back, images fetched
 * again by their sha256).
 */
import { ACTIONS, buildCardModel, GUIDANCE_MAX, resumeBody } from "../card.js";
import { Codes, isAbortError } from "../errors.js";
import * as M from "../messages.js";
import * as S from "../scope.js";
import { DEFAULT_TITLE, titleFromPrompt } from "./format.js";
import { infoNotice, noticeFrom } from "./notices.js";

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
 * @param {object} ctx the controller's core (controller-core.js) with `controller` and
 *   `AbortController`
 */
export function createTurnActions(ctx) {
  const { state, emit, client, setNotice, say, blockWhileStreaming, restoreComposer } = ctx;
  const { upsertManifest, applySession, updateBubble, reveal, now, log, controller } = ctx;
  const Abort = ctx.AbortController;

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

  return {
    /**
     * Send a question. Returns false when it was not sent (empty, still answering, refused):
     * the text then stays in (or comes back to) the composer.
     */
    async send(text) {
      const prompt = String(text ?? "").trim();
      if (!prompt) return false;
      if (blockWhileStreaming("send")) return false;
      // Refused before anything happens (an edit would otherwise rewind first).
      if (prompt.length > S.LIMITS.prompt) {
        setNotice(
          infoNotice(
            say(
              "zocrates-notice-question-too-long",
              `The question has ${prompt.length} characters; at most ${S.LIMITS.prompt} fit.`,
              { length: prompt.length, max: S.LIMITS.prompt },
            ),
          ),
        );
        restoreComposer(prompt);
        emit();
        return false;
      }
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
      const text = String(guidance ?? "").trim();
      if (text.length > GUIDANCE_MAX) {
        setNotice(
          infoNotice(
            say(
              "zocrates-notice-guidance-too-long",
              `The guidance has ${text.length} characters; at most ${GUIDANCE_MAX} fit.`,
              { length: text.length, max: GUIDANCE_MAX },
            ),
          ),
        );
        emit();
        return false;
      }
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
  };
}
