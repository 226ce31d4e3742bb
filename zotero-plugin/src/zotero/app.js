/**
 * What the hooks dispatch to, inside Zotero. Zotero's globals are passed in by src/index.js.
 *
 * APIs used (the same in Zotero 7 to 10, test/zotero-versions.js): Zotero.initializationPromise / unlockPromise / uiReadyPromise,
 * Zotero.getMainWindows(), Zotero.PreferencePanes.register({pluginID, src, label, image})
 * (resolves to the pane's id), Zotero.Utilities.Internal.openPreferences(paneID),
 * Zotero.Reader.registerEventListener("renderTextSelectionPopup" and
 * "createAnnotationContextMenu", handler, pluginID) (removed by Zotero when the plugin shuts
 * down), Zotero.DataDirectory.dir, Zotero.Prefs.get/set(key, true),
 * IOUtils.readUTF8, PathUtils.join; for image
 * annotations the APIs listed in annotations.js (Zotero.Annotations, Zotero.PDFWorker,
 * IOUtils.read).
 */
import { createLocalization } from "../l10n.js";
import { config, PREFS } from "../config.js";
import { describeError } from "../errors.js";
import { formatBytes, IMAGE_LIMITS } from "../images.js";
import { snippetFromSelection } from "../scope.js";
import { createSessionStarter } from "../ui/first-session.js";
import { mountPreferences } from "../ui/prefs-view.js";
import { checkGatewayURL } from "../ui/prefs-model.js";
import { imageAnnotationKeys, imageSnippetOf } from "./annotations.js";
import { createEnv } from "./env.js";
import { mountSidebar } from "./sidebar.js";

export const PREFS_ROOT_ID = "zocrates-prefs-root";

const STYLESHEET_ID = `${config.addonRef}-stylesheet`;

export function createApp({
  Zotero,
  rootURI,
  fetch,
  IOUtils,
  PathUtils,
  version = "",
  l10nResources = {},
}) {
  const log = (...args) => Zotero.debug(`${config.addonName}: ${args.join(" ")}`);
  let l10n = null;
  /** The pane's strings in Zotero's language (the closest shipped locale, else English). */
  const localization = () =>
    (l10n ||= createLocalization({
      locale: Zotero.locale || "en-US",
      resources: l10nResources,
      log: (m) => log(m),
    }));
  // The gateway's errors are worded in the same language (describeError through the client).
  const env = createEnv({
    Zotero,
    fetch,
    IOUtils,
    PathUtils,
    t: (id, args) => localization().t(id, args),
  });
  const data = {
    alive: true,
    initialized: false,
    version,
    rootURI,
    registration: null, // {ok: true, response} | {ok: false, error}
    lastSelection: null,
    windows: new Map(),
  };
  // One first chat for a user who has none, whichever window's pane asks first.
  const firstSession = createSessionStarter();

  const readerListeners = new Set();

  async function registerDataDir() {
    try {
      const response = await env.client().register(env.dataDir());
      data.registration = { ok: true, response };
      log(`registered ${response.zotero_data_dir}`);
    } catch (error) {
      data.registration = { ok: false, error };
      log(`could not register the data directory: ${error?.message || describeError(error)}`);
    }
    return data.registration;
  }

  return {
    Zotero,
    env,
    data,
    log,

    /** The pane's strings in Zotero's language (the closest shipped locale, else English). */
    l10n: localization,

    async ready() {
      await Promise.all([
        Zotero.initializationPromise,
        Zotero.unlockPromise,
        Zotero.uiReadyPromise,
      ]);
    },

    async startup() {
      data.prefPaneID = await Zotero.PreferencePanes.register({
        pluginID: config.addonID,
        src: `${rootURI}content/preferences.xhtml`,
        label: config.addonName,
        image: `${rootURI}content/icons/zocrates.svg`,
      });
      // The reader's text selection popup gets "Ask Zocrates about this"; the selection is
      // also offered in the pane as a focal snippet.
      Zotero.Reader?.registerEventListener?.(
        "renderTextSelectionPopup",
        (event) => this.renderSelectionPopup(event),
        config.addonID,
      );
      // An image annotation's context menu gets "Ask Zocrates about this image".
      Zotero.Reader?.registerEventListener?.(
        "createAnnotationContextMenu",
        (event) => this.annotationContextMenu(event),
        config.addonID,
      );
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
    },

    /** Zotero > Settings > Zocrates: build the pane into the fragment's root. */
    async onPrefsLoad(win) {
      const doc = win?.document;
      const root = doc?.getElementById(PREFS_ROOT_ID);
      if (!root) {
        log("preferences: no root element");
        return null;
      }
      // The fragment links the stylesheet too; make sure the settings window has it.
      const href = `${rootURI}content/sidebar.css`;
      if (
        !doc.getElementById(`${STYLESHEET_ID}-prefs`) &&
        ![...doc.querySelectorAll("link")].some((l) => l.getAttribute("href") === href)
      ) {
        const link = doc.createElement("link");
        link.id = `${STYLESHEET_ID}-prefs`;
        link.rel = "stylesheet";
        link.type = "text/css";
        link.href = href;
        doc.documentElement.appendChild(link);
      }
      // The fragment's own lines (preferences.xhtml): its strings come from the plugin's
      // localization, like everything else it shows (Zotero does not localize the plugin).
      const l10n = this.l10n();
      for (const el of doc.querySelectorAll("#zotero-prefpane-zocrates [data-zc-l10n]"))
        el.textContent = l10n.t(el.getAttribute("data-zc-l10n"));
      return mountPreferences({
        doc: win.document,
        root,
        env: {
          getClient: () => env.client(),
          getGatewayURL: () => env.gatewayURL(),
          setGatewayURL: (url) => {
            if (!checkGatewayURL(url).ok) return;
            env.setPref(PREFS.gatewayURL, url);
            data.registering = registerDataDir();
          },
          tokenPath: env.tokenPath(),
          AbortController: win.AbortController,
          l10n,
        },
      });
    },

    /** Open Zotero's settings at the Zocrates pane. */
    openPreferences() {
      try {
        Zotero.Utilities?.Internal?.openPreferences?.(data.prefPaneID);
      } catch (err) {
        log(`could not open the settings: ${err?.message || err}`);
      }
    },

    /** Listen to the reader's text selection (the pane's focal-snippet offer). */
    onReaderSelectionChange(callback) {
      readerListeners.add(callback);
      return () => readerListeners.delete(callback);
    },

    /** renderTextSelectionPopup: remember the selection, offer it, add the popup's button. */
    renderSelectionPopup(event) {
      const snippet = this.onReaderSelection(event);
      if (!snippet) return;
      const doc = event?.doc;
      if (!doc || typeof event.append !== "function") return;
      const button = doc.createElement("button");
      button.className = "toolbar-button wide-button";
      const l10n = this.l10n();
      button.textContent = l10n.t("zocrates-reader-pin");
      button.title = l10n.message("zocrates-reader-pin-button").attributes.title;
      button.addEventListener("click", () => {
        const win = event.reader?._window || Zotero.getMainWindow?.();
        const mounted = data.windows.get(win) || [...data.windows.values()][0];
        mounted?.pinSnippet?.(snippet);
      });
      event.append(button);
    },

    /** The pane's shared first-chat starter (src/ui/first-session.js). */
    firstSession,

    /** createAnnotationContextMenu: for image annotations, the item that pins their images. */
    annotationContextMenu(event) {
      let targets = [];
      try {
        targets = imageAnnotationKeys(Zotero, event?.reader, event?.params?.ids);
      } catch (err) {
        log(`annotation menu: ${err?.message || err}`);
      }
      if (!targets.length || typeof event.append !== "function") return;
      const win = event.reader?._window || Zotero.getMainWindow?.();
      event.append({
        label: this.l10n().t("zocrates-reader-pin-image"),
        onCommand: () => {
          this.pinImages(targets, win).catch((err) => log(`pin image: ${err?.message || err}`));
        },
      });
    },

    /** Read the annotations' images and pin them in the window's pane (which opens). */
    async pinImages(targets, win) {
      const mounted = data.windows.get(win) || [...data.windows.values()][0];
      if (!mounted) return 0;
      const l10n = this.l10n();
      let pinned = 0;
      for (const target of targets) {
        try {
          const snippet = await imageSnippetOf({ Zotero, IOUtils, win }, target);
          mounted.pinSnippet(snippet);
          pinned += 1;
        } catch (err) {
          log(`image annotation ${target.key}: ${err?.message || err}`);
          mounted.notify?.(
            err?.reason === "too_large"
              ? l10n.t("zocrates-notice-image-too-large", {
                  size: formatBytes(err.size),
                  max: formatBytes(IMAGE_LIMITS.bytes),
                })
              : l10n.t("zocrates-notice-image-unreadable", { reason: err?.reason || "error" }),
          );
        }
      }
      return pinned;
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
      for (const fn of readerListeners) {
        try {
          fn(data.lastSelection);
        } catch (err) {
          log(`reader selection listener: ${err?.message || err}`);
        }
      }
      return data.lastSelection;
    },

    registerDataDir,
  };
}
