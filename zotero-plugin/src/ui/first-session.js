/**
 * The first chat of a user who has none: made once, however many panes ask for it.
 *
 * Every main window has its own pane (and controller), and each opens by listing the chats.
 * With none, each would create one: two windows opened at start-up, a Retry, or a reload while
 * the first creation is still on its way would leave two empty "New Chat"s. The app holds one
 * starter for all its windows (src/zotero/app.js): a pane that finds no chat asks it, and
 * every ask made while one is in flight gets that one's answer. The starter lists the chats
 * again before it creates one, so a pane that listed before another pane's chat existed picks
 * that chat up instead. Once settled it forgets: a user who later deletes every chat gets a
 * fresh one the next time a pane opens or they ask something.
 */
import { DEFAULT_TITLE } from "./format.js";

/**
 * @returns {(client: {listSessions, createSession}) =>
 *   Promise<{sessions: object[], created: object | null}>}
 *   `created`: the formatted session made now (null when a chat already existed);
 *   `sessions`: the manifests, the created one among them
 */
export function createSessionStarter({ title = DEFAULT_TITLE } = {}) {
  let pending = null;
  return function firstSession(client) {
    pending ||= (async () => {
      const sessions = await client.listSessions();
      if (sessions.length) return { sessions, created: null };
      const created = await client.createSession(title);
      const manifest = {
        id: created.id,
        title: created.title || title,
        created_at: created.created_at,
        updated_at: created.updated_at ?? created.created_at,
        event_count: 0,
      };
      return { sessions: [manifest], created };
    })().finally(() => {
      pending = null;
    });
    return pending;
  };
}
