/**
 * The pane's notices: what an error says and offers (a button per action, by error code), an
 * info notice, and the actions of a notice's buttons (controller.js puts them on the
 * controller). No DOM.
 */
import { Codes, describeError } from "../errors.js";
import * as M from "../messages.js";

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

/**
 * What the error that ended a turn's stream offers in its bubble. A broken stream, or a
 * sessions service that went away or timed out mid-turn, may have come after the turn wrote
 * what it had (a checkpoint card, an answer): reloading the chat shows what was kept.
 */
const TURN_RELOAD_CODES = new Set([
  Codes.STREAM_INTERRUPTED,
  "sessions_unavailable",
  "sessions_timeout",
]);

export function turnErrorActions(code) {
  return TURN_RELOAD_CODES.has(code) ? ["reload"] : [];
}

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

/**
 * The notice actions of the controller: a notice from outside the pane, a notice's button and
 * dismissing it.
 * @param {object} ctx the controller's core (controller-core.js) with `controller`
 */
export function createNoticeActions(ctx) {
  const { state, emit, setNotice, say, restoreComposer, reveal } = ctx;
  const { controller } = ctx;
  return {
    /** An info notice from outside the pane (an image annotation that could not be read). */
    notify(message) {
      setNotice(infoNotice(String(message)));
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
  };
}
