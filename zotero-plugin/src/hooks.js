/**
 * Lifecycle hooks that bootstrap.js forwards to. They only dispatch: the work is done by the
 * `app` they are given (src/zotero/app.js in Zotero; a fake in tests and in a browser harness).
 *
 * app: {ready(), startup(), shutdown(), mainWindows(), addToWindow(win),
 *       removeFromWindow(win), onPrefsLoad(win), onReaderSelection(event), log(...)}
 */
export function createHooks(app) {
  return {
    async onStartup() {
      await app.ready();
      await app.startup();
      await Promise.all(app.mainWindows().map((win) => app.addToWindow(win)));
    },

    async onMainWindowLoad(win) {
      await app.addToWindow(win);
    },

    async onMainWindowUnload(win) {
      await app.removeFromWindow(win);
    },

    async onShutdown() {
      for (const win of app.mainWindows()) await app.removeFromWindow(win);
      await app.shutdown();
    },

    /** From addon/content/preferences.xhtml (`onload`). */
    async onPrefsEvent(type, data = {}) {
      switch (type) {
        case "load":
          await app.onPrefsLoad(data.window);
          break;
        default:
          app.log(`unknown prefs event ${type}`);
      }
    },

    /** From Zotero.Reader's renderTextSelectionPopup listener. */
    onReaderSelection(event) {
      return app.onReaderSelection(event);
    },
  };
}
