/**
 * What the hooks dispatch to, inside Zotero. Zotero's globals are passed in by src/index.js.
 *
 * APIs used (Zotero 7 and 8): Zotero.initializationPromise / unlockPromise / uiReadyPromise,
 * Zotero.getMainWindows(), Zotero.PreferencePanes.register({pluginID, src, label, image}),
 * Zotero.DataDirectory.dir, Zotero.Prefs.get/set(key, true), window.MozXULElement
 * .insertFTLIfNeeded(name), IOUtils.readUTF8, PathUtils.join.
 */
import { config, FTL, PREFS } from "../config.js";
import { describeError } from "../errors.js";
import { snippetFromSelection } from "../scope.js";
import { createEnv } from "./env.js";
import { mountSidebar } from "./sidebar.js";

const STYLESHEET_ID = `${config.addonRef}-stylesheet`;

export function createApp({ Zotero, rootURI, fetch, IOUtils, PathUtils, version = "" }) {
  const env = createEnv({ Zotero, fetch, IOUtils, PathUtils });
  const data = {
    alive: true,
    initialized: false,
    version,
    rootURI,
    registration: null, // {ok: true, response} | {ok: false, error}
    lastSelection: null,
    windows: new Map(),
  };

  const log = (...args) => Zotero.debug(`${config.addonName}: ${args.join(" ")}`);

  async function registerDataDir() {
    try {
      const response = await env.client().register(env.dataDir());
      data.registration = { ok: true, response };
      log(`registered ${response.zotero_data_dir}`);
    } catch (error) {
      data.registration = { ok: false, error };
      log(`could not register the data directory: ${error.message || describeError(error)}`);
    }
    return data.registration;
  }

  return {
    env,
    data,
    log,

    async ready() {
      await Promise.all([Zotero.initializationPromise, Zotero.unlockPromise, Zotero.uiReadyPromise]);
    },

    async startup() {
      await Zotero.PreferencePanes.register({
        pluginID: config.addonID,
        src: `${rootURI}content/preferences.xhtml`,
        label: config.addonName,
        image: `${rootURI}content/icons/zocrates.svg`,
      });
      if (env.getPref(PREFS.registerOnStartup, true)) {
        // Not awaited: Zotero's start-up must not wait for the gateway (or its absence).
        data.registering = registerDataDir();
      }
      data.initialized = true;
    },

    async shutdown() {
      data.alive = false;
      delete Zotero[config.addonInstance];
    },

    mainWindows() {
      return Zotero.getMainWindows();
    },

    addToWindow(win) {
      const doc = win.document;
      if (doc.getElementById(STYLESHEET_ID)) return;
      win.MozXULElement.insertFTLIfNeeded(FTL.addon);
      win.MozXULElement.insertFTLIfNeeded(FTL.sidebar);
      const link = doc.createElement("link");
      link.id = STYLESHEET_ID;
      link.rel = "stylesheet";
      link.type = "text/css";
      link.href = `${rootURI}content/sidebar.css`;
      doc.documentElement.appendChild(link);
      data.windows.set(win, mountSidebar(win, this));
    },

    removeFromWindow(win) {
      const doc = win.document;
      data.windows.get(win)?.unmount();
      data.windows.delete(win);
      doc.getElementById(STYLESHEET_ID)?.remove();
      for (const name of [FTL.addon, FTL.sidebar]) doc.querySelector(`[href="${name}"]`)?.remove();
    },

    async onPrefsLoad(_win) {
      log("preferences pane loaded (wiring comes with the pane)");
    },

    /** Zotero.Reader renderTextSelectionPopup event -> the snippet it would pin. */
    onReaderSelection(event) {
      const annotation = event?.params?.annotation || {};
      const item = event?.reader?._item;
      const parent = item?.parentItem;
      data.lastSelection = snippetFromSelection({
        text: annotation.text,
        pageIndex: annotation.position?.pageIndex,
        itemKey: parent?.key ?? item?.key,
        title: parent?.getDisplayTitle?.() ?? "",
      });
      return data.lastSelection;
    },

    registerDataDir,
  };
}
