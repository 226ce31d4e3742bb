/**
 * The browser harness: the plugin's own Zotero-side code — src/zotero/app.js (createApp),
 * src/hooks.js, src/zotero/sidebar.js (docking, resizing, selection glue), src/zotero/items.js
 * (opening citations) and the pane and preferences of src/ui/ — bundled by esbuild from the
 * same sources as the plugin, in a page that stands in for Zotero's main window. Only Zotero
 * is shimmed: Zotero.Prefs (localStorage), ZoteroPane (selected items, a collection,
 * itemsView.onSelect), Zotero_Tabs, Zotero.Reader (getByTabID, open -> recorded),
 * Zotero.Items, Zotero.Notifier, Zotero.Utilities.Internal.openPreferences (shows the settings
 * overlay, whose load event calls app.onPrefsLoad as preferences.xhtml does), IOUtils (the
 * token file is /harness/token). The gateway is reached at /gateway on the same origin
 * (test-ui/run.mjs proxies it to the real one).
 *
 * The reader page has a figure with an image annotation around it (the fixture's
 * `reader.figure`): a right-click opens the annotation context menu with what the plugin's
 * createAnnotationContextMenu listener appends; Zotero.Annotations' cache image is drawn by
 * Zotero.PDFWorker.renderAttachmentAnnotations (a PNG made on a canvas) and read back with
 * IOUtils.read, the calls the plugin makes in Zotero.
 *
 * window.zh exposes the shim to the Playwright runner; `zh.opened` records every
 * Zotero.Reader.open as {itemKey, page}.
 */
import { createHooks } from "../src/hooks.js";
import { createH } from "../src/ui/dom.js";
import { RESOURCES } from "../src/locales.js";
import { createApp } from "../src/zotero/app.js";

const doc = document;
const h = createH(doc);
const $ = (id) => doc.getElementById(id);

const zh = {
  opened: [],
  readerOpens: [],
  log: [],
  ready: null,
  copied: [],
  notes: [],
  rendered: [],
};
window.zh = zh;

const DATA_DIR = "/harness/Zotero";
const TOKEN_FILE = `${DATA_DIR}/zocrates-data/gateway.token`;
const PREFIX = "zocrates-harness:";

async function start() {
  const fixture = await (await fetch("/harness/fixture.json", { cache: "no-store" })).json();
  zh.fixture = fixture;
  const items = fixture.items.map((it, k) => ({ ...it, id: k + 1 }));
  const byKey = new Map(items.map((it) => [it.key, it]));
  const byId = new Map(items.map((it) => [it.id, it]));
  const collections = fixture.collections || [];
  const state = {
    tab: "library",
    collection: fixture.collection || null,
    selected: [...(fixture.selected || [])],
    reader: fixture.reader || null, // {itemKey, page, heading, paragraphs}
  };

  // ---------------------------------------------------------------- Zotero items

  const zItem = (it) => ({
    id: it.id,
    key: it.key,
    libraryID: 1,
    parentItem: null,
    deleted: false,
    getDisplayTitle: () => it.title,
    isRegularItem: () => true,
    isAttachment: () => false,
    isFileAttachment: () => false,
    getBestAttachment: async () => zAttachment(it),
  });
  const zAttachment = (it) => ({
    id: 1000 + it.id,
    key: it.attachmentKey || it.key,
    libraryID: 1,
    parentItem: zItem(it),
    deleted: false,
    getDisplayTitle: () => "Full Text PDF",
    isRegularItem: () => false,
    isAttachment: () => true,
    isFileAttachment: () => true,
    isPDFAttachment: () => true,
  });
  const collectionByKey = (key) => collections.find((c) => c.key === key) || null;

  // ---------------------------------------------------------------- the figure's annotation

  const figure = fixture.reader?.figure || null;
  const cacheFiles = new Map(); // Zotero's <data dir>/cache/library/<key>.png
  const cachePath = ({ key }) => `${DATA_DIR}/cache/library/${key}.png`;
  const zAnnotation = () => {
    const it = byKey.get(fixture.reader.itemKey);
    return {
      id: 7000,
      key: figure.annotationKey,
      libraryID: 1,
      parentID: 1000 + it.id,
      parentItem: zAttachment(it),
      annotationType: "image",
      annotationComment: figure.comment || "",
      annotationPageLabel: String(fixture.reader.page),
      annotationPosition: JSON.stringify({ pageIndex: fixture.reader.page - 1, rects: [] }),
    };
  };

  /** The figure as Zotero's PDF worker renders an image annotation: a PNG. */
  async function renderFigure() {
    const canvas = drawFigure(doc.createElement("canvas"));
    const blob = await new Promise((resolve) => canvas.toBlob(resolve, "image/png"));
    return new Uint8Array(await blob.arrayBuffer());
  }

  // ---------------------------------------------------------------- Zotero shim

  const emitter = () => {
    const fns = new Set();
    return {
      addListener: (f) => fns.add(f),
      removeListener: (f) => fns.delete(f),
      fire: () => [...fns].forEach((f) => f()),
    };
  };
  const itemsSelect = emitter();
  const collectionsSelect = emitter();
  const observers = new Map();
  let observerSeq = 0;
  const notify = (event, type, ids) => {
    for (const o of observers.values())
      if (o.types.includes(type)) o.observer.notify(event, type, ids, {});
  };

  const ZoteroPane = {
    itemsView: { onSelect: itemsSelect },
    collectionsView: { onSelect: collectionsSelect },
    getSelectedItems: () =>
      state.selected
        .map((k) => byKey.get(k))
        .filter(Boolean)
        .map(zItem),
    getSelectedCollection: () => {
      const c = collectionByKey(state.collection);
      return c ? { key: c.key, name: c.name } : null;
    },
    getSelectedLibraryID: () => 1,
    selectItem: async (id) => {
      const it = byId.get(id);
      if (it) setSelected([it.key]);
      showTab("library");
    },
  };
  window.ZoteroPane = ZoteroPane;
  window.Zotero_Tabs = { selectedType: "library", selectedID: "zotero-pane" };
  window.MozXULElement = { insertFTLIfNeeded: () => {} };

  const prefsStore = {
    get: (k) => {
      const v = localStorage.getItem(PREFIX + k);
      return v === null ? undefined : JSON.parse(v);
    },
    set: (k, v) => localStorage.setItem(PREFIX + k, JSON.stringify(v)),
  };
  // The harness must not re-register the gateway's data directory (it has its own library).
  if (prefsStore.get("extensions.zocrates.registerOnStartup") === undefined)
    prefsStore.set("extensions.zocrates.registerOnStartup", false);
  if (prefsStore.get("extensions.zocrates.gatewayURL") === undefined)
    prefsStore.set("extensions.zocrates.gatewayURL", `${location.origin}/gateway`);

  const Zotero = {
    initializationPromise: Promise.resolve(),
    unlockPromise: Promise.resolve(),
    uiReadyPromise: Promise.resolve(),
    isMac: /Mac/.test(navigator.platform),
    // Zotero's UI language; the page's ?locale= stands in for Zotero's language setting.
    locale: new URLSearchParams(location.search).get("locale") || "en-US",
    debug: (m) => {
      zh.log.push(m);
      if (/failed|error|could not/i.test(m)) console.warn(m);
    },
    getMainWindows: () => [window],
    getMainWindow: () => window,
    DataDirectory: { dir: DATA_DIR },
    Prefs: {
      get: (k, global) => {
        if (!global) throw new Error("the plugin uses full pref names");
        return prefsStore.get(k);
      },
      set: (k, v, global) => {
        if (!global) throw new Error("the plugin uses full pref names");
        prefsStore.set(k, v);
      },
    },
    PreferencePanes: { register: async () => "zotero-prefpane-zocrates" },
    Utilities: {
      Internal: {
        openPreferences: (paneID) => openPrefs(paneID),
        copyTextToClipboard: (text) => zh.copied.push(String(text)),
      },
    },
    Libraries: {
      userLibraryID: 1,
      get: (id) =>
        id === 1
          ? { libraryID: 1, libraryType: "user", editable: true, name: "My Library" }
          : false,
    },
    Groups: { getGroupIDFromLibraryID: () => false },
    Notes: { AUTO_SYNC_DELAY: 15 },
    // A note as Zotero saves one: recorded, and shown in the note view (showNote).
    Item: class {
      constructor(type) {
        this.itemType = type;
        this.collections = [];
      }
      setNote(html) {
        this.html = html;
      }
      addToCollection(id) {
        this.collections.push(id);
      }
      async saveTx(options) {
        this.id = 5000 + zh.notes.length;
        this.key = `NOTE${String(zh.notes.length).padStart(4, "2")}`;
        zh.notes.push({
          id: this.id,
          key: this.key,
          libraryID: this.libraryID,
          parentKey: this.parentKey || null,
          collections: this.collections,
          html: this.html,
          options,
        });
        showNote(this.html);
      }
    },
    Annotations: {
      getCacheImagePath: (item) => cachePath(item),
      hasCacheImage: async (item) => cacheFiles.has(cachePath(item)),
    },
    PDFWorker: {
      renderAttachmentAnnotations: async (attachmentID) => {
        zh.rendered.push(attachmentID);
        if (figure) cacheFiles.set(cachePath({ key: figure.annotationKey }), await renderFigure());
        return figure ? 1 : 0;
      },
    },
    Items: {
      getByLibraryAndKey: (_lib, key) =>
        figure && key === figure.annotationKey
          ? zAnnotation()
          : byKey.has(key)
            ? zItem(byKey.get(key))
            : false,
      getByLibraryAndKeyAsync: async (_lib, key) => {
        if (byKey.has(key)) return zItem(byKey.get(key));
        const it = items.find((x) => x.attachmentKey === key);
        return it ? zAttachment(it) : false;
      },
      get: (id) =>
        byId.has(id)
          ? zItem(byId.get(id))
          : byId.has(id - 1000)
            ? zAttachment(byId.get(id - 1000))
            : false,
    },
    Notifier: {
      registerObserver: (observer, types) => {
        const id = `obs-${++observerSeq}`;
        observers.set(id, { observer, types });
        return id;
      },
      unregisterObserver: (id) => observers.delete(id),
    },
    Reader: {
      listeners: [],
      registerEventListener(type, handler) {
        this.listeners.push({ type, handler });
      },
      getByTabID: (tabID) => {
        if (tabID !== "reader-tab" || !state.reader) return null;
        const it = byKey.get(state.reader.itemKey);
        return it ? { _item: zAttachment(it), _window: window } : null;
      },
      open: async (attachmentID, location) => {
        const it = byId.get(attachmentID - 1000);
        const page =
          location && Number.isInteger(location.pageIndex) ? location.pageIndex + 1 : null;
        zh.readerOpens.push({
          attachmentID,
          itemKey: it?.key,
          pageIndex: location?.pageIndex ?? null,
        });
        zh.opened.push({ itemKey: it?.key, page });
        if (it) openReader(it.key, page);
      },
    },
    launchURL: (url) => zh.log.push(`launchURL ${url}`),
  };
  zh.Zotero = Zotero;

  const IOUtils = {
    read: async (path) => {
      if (!cacheFiles.has(path))
        throw new Error(`NotFoundError: Could not open the file at ${path}`);
      return cacheFiles.get(path);
    },
    readUTF8: async (path) => {
      if (path !== TOKEN_FILE) throw new Error(`NotFoundError: Could not open the file at ${path}`);
      const res = await fetch("/harness/token", { cache: "no-store" });
      if (!res.ok) throw new Error(`NotFoundError: Could not open the file at ${path}`);
      return res.text();
    },
  };
  const PathUtils = { join: (...parts) => parts.join("/").replace(/\/+/g, "/") };

  // ---------------------------------------------------------------- library tab

  function inCollection(it, key) {
    if (!key) return true;
    const keys = new Set([key]);
    for (let grew = true; grew;) {
      grew = false;
      for (const c of collections) {
        if (c.parentKey && keys.has(c.parentKey) && !keys.has(c.key)) {
          keys.add(c.key);
          grew = true;
        }
      }
    }
    return (it.collections || []).some((k) => keys.has(k));
  }

  function renderCollections() {
    const depth = (c) => (c.parentKey ? 1 + depth(collectionByKey(c.parentKey) || {}) : 1);
    const rows = [{ key: null, name: fixture.library || "My Library", d: 0 }];
    const add = (parent) => {
      for (const c of collections.filter((x) => (x.parentKey || null) === parent)) {
        rows.push({ key: c.key, name: c.name, d: depth(c) });
        add(c.key);
      }
    };
    add(null);
    $("zw-collections").replaceChildren(
      ...rows.map((r) =>
        h(
          "button",
          {
            type: "button",
            class: "zw-collection",
            "data-key": r.key || "",
            "data-depth": String(r.d),
            "aria-current": String(state.collection === r.key),
            on: { click: () => selectCollection(r.key) },
          },
          [r.name],
        ),
      ),
    );
  }

  function renderItems() {
    const shown = items.filter((it) => inCollection(it, state.collection));
    $("zw-items").replaceChildren(
      ...shown.map((it) =>
        h(
          "div",
          {
            class: "zw-item",
            role: "option",
            "data-key": it.key,
            "aria-selected": String(state.selected.includes(it.key)),
            on: {
              click: (e) => {
                if (e.ctrlKey || e.metaKey)
                  setSelected(
                    state.selected.includes(it.key)
                      ? state.selected.filter((k) => k !== it.key)
                      : [...state.selected, it.key],
                  );
                else setSelected([it.key]);
              },
              dblclick: () => openReader(it.key, 1),
            },
          },
          [
            h("span", {}, [it.title]),
            h("span", {}, [(it.creators || []).join(", ")]),
            h("span", {}, [String(it.year || "")]),
          ],
        ),
      ),
    );
  }

  function setSelected(keys) {
    state.selected = [...keys];
    renderItems();
    itemsSelect.fire();
  }

  function selectCollection(key) {
    state.collection = key || null;
    renderCollections();
    renderItems();
    collectionsSelect.fire();
  }

  // ---------------------------------------------------------------- reader tab

  function renderReader() {
    const r = state.reader;
    const it = r && byKey.get(r.itemKey);
    $("zw-tab-reader").hidden = !it;
    if (!it) return;
    $("zw-tab-reader").textContent =
      `${(it.creators || [])[0] || ""} ${it.year || ""} – ${it.title}`.trim();
    $("zw-reader-toolbar").textContent = `${it.title} · page ${r.page || 1}`;
    const known = r.itemKey === fixture.reader?.itemKey && r.page === fixture.reader?.page;
    const paragraphs = known
      ? fixture.reader.paragraphs || []
      : [`Page ${r.page || 1} of “${it.title}”.`];
    $("zw-page").replaceChildren(
      known && r.heading ? h("h2", {}, [r.heading]) : null,
      ...paragraphs.map((p) => h("p", {}, [p])),
      known && figure ? figureNode() : null,
      h("div", { class: "zw-folio" }, [String(r.page || 1)]),
    );
  }

  /** The page's figure, framed as Zotero frames an image annotation. */
  function figureNode() {
    const canvas = drawFigure(doc.createElement("canvas"));
    return h(
      "figure",
      {
        class: "zw-figure",
        id: "zw-figure",
        "data-annotation-key": figure.annotationKey,
        on: { contextmenu: (e) => openAnnotationMenu(e) },
      },
      [canvas, h("figcaption", {}, [figure.caption || ""])],
    );
  }

  /** A line chart: deviance by iteration of two optimizers. */
  function drawFigure(canvas) {
    canvas.width = 480;
    canvas.height = 240;
    const g = canvas.getContext("2d");
    g.fillStyle = "#fff";
    g.fillRect(0, 0, 480, 240);
    g.strokeStyle = "#333";
    g.lineWidth = 1.5;
    g.beginPath();
    g.moveTo(50, 20);
    g.lineTo(50, 200);
    g.lineTo(460, 200);
    g.stroke();
    g.font = "12px sans-serif";
    g.fillStyle = "#333";
    g.fillText("deviance", 4, 16);
    g.fillText("iteration", 400, 226);
    const curves = [
      ["#2e6fd8", (x) => 160 * Math.exp(-x / 60), "BOBYQA"],
      ["#d8792e", (x) => 150 * Math.exp(-x / 140) + 6, "Nelder-Mead"],
    ];
    curves.forEach(([color, f, label], k) => {
      g.strokeStyle = color;
      g.lineWidth = 2.5;
      g.beginPath();
      for (let x = 0; x <= 400; x += 4) g.lineTo(52 + x, 190 - f(x));
      g.stroke();
      g.fillStyle = color;
      g.fillText(label, 360, 40 + 18 * k);
    });
    return canvas;
  }

  /** Zotero's annotation context menu: what the createAnnotationContextMenu listeners append. */
  function openAnnotationMenu(e) {
    e?.preventDefault?.();
    const it = byKey.get(fixture.reader.itemKey);
    const items = [];
    const event = {
      type: "createAnnotationContextMenu",
      reader: { _item: zAttachment(it), _window: window },
      params: { ids: [figure.annotationKey], currentID: figure.annotationKey, x: 0, y: 0 },
      append: (...menuItems) => items.push(...menuItems),
    };
    for (const l of Zotero.Reader.listeners)
      if (l.type === "createAnnotationContextMenu") l.handler(event);
    const menu = $("zw-annotation-menu");
    menu.replaceChildren(
      h("button", { type: "button", class: "zw-menuitem", disabled: true }, ["Add to Note"]),
      ...items.map((item) =>
        h(
          "button",
          {
            type: "button",
            class: "zw-menuitem zw-plugin-menuitem",
            on: {
              click: () => {
                menu.hidden = true;
                item.onCommand();
              },
            },
          },
          [item.label],
        ),
      ),
    );
    const host = $("zw-reader").getBoundingClientRect();
    const rect = $("zw-figure").getBoundingClientRect();
    menu.style.left = `${rect.left - host.left + 60}px`;
    menu.style.top = `${rect.top - host.top + 60}px`;
    menu.hidden = false;
    return items.length;
  }
  zh.openAnnotationMenu = () => openAnnotationMenu(null);

  function openReader(itemKey, page) {
    const base =
      fixture.reader && fixture.reader.itemKey === itemKey ? fixture.reader : { itemKey };
    state.reader = { ...base, itemKey, page: page || 1 };
    renderReader();
    showTab("reader");
  }

  // ---------------------------------------------------------------- notes and the View menu

  /** The saved note in the item pane; its links do what Zotero's zotero://open-pdf handler
   * does (ZoteroProtocolHandler: a file attachment's key, page is 1-based). */
  function showNote(html) {
    showTab("library");
    $("zw-note").hidden = false;
    $("zw-note-body").innerHTML = html; // the harness page's own element, as the note editor
  }
  $("zw-note-body").addEventListener("click", (e) => {
    const a = e.target.closest("a[href]");
    if (!a) return;
    e.preventDefault();
    const m =
      /^zotero:\/\/open-pdf\/(?:library|groups\/(\d+))\/items\/([A-Z0-9]{8})(?:\?page=(\d+))?$/.exec(
        a.getAttribute("href"),
      );
    zh.noteLinks = (zh.noteLinks || []).concat(a.getAttribute("href"));
    if (!m) return;
    const it = items.find((x) => (x.attachmentKey || x.key) === m[2]);
    if (!it) return;
    Zotero.Reader.open(1000 + it.id, m[3] ? { pageIndex: Number(m[3]) - 1 } : undefined);
  });
  zh.hideNote = () => ($("zw-note").hidden = true);
  /** Back to the library tab with the last saved note open (after one of its links). */
  zh.showNoteAgain = () => {
    showTab("library");
    $("zw-note").hidden = false;
  };

  doc.createXULElement = (tag) => doc.createElement(`zw-${tag}`);
  $("zw-view-menu-button").addEventListener("click", () => {
    $("menu_viewPopup").hidden = !$("menu_viewPopup").hidden;
  });
  $("menu_viewPopup").addEventListener("click", (e) => {
    const item = e.target.closest("zw-menuitem");
    if (!item) return;
    $("menu_viewPopup").hidden = true;
    item.dispatchEvent(new Event("command"));
  });

  function showTab(tab) {
    state.tab = tab;
    window.Zotero_Tabs.selectedType = tab === "reader" ? "reader" : "library";
    window.Zotero_Tabs.selectedID = tab === "reader" ? "reader-tab" : "zotero-pane";
    $("zw-tab-library").setAttribute("aria-selected", String(tab === "library"));
    $("zw-tab-reader").setAttribute("aria-selected", String(tab === "reader"));
    $("zw-library").hidden = tab !== "library";
    $("zw-reader").hidden = tab !== "reader";
    $("zw-popup").hidden = true;
    $("zw-annotation-menu").hidden = true;
    notify("select", "tab", [window.Zotero_Tabs.selectedID]);
  }

  /** What Zotero's reader does on a text selection: renderTextSelectionPopup listeners. */
  function onReaderMouseUp() {
    const sel = doc.getSelection();
    const text = sel ? sel.toString().trim() : "";
    const popup = $("zw-popup");
    if (!text || !state.reader) {
      popup.hidden = true;
      return;
    }
    const it = byKey.get(state.reader.itemKey);
    popup.replaceChildren();
    const event = {
      reader: { _item: zAttachment(it), _window: window },
      doc,
      params: { annotation: { text, position: { pageIndex: (state.reader.page || 1) - 1 } } },
      append: (...nodes) => {
        for (const n of nodes) {
          if (n.tagName === "BUTTON") {
            n.id = n.id || "zw-ask-zocrates";
            n.addEventListener("click", () => (popup.hidden = true));
          }
          popup.append(n);
        }
      },
    };
    for (const l of Zotero.Reader.listeners)
      if (l.type === "renderTextSelectionPopup") l.handler(event);
    const rect = sel.getRangeAt(0).getBoundingClientRect();
    const host = $("zw-reader").getBoundingClientRect();
    popup.style.left = `${Math.max(8, rect.left - host.left)}px`;
    popup.style.top = `${rect.bottom - host.top + 8}px`;
    popup.hidden = false;
  }
  $("zw-page").addEventListener("mouseup", onReaderMouseUp);

  /** Select `text` on the reader page as a user would (for the runner). */
  zh.selectReaderText = (text) => {
    showTab("reader");
    const walker = doc.createTreeWalker($("zw-page"), NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const at = node.data.indexOf(text);
      if (at === -1) continue;
      const range = doc.createRange();
      range.setStart(node, at);
      range.setEnd(node, at + text.length);
      const sel = doc.getSelection();
      sel.removeAllRanges();
      sel.addRange(range);
      onReaderMouseUp();
      return true;
    }
    return false;
  };

  // ---------------------------------------------------------------- settings window

  function openPrefs() {
    $("zw-prefs").hidden = false;
    // preferences.xhtml: <vbox onload="Zotero.Zocrates.hooks.onPrefsEvent('load', { window })">
    if (!zh.prefsView) {
      zh.prefsLoading = hooks.onPrefsEvent("load", { window }).then(() => {
        zh.prefsView = zh.prefsMounted;
      });
    } else zh.prefsView.refresh();
  }
  $("zw-prefs-close").addEventListener("click", () => ($("zw-prefs").hidden = true));
  zh.openPrefs = () => Zotero.Utilities.Internal.openPreferences("zotero-prefpane-zocrates");
  zh.closePrefs = () => ($("zw-prefs").hidden = true);

  // ---------------------------------------------------------------- the plugin

  const app = createApp({
    Zotero,
    rootURI: `${location.origin}/addon/`,
    fetch: (...a) => fetch(...a),
    IOUtils,
    PathUtils,
    version: "harness",
    l10nResources: RESOURCES,
  });
  const onPrefsLoad = app.onPrefsLoad.bind(app);
  app.onPrefsLoad = async (win) => (zh.prefsMounted = await onPrefsLoad(win));
  const hooks = createHooks(app);
  Zotero.Zocrates = { app, hooks };
  zh.app = app;

  $("zw-tab-library").addEventListener("click", () => showTab("library"));
  $("zw-tab-reader").addEventListener("click", () => showTab("reader"));
  renderCollections();
  renderItems();
  renderReader();

  await hooks.onStartup(); // ready, startup, addToWindow(window): the stylesheet and the pane
  const mounted = app.data.windows.get(window);
  if (!mounted?.pane) throw new Error("the pane was not mounted (no #zotero-context-pane?)");
  zh.mounted = mounted;
  zh.pane = mounted.pane;
  zh.controller = mounted.pane.controller;
  zh.selectItems = (keys) => {
    showTab("library");
    setSelected(keys);
  };
  zh.selectCollection = selectCollection;
  zh.showLibrary = () => showTab("library");
  zh.openReader = openReader;
  showTab("library");
  // the pane's first load (sessions, the last chat) has been started by mountSidebar
  await new Promise((resolve) => {
    const check = () =>
      zh.controller.state.phase !== "starting" && !zh.controller.state.loadingSession
        ? resolve()
        : setTimeout(check, 20);
    check();
  });
  if (new URLSearchParams(location.search).has("prefs")) zh.openPrefs();
}

zh.ready = start().catch((err) => {
  zh.error = String(err?.stack || err);
  console.error(zh.error);
  throw err;
});
