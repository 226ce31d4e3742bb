/**
 * The controller's chats: load the list and open the last used chat, the first chat of a user
 * who has none (first-session.js, made once per Zotero process), open, reload, new, rename,
 * delete.
 */
import { Codes } from "../errors.js";
import { LAST_SESSION_PREF } from "./controller-core.js";
import { DEFAULT_TITLE, sortSessions } from "./format.js";
import { noticeFrom } from "./notices.js";

const unique = (s, k, all) => all.findIndex((x) => x.id === s.id) === k;

/**
 * @param {object} ctx the controller's core (controller-core.js) with `controller` and
 *   `firstSession`
 */
export function createSessionActions(ctx) {
  const { state, emit, client, busy, setNotice, blockWhileStreaming, restoreComposer } = ctx;
  const { upsertManifest, manifestFrom, applySession, prefs, firstSession, controller } = ctx;

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

  return {
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
  };
}
