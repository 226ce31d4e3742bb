/* The driver's loop (see bootstrap.js): it asks the test's reporter for the next step, runs it
 * (common.js, library.js, ui.js) and posts the result back; and the console listener. */
/* global Zotero, Services, Components, ChromeUtils, PathUtils, fetch, REPORTER_PREF, sleep,
   describeMessage, mainWindow, createLibrary, libraryView, selectItems, selectCollections,
   paneState, waitPane, setScope, waitScope, ask, openReader, readerState, closeReaders,
   clickCitation, saveNote, openLink, openPrefs, setPref, fieldValue, openSettings, closePrefs,
   installAddon, addonState, setAddon, leftovers, exerciseObservers */
/* exported createDriver */

function createDriver() {
  const messages = [];
  let alive = true;
  const listener = {
    QueryInterface: ChromeUtils.generateQI(["nsIConsoleListener"]),
    observe(msg) {
      try {
        const m = describeMessage(msg);
        if (m.level === "error" || m.level === "warning") messages.push(m);
      } catch {
        // a message we cannot read
      }
    },
  };

  const OPS = {
    async hello() {
      return {
        version: Zotero.version,
        platform: Zotero.platform,
        locale: Zotero.locale,
        dataDir: Zotero.DataDirectory.dir,
        profileDir: Zotero.Profile.dir,
      };
    },
    createLibrary,
    libraryView,
    selectItems,
    selectCollections,
    paneState: async () => paneState(),
    waitPane,
    setScope,
    waitScope,
    ask,
    openReader,
    readerState,
    closeReaders,
    clickCitation,
    saveNote,
    openLink,
    openPrefs,
    setPref,
    fieldValue,
    openSettings,
    closePrefs,
    installAddon,
    addonState,
    setAddon,
    leftovers: async () => leftovers(),
    exerciseObservers,
    /** Debugging aid: run a local .js file with `Zotero`, `win` and `ops` in scope; its
     * `result` (a value or a promise) comes back. */
    async runScript({ path }) {
      const scope = {
        Zotero,
        Services,
        Components,
        ChromeUtils,
        win: mainWindow(),
        ops: OPS,
        result: null,
      };
      Services.scriptloader.loadSubScript(PathUtils.toFileURI(path), scope);
      return await scope.result;
    },
    async console() {
      return messages;
    },
    /** View > Zocrates Pane, as a user picks it: the View menu opened, the item activated. */
    async toggleFromMenu() {
      const win = mainWindow();
      const item = win.document.getElementById("zocrates-view-pane-menuitem");
      const popup = item.parentNode;
      const before = paneState().open;
      const shown = new Promise((resolve) =>
        popup.addEventListener("popupshown", resolve, { once: true }),
      );
      popup.parentNode.open = true;
      await shown;
      popup.activateItem(item);
      await waitFor(
        "the pane to toggle",
        () => paneState().open !== before && popup.state === "closed",
        { timeout: 5000 },
      );
      return paneState();
    },
    async quit() {
      alive = false;
      sleep(200).then(() =>
        Services.startup.quit(Components.interfaces.nsIAppStartup.eAttemptQuit),
      );
      return true;
    },
  };

  async function request(method, path, body) {
    const base = Zotero.Prefs.get(REPORTER_PREF, true);
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (response.status === 204) return null;
    if (!response.ok) throw new Error(`${method} ${path}: HTTP ${response.status}`);
    return response.json();
  }

  async function run() {
    await Zotero.initializationPromise;
    await Zotero.uiReadyPromise;
    await request("POST", "/hello", await OPS.hello());
    while (alive) {
      let step = null;
      try {
        step = await request("GET", "/next");
      } catch {
        await sleep(250);
        continue;
      }
      if (!step) {
        await sleep(50);
        continue;
      }
      let reply;
      try {
        const op = OPS[step.op];
        if (!op) throw new Error(`unknown op ${step.op}`);
        reply = { id: step.id, result: (await op(step.args || {})) ?? null };
      } catch (err) {
        reply = {
          id: step.id,
          error: { message: String(err?.message || err), stack: String(err?.stack || "") },
        };
      }
      try {
        await request("POST", "/result", reply);
      } catch {
        // the test went away
      }
    }
  }

  return {
    start() {
      for (const msg of Services.console.getMessageArray() || []) listener.observe(msg);
      Services.console.registerListener(listener);
      run().catch((err) => Zotero.debug(`apptest driver: ${err}`));
    },
    stop() {
      alive = false;
      Services.console.unregisterListener(listener);
    },
  };
}
