/**
 * The API surface of each Zotero major version the plugin declares (7, 8, 9, 10), as far as the
 * plugin touches it, for the build test (test/zotero-versions.test.js). Not a test file itself.
 *
 * Read off Zotero's own sources (zotero/zotero) at the newest release of each major: 7.0.32
 * (Gecko 115 ESR), 8.0.5 (Gecko 140.7 ESR), 9.0.6 (Gecko 140.12 ESR) and 10.0.1 (Gecko
 * 140.14 ESR; commit 16a79acf7c, the 10.0.1 version bump). What differs between them, with the
 * commit that changed it:
 *
 * - ZoteroPane's singular selection getters (getSelectedCollection, getSelectedLibraryID,
 *   getSelectedSavedSearch, getSelectedGroup, getCollectionTreeRow) throw in 10.0 and name
 *   their replacement (5d1a2cba32); getSelectedCollections and getSelectedLibraryIDs exist
 *   only from 10.0 on (15c2c95470). So a plugin must look for the new method first and never
 *   call the old one to find out.
 * - ZoteroPane.itemsView.collectionTreeRow is gone in 10.0 (1d97f6448e: collectionTreeRows and
 *   viewMode instead).
 * - Zotero.MenuManager exists from 8.0 on; Zotero.CookieSandbox is gone from 9.0.3 on.
 * - Zotero.Reader.unregisterEventListener(type, handler) removes every *other* listener in
 *   7.0 to 9.0.6 (fixed in 10.0, 575dc5351c): a plugin must leave the removal to Zotero
 *   (listeners registered with a plugin ID are removed when it shuts down).
 * - item.getBestAttachment() throws on anything but a regular item (an Error in 10.0, a string
 *   before).
 * - Note tabs ("note" / "note-unloaded") exist from 8.0 on.
 * - Preference panes' scripts run in a scope of their own from 8.0 on (32f812d515); inline
 *   handlers reach only window globals such as Zotero.
 *
 * The same in all four: the bootstrap lifecycle and the sandbox's globals (plugins.js), the
 * manifest's `applications.zotero` with strict_min_version / strict_max_version (enforced by
 * stable builds), chrome registration and loadSubScript, plugins' locale/<locale>/*.ftl files
 * registered automatically (the plugin ships none: in a real Zotero that re-translates every
 * window, which rejects unhandled; tests/real_zotero), MozXULElement.insertFTLIfNeeded (recorded
 * here so a test can assert the plugin never calls it), PreferencePanes.register, the main window's
 * #tabs-deck / #zotero-context-splitter / #zotero-context-pane box, Zotero.Reader.open(itemID,
 * {pageIndex}) and getByTabID, the renderTextSelectionPopup event ({reader, doc, params:
 * {annotation}, append}), the createAnnotationContextMenu event ({reader, params: {ids},
 * append({label, onCommand})}), an annotation item's annotationType / annotationComment /
 * annotationPosition, Zotero.Annotations.hasCacheImage / getCacheImagePath (xpcom/annotations.js),
 * Zotero.PDFWorker.renderAttachmentAnnotations(attachmentID) (xpcom/pdfWorker/manager.js),
 * Zotero.Items, Zotero.Notifier's tab events, Zotero_Tabs.
 *
 * ``zoteroSurface(major, options)`` builds Zotero, its main window and the plugin sandbox's
 * globals with exactly that surface. Every object is a recording proxy: a name that the
 * version does not have reads as undefined (as in Zotero) and is written down in
 * ``absent``, so a test sees both a call that fails and a feature test that was made.
 */
import { parseHTML } from "linkedom";

export const ZOTERO_VERSIONS = Object.freeze([
  { major: 7, version: "7.0.32", gecko: "115.14.0esr" },
  { major: 8, version: "8.0.5", gecko: "140.7.0esr" },
  { major: 9, version: "9.0.6", gecko: "140.12.0esr" },
  { major: 10, version: "10.0.1", gecko: "140.14.0esr" },
]);

const IGNORED = new Set([
  "then",
  "toJSON",
  "constructor",
  "inspect",
  "nodeType",
  "asymmetricMatch",
]);

/** A proxy over `target` that records reads of names `target` does not have. */
function recorder(target, path, absent) {
  return new Proxy(target, {
    get(obj, prop, receiver) {
      if (typeof prop === "symbol" || prop in obj || IGNORED.has(prop))
        return Reflect.get(obj, prop, receiver);
      absent.add(`${path}.${prop}`);
      return undefined;
    },
  });
}

/** Zotero 10's stubs for the removed singular getters (zoteroPane.js, 5d1a2cba32). */
function removed(name, replacement) {
  return () => {
    throw new Error(`ZoteroPane.${name}() was removed -- use ${replacement}`);
  };
}

const MAIN_WINDOW = `<!DOCTYPE html>
<html><head></head><body>
  <div id="main-menubar">
    <div id="view-menu"><div id="menu_viewPopup"><div id="view-menuitem-standard"></div></div></div>
  </div>
  <div id="zotero-pane-stack">
    <div id="zotero-pane-hbox">
      <div id="tabs-deck"><div id="zotero-pane"></div></div>
      <div id="zotero-context-splitter"></div>
      <div id="zotero-context-pane"></div>
    </div>
  </div>
</body></html>`;

/**
 * @param {7|8|9|10} major
 * @param {{items?: object[], collection?: object, prefs?: object, dataDir?: string,
 *          tab?: {type: string, id: string}, annotations?: object[]}} options
 *   items: `{id, key, title, attachment?: {id, key}}`, the first ones selected
 *   annotations: `{key, attachmentKey, type, comment, pageIndex, cached}` (cached: Zotero has
 *   drawn its image into the cache, else renderAttachmentAnnotations draws it)
 */
export function zoteroSurface(
  major,
  {
    items = [],
    collection = null,
    prefs = {},
    dataDir = "/home/me/Zotero",
    tab = null,
    annotations = [],
  } = {},
) {
  const info = ZOTERO_VERSIONS.find((v) => v.major === major);
  if (!info) throw new Error(`no surface for Zotero ${major}`);
  const absent = new Set();
  const calls = [];
  const log = [];
  const rec = (obj, path) => recorder(obj, path, absent);
  const call = (name, ...args) => calls.push({ name, args });

  // ---- items ----
  const byID = new Map();
  const byKey = new Map();
  const makeItem = (spec, parent = null) => {
    const isAttachment = !!parent || spec.isAttachment;
    const item = rec(
      {
        id: spec.id,
        key: spec.key,
        libraryID: spec.libraryID ?? 1,
        parentItem: parent,
        getDisplayTitle: () => spec.title ?? "Full Text PDF",
        deleted: false,
        isRegularItem: () => !isAttachment,
        isAttachment: () => isAttachment,
        isFileAttachment: () => isAttachment,
        isPDFAttachment: () => isAttachment,
        getBestAttachment: async () => {
          if (isAttachment) {
            if (major >= 10)
              throw new Error(
                "getBestAttachment() can only be called on regular items. Called on application/pdf",
              );
            throw "getBestAttachment() can only be called on regular items";
          }
          return attachment;
        },
      },
      "item",
    );
    let attachment = null;
    if (spec.attachment)
      attachment = makeItem({ ...spec.attachment, title: "Full Text PDF" }, item);
    byID.set(item.id, item);
    byKey.set(`${item.libraryID}/${item.key}`, item);
    return item;
  };
  const zItems = items.map((spec) => makeItem(spec));
  const selected = zItems.slice(0, Math.max(1, Math.min(2, zItems.length)));
  // Annotation items: children of an attachment, as xpcom/data/item.js has them.
  const drawn = new Set(annotations.filter((a) => a.cached).map((a) => a.key));
  for (const [k, spec] of annotations.entries()) {
    const attachment = byKey.get(`1/${spec.attachmentKey}`);
    const annotation = rec(
      {
        id: 900 + k,
        key: spec.key,
        libraryID: 1,
        parentID: attachment.id,
        parentItem: attachment,
        annotationType: spec.type || "image",
        annotationComment: spec.comment || "",
        annotationPageLabel: String((spec.pageIndex ?? 0) + 1),
        annotationPosition: JSON.stringify({ pageIndex: spec.pageIndex ?? 0, rects: [] }),
      },
      "annotation",
    );
    byID.set(annotation.id, annotation);
    byKey.set(`1/${annotation.key}`, annotation);
  }
  const cachePath = ({ key }) => `${dataDir}/cache/library/${key}.png`;

  // ---- the main window ----
  const { window: dom, document } = parseHTML(MAIN_WINDOW);
  // A XUL document's factory for <menuitem> and the like (the same in 7.0 to 10.0).
  document.createXULElement = (tag) => document.createElement(tag);
  const ftl = [];
  const listeners = { items: new Set(), collections: new Set() };
  const emitter = (set) =>
    rec({ addListener: (f) => set.add(f), removeListener: (f) => set.delete(f) }, "onSelect");
  const libraryIDs = [1];
  const paneMethods = {
    getSelectedItems: () => {
      call("ZoteroPane.getSelectedItems");
      // From 7.0.12 on, in a reader tab: the reader's parent item.
      if (tabs.selectedType === "reader")
        return readerItem?.parentItem ? [readerItem.parentItem] : [];
      return selected;
    },
    selectItem: async (id) => call("ZoteroPane.selectItem", id),
    itemsView: rec(
      {
        onSelect: emitter(listeners.items),
        ...(major >= 10
          ? { collectionTreeRows: [], viewMode: "default" }
          : { collectionTreeRow: {} }),
      },
      "ZoteroPane.itemsView",
    ),
    collectionsView: rec(
      { onSelect: emitter(listeners.collections), selectedTreeRow: {} },
      "ZoteroPane.collectionsView",
    ),
  };
  const zCollection = collection ? rec({ ...collection }, "collection") : null;
  if (major >= 10) {
    Object.assign(paneMethods, {
      getSelectedCollections: () => (
        call("ZoteroPane.getSelectedCollections"),
        zCollection ? [zCollection] : []
      ),
      getSelectedLibraryIDs: () => (call("ZoteroPane.getSelectedLibraryIDs"), libraryIDs),
      getSelectedSavedSearches: () => [],
      getCollectionTreeRows: () => [],
      getSelectedCollection: removed(
        "getSelectedCollection",
        "ZoteroPane.getSelectedCollections()",
      ),
      getSelectedLibraryID: removed("getSelectedLibraryID", "ZoteroPane.getSelectedLibraryIDs()"),
      getSelectedSavedSearch: removed(
        "getSelectedSavedSearch",
        "ZoteroPane.getSelectedSavedSearches()",
      ),
      getSelectedGroup: removed(
        "getSelectedGroup",
        "filter ZoteroPane.getCollectionTreeRows() by isGroup()",
      ),
      getCollectionTreeRow: removed("getCollectionTreeRow", "ZoteroPane.getCollectionTreeRows()"),
    });
  } else {
    Object.assign(paneMethods, {
      getSelectedCollection: () => (call("ZoteroPane.getSelectedCollection"), zCollection || false),
      getSelectedLibraryID: () => (call("ZoteroPane.getSelectedLibraryID"), libraryIDs[0]),
      getSelectedSavedSearch: () => false,
      getSelectedGroup: () => false,
      getCollectionTreeRow: () => ({}),
    });
  }
  const ZoteroPane = rec(paneMethods, "ZoteroPane");
  const tabTypes =
    major >= 8
      ? ["library", "reader", "reader-unloaded", "note", "note-unloaded"]
      : ["library", "reader", "reader-unloaded"];
  const tabs = rec(
    { selectedType: tab?.type || "library", selectedID: tab?.id || "zotero-pane" },
    "Zotero_Tabs",
  );
  if (!tabTypes.includes(tabs.selectedType))
    throw new Error(`Zotero ${major} has no ${tabs.selectedType} tabs`);

  const win = rec(
    {
      document,
      ZoteroPane,
      Zotero_Tabs: tabs,
      innerWidth: 1400,
      AbortController,
      setTimeout: (f, ms) => setTimeout(f, ms),
      clearTimeout: (id) => clearTimeout(id),
      addEventListener: (...a) => dom.addEventListener?.(...a),
      removeEventListener: (...a) => dom.removeEventListener?.(...a),
      getComputedStyle: () => ({ getPropertyValue: () => "" }),
      MozXULElement: rec(
        {
          insertFTLIfNeeded(name) {
            if (ftl.includes(name)) return;
            ftl.push(name);
            const link = document.createElement("link");
            link.setAttribute("rel", "localization");
            link.setAttribute("href", name);
            document.head.appendChild(link);
          },
        },
        "MozXULElement",
      ),
    },
    "window",
  );

  // ---- Zotero ----
  const store = { "extensions.zocrates.gatewayURL": "http://127.0.0.1:8765", ...prefs };
  const panes = [];
  const notes = [];
  const readerListeners = [];
  const observers = new Map();
  let readerItem = null;
  const reader = {
    open: async (itemID, location, options) =>
      call("Zotero.Reader.open", itemID, location, options),
    getByTabID: (id) =>
      id === tabs.selectedID && readerItem
        ? rec({ _item: readerItem, itemID: readerItem.id }, "reader")
        : null,
    registerEventListener: (type, handler, pluginID) =>
      readerListeners.push({ type, handler, pluginID }),
    unregisterEventListener: (type, handler) => {
      call("Zotero.Reader.unregisterEventListener", type);
      if (major < 10) {
        // 7.0 - 9.0.6: keeps only the listener it was asked to remove (reader.js)
        const keep = readerListeners.filter((x) => x.type === type && x.handler === handler);
        readerListeners.splice(0, readerListeners.length, ...keep);
      } else {
        const i = readerListeners.findIndex((x) => x.type === type && x.handler === handler);
        if (i !== -1) readerListeners.splice(i, 1);
      }
    },
  };
  const zotero = {
    version: info.version,
    platformMajorVersion: Number.parseInt(info.gecko, 10),
    isMac: false,
    // Set by xpcom/intl.js from the app locale in 7.0 to 10 (resolveLocale: "de", "en-US").
    locale: "en-US",
    initializationPromise: Promise.resolve(),
    unlockPromise: Promise.resolve(),
    uiReadyPromise: Promise.resolve(),
    getMainWindows: () => [win],
    getMainWindow: () => win,
    debug: (m) => log.push(String(m)),
    launchURL: (url) => call("Zotero.launchURL", url),
    DataDirectory: rec({ dir: dataDir }, "Zotero.DataDirectory"),
    Prefs: rec(
      {
        get: (key, global) => {
          if (!global) throw new Error("the plugin uses full pref names (global = true)");
          return store[key];
        },
        set: (key, value, global) => {
          if (!global) throw new Error("global = true expected");
          store[key] = value;
        },
      },
      "Zotero.Prefs",
    ),
    PreferencePanes: rec(
      {
        register: async (options) => {
          panes.push(options);
          return `${options.pluginID}-pane`;
        },
      },
      "Zotero.PreferencePanes",
    ),
    Utilities: rec(
      {
        Internal: rec(
          {
            openPreferences: (paneID) => call("Zotero.Utilities.Internal.openPreferences", paneID),
            copyTextToClipboard: (text) =>
              call("Zotero.Utilities.Internal.copyTextToClipboard", text),
          },
          "Zotero.Utilities.Internal",
        ),
      },
      "Zotero.Utilities",
    ),
    Libraries: rec(
      {
        userLibraryID: 1,
        get: (id) =>
          id === 1
            ? rec(
                { libraryID: 1, libraryType: "user", editable: true, name: "My Library" },
                "library",
              )
            : false,
      },
      "Zotero.Libraries",
    ),
    Groups: rec({ getGroupIDFromLibraryID: () => false }, "Zotero.Groups"),
    Items: rec(
      {
        get: (id) => byID.get(id) || false,
        getByLibraryAndKey: (libraryID, key) => byKey.get(`${libraryID}/${key}`) || false,
        getByLibraryAndKeyAsync: async (libraryID, key) =>
          byKey.get(`${libraryID}/${key}`) || false,
      },
      "Zotero.Items",
    ),
    // A note as ZoteroPane.newNote makes one (zoteroPane.js): recorded in `notes` on save.
    Item: class Item {
      constructor(itemType) {
        this.itemType = itemType;
        this.collections = [];
      }
      setNote(html) {
        this.note = html;
        return true;
      }
      addToCollection(id) {
        this.collections.push(id);
      }
      async saveTx(options) {
        this.id = 5000 + notes.length;
        this.key = `NOTE${notes.length + 2222}`;
        notes.push({ ...this, options });
        return this.id;
      }
    },
    Notes: rec({ AUTO_SYNC_DELAY: 15 }, "Zotero.Notes"),
    Reader: rec(reader, "Zotero.Reader"),
    Notifier: rec(
      {
        registerObserver: (observer, types, id) => {
          const oid = `${id}-${observers.size + 1}`;
          observers.set(oid, { observer, types });
          return oid;
        },
        unregisterObserver: (oid) => observers.delete(oid),
      },
      "Zotero.Notifier",
    ),
    ItemPaneManager: rec(
      { registerSection: () => "section", unregisterSection: () => true },
      "Zotero.ItemPaneManager",
    ),
    PDFWorker: rec(
      {
        renderAttachmentAnnotations: async (itemID) => {
          call("Zotero.PDFWorker.renderAttachmentAnnotations", itemID);
          let rendered = 0;
          for (const a of byID.values())
            if (a.parentID === itemID && a.annotationType === "image" && !drawn.has(a.key)) {
              drawn.add(a.key);
              rendered += 1;
            }
          return rendered;
        },
      },
      "Zotero.PDFWorker",
    ),
    Annotations: rec(
      {
        getCacheImagePath: (item) => cachePath(item),
        hasCacheImage: async (item) => drawn.has(item.key),
      },
      "Zotero.Annotations",
    ),
    ...(major >= 8
      ? {
          MenuManager: rec(
            { registerMenu: () => "menu", unregisterMenu: () => true },
            "Zotero.MenuManager",
          ),
        }
      : {}),
    ...(major <= 8 ? { CookieSandbox: function CookieSandbox() {} } : {}),
  };
  const Zotero = rec(zotero, "Zotero");

  const helpers = {
    info,
    absent,
    calls,
    log,
    panes,
    notes,
    store,
    ftl,
    readerListeners,
    observers,
    document,
    /** Zotero's selection changed (itemsView / collectionsView onSelect). */
    select() {
      for (const f of [...listeners.items, ...listeners.collections]) f();
    },
    listenerCount: () => listeners.items.size + listeners.collections.size,
    /** A reader tab with `item` (an attachment) became the selected tab. */
    openReaderTab(attachment, id = "reader-tab-1") {
      readerItem = attachment;
      tabs.selectedType = "reader";
      tabs.selectedID = id;
      for (const { observer, types } of observers.values())
        if (types.includes("tab"))
          observer.notify("select", "tab", [id], { [id]: { type: "reader" } });
    },
    /** Zotero's reader fires renderTextSelectionPopup for a selection on page `pageIndex`. */
    selectText(attachment, text, pageIndex) {
      const appended = [];
      const event = {
        type: "renderTextSelectionPopup",
        reader: rec({ _item: attachment, itemID: attachment.id, _window: win }, "reader"),
        doc: document,
        params: { annotation: { text, position: { pageIndex, rects: [[0, 0, 1, 1]] } } },
        append: (...nodes) => appended.push(...nodes),
      };
      for (const l of readerListeners) if (l.type === "renderTextSelectionPopup") l.handler(event);
      return appended;
    },
    item: (key) => byKey.get(`1/${key}`),
    /** Where Zotero keeps an image annotation's PNG (Zotero.Annotations.getCacheImagePath). */
    cachePath: (key) => cachePath({ key }),
    /** The reader's annotation context menu for these annotation ids: the items appended. */
    annotationMenu(attachment, ids) {
      const appended = [];
      const event = {
        type: "createAnnotationContextMenu",
        reader: rec({ _item: attachment, itemID: attachment.id, _window: win }, "reader"),
        params: { ids, currentID: ids[0], x: 10, y: 10 },
        append: (...menuItems) => appended.push(...menuItems),
      };
      for (const l of readerListeners)
        if (l.type === "createAnnotationContextMenu") l.handler(event);
      return appended;
    },
  };
  return { Zotero, window: win, ...helpers };
}
