/**
 * The chat pane: the controller (state and actions) and the view (DOM), wired to an
 * environment that is Zotero's in the plugin (src/zotero/sidebar.js) and a shim in the
 * browser harness (test-ui/). Renders are throttled to one per 50 ms while a stream runs.
 *
 * env: {
 *   getClient(): api.js client            prefs: {get(key), set(key, value)}
 *   getSelection(): {selectedItems, collection}      onSelectionChange?(cb) -> unsubscribe
 *   getReaderSelection?(): snippet | null            onReaderSelection?(cb) -> unsubscribe
 *   openCitation({itemKey, page}): Promise           openURL?(url)    openPreferences?()
 *   isMac?, canCollapse?, onCollapse?(), now?(), setTimeout?, clearTimeout?, log?(msg),
 *   AbortController? (the window's: Zotero's plugin sandbox has no AbortController),
 *   firstSession? (the app's one first-chat starter, ui/first-session.js: shared by windows)
 * }
 */
import { createThrottle } from "../throttle.js";
import { createChatController } from "./controller.js";
import { createPaneView } from "./view.js";

export const RENDER_INTERVAL_MS = 50;

export function createPane({ doc, root, env }) {
  const controller = createChatController({
    getClient: env.getClient,
    prefs: env.prefs,
    now: env.now,
    log: env.log,
    AbortController: env.AbortController,
    t: env.l10n ? env.l10n.t : null,
    ...(env.firstSession ? { firstSession: env.firstSession } : {}),
  });
  const view = createPaneView({ doc, root, controller, env });
  const setTimer = env.setTimeout || ((f, ms) => setTimeout(f, ms));
  const clearTimer = env.clearTimeout || ((id) => clearTimeout(id));
  const stats = { changes: 0, streamChanges: 0, renders: 0 };
  const throttle = createThrottle(
    () => {
      stats.renders += 1;
      view.render();
    },
    { interval: RENDER_INTERVAL_MS, setTimer, clearTimer, now: env.now },
  );

  controller.subscribe((_state, kind) => {
    stats.changes += 1;
    throttle.schedule();
    // Streamed text waits for the next frame of the throttle; everything else shows now.
    if (kind === "stream") stats.streamChanges += 1;
    else throttle.flush();
  });

  const unsubscribers = [];
  const refreshSelection = () => {
    try {
      controller.setSelection(env.getSelection?.() || {});
    } catch (err) {
      env.log?.(`selection: ${err?.message || err}`);
    }
  };
  if (env.onSelectionChange) unsubscribers.push(env.onSelectionChange(refreshSelection));
  if (env.onReaderSelection)
    unsubscribers.push(env.onReaderSelection((s) => controller.setReaderSelection(s)));
  refreshSelection();
  if (env.getReaderSelection) controller.setReaderSelection(env.getReaderSelection());
  view.render();

  return {
    controller,
    view,
    /** Load the chats (call once the pane is in the document). */
    start: () => controller.init(),
    refreshSelection,
    pinSnippet: (snippet) => controller.pinSnippet(snippet),
    /** An info notice in the pane (an image that could not be pinned). */
    notify: (message) => controller.notify(message),
    /** The pane became visible: a user without any chat gets one (first-session.js). */
    showing: () => controller.showing(),
    focus: () => view.focusComposer(),
    /** How many state changes there were and how many renders they cost (throttling). */
    stats,
    destroy() {
      for (const un of unsubscribers) {
        try {
          un?.();
        } catch {
          // already gone
        }
      }
      throttle.cancel();
      controller.destroy();
      view.destroy();
    },
  };
}
