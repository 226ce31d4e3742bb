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
 *
 * The parts: controller-core.js (the state and the helpers the actions share),
 * session-actions.js (chats), scope-actions.js (scope, pinned snippets, the draft),
 * turn-actions.js (questions, streams, the checkpoint, rewind and edit) and notices.js (what an
 * error says and offers, a notice's buttons).
 */
import { createCore, memoryPrefs } from "./controller-core.js";
import { createSessionStarter } from "./first-session.js";
import { createNoticeActions } from "./notices.js";
import { createScopeActions } from "./scope-actions.js";
import { createSessionActions } from "./session-actions.js";
import { createTurnActions } from "./turn-actions.js";

export { LAST_SESSION_PREF, memoryPrefs } from "./controller-core.js";
export { infoNotice, NOTICE_ACTIONS, noticeFrom } from "./notices.js";
export { restoredScope, userMessageFor } from "./turn-actions.js";

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
  const ctx = createCore({ getClient, prefs, now, log, t });
  const { state, listeners } = ctx;

  const controller = {
    get state() {
      return state;
    },

    subscribe(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },

    destroy() {
      state.streaming?.abort.abort();
      ctx.alive = false;
      listeners.clear();
    },
  };
  Object.assign(ctx, { controller, firstSession, AbortController: Abort });
  return Object.assign(
    controller,
    createSessionActions(ctx),
    createScopeActions(ctx),
    createTurnActions(ctx),
    createNoticeActions(ctx),
  );
}
