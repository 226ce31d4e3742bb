/** The Zotero side of the pane: where it docks, what it reads, the reader's popup button. */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { createApp } from "../src/zotero/app.js";
import { findDock, mountSidebar, zoteroSelection } from "../src/zotero/sidebar.js";
import { fakeFiles, fakeZotero } from "./fake-zotero.js";
import { PNG_BASE64 } from "./fixtures.js";
import { readResources } from "./l10n-fixture.js";

const item = (key, title, parent = null) => ({
  key,
  parentItem: parent,
  getDisplayTitle: () => title,
});

describe("sidebar: docking and selection", () => {
  test("docks after #zotero-context-pane (beside the library and reader tabs), else after #tabs-deck", () => {
    const parent = { id: "hbox" };
    const els = {
      "zotero-context-pane": { parentNode: parent },
      "tabs-deck": { parentNode: parent },
    };
    assert.equal(
      findDock({ getElementById: (id) => els[id] || null }).after,
      els["zotero-context-pane"],
    );
    assert.equal(
      findDock({ getElementById: (id) => (id === "tabs-deck" ? els[id] : null) }).after,
      els["tabs-deck"],
    );
    assert.equal(findDock({ getElementById: () => null }), null);
  });

  test("a window without the dock gets no pane, and nothing breaks", () => {
    const logs = [];
    const mounted = mountSidebar(
      { document: { getElementById: () => null } },
      { Zotero: {}, log: (m) => logs.push(m) },
    );
    assert.equal(typeof mounted.unmount, "function");
    assert.match(logs[0], /no place for the pane/);
  });

  test("library tab: the selected items and collection; reader tab: the open paper", () => {
    const lme4 = item("ABCD2345", "lme4");
    const win = {
      ZoteroPane: {
        getSelectedItems: () => [lme4, item("BRMS7890", "brms")],
        getSelectedCollection: () => ({ key: "COLL2345", name: "Mixed models" }),
      },
      Zotero_Tabs: { selectedType: "library", selectedID: "zotero-pane" },
    };
    const Zotero = {
      Reader: {
        getByTabID: (id) =>
          id === "tab-1" ? { _item: item("ATTA2345", "Full Text PDF", lme4) } : null,
      },
    };
    const library = zoteroSelection(win, Zotero);
    assert.deepEqual(
      library.selectedItems.map((i) => i.key),
      ["ABCD2345", "BRMS7890"],
    );
    assert.deepEqual(library.collection, { key: "COLL2345", name: "Mixed models" });
    win.Zotero_Tabs = { selectedType: "reader", selectedID: "tab-1" };
    const reader = zoteroSelection(win, Zotero);
    assert.deepEqual(reader.selectedItems, [
      { key: "ATTA2345", title: "Full Text PDF", parentKey: "ABCD2345", parentTitle: "lme4" },
    ]);
    assert.equal(reader.collection.key, "COLL2345");
    win.Zotero_Tabs = { selectedType: "note", selectedID: "tab-2" };
    assert.deepEqual(zoteroSelection(win, Zotero).selectedItems, []);
  });
});

describe("app: the reader's text selection and the preferences", () => {
  function setup(files = {}) {
    const z = fakeZotero();
    const listeners = [];
    z.Zotero.Reader = {
      registerEventListener: (type, handler, pluginID) =>
        listeners.push({ type, handler, pluginID }),
    };
    z.Zotero.getMainWindow = () => z.windows[0];
    const app = createApp({
      Zotero: z.Zotero,
      rootURI: "file:///p/",
      l10nResources: readResources(),
      fetch: async () => ({ ok: true, status: 200, text: async () => "{}" }),
      ...fakeFiles(files),
    });
    return { z, app, listeners };
  }

  test("startup registers the selection popup listener for this plugin", async () => {
    const { app, listeners, z } = setup();
    z.store["extensions.zocrates.registerOnStartup"] = false;
    await app.startup();
    assert.equal(app.data.prefPaneID, "plugin-pane-1");
    assert.deepEqual(
      listeners.map((l) => [l.type, l.pluginID]),
      [
        ["renderTextSelectionPopup", "zocrates@zocrates.dev"],
        ["createAnnotationContextMenu", "zocrates@zocrates.dev"],
      ],
    );
  });

  test("an image annotation's context menu pins its image; other annotations get nothing", async () => {
    const png = new Uint8Array(Buffer.from(PNG_BASE64, "base64"));
    const { app, z } = setup({ "/cache/ANNO2345.png": png });
    const paper = { key: "ABCD2345", getDisplayTitle: () => "lme4" };
    const attachment = { id: 12, key: "ATTA2345", libraryID: 1, parentItem: paper };
    const annotations = {
      ANNO2345: {
        key: "ANNO2345",
        parentID: 12,
        parentItem: attachment,
        annotationType: "image",
        annotationComment: "",
        annotationPosition: '{"pageIndex": 6}',
      },
      HIGH2345: { key: "HIGH2345", annotationType: "highlight" },
    };
    z.Zotero.Items = { getByLibraryAndKey: (_lib, key) => annotations[key] || false };
    z.Zotero.Annotations = {
      hasCacheImage: async () => true,
      getCacheImagePath: ({ key }) => `/cache/${key}.png`,
    };
    const pinned = [];
    const notes = [];
    const win = z.windows[0];
    app.data.windows.set(win, { pinSnippet: (s) => pinned.push(s), notify: (m) => notes.push(m) });
    const reader = { _item: attachment, _window: win };
    const menu = [];
    app.annotationContextMenu({
      reader,
      params: { ids: ["HIGH2345"] },
      append: (i) => menu.push(i),
    });
    assert.deepEqual(menu, [], "a highlight: no item");
    app.annotationContextMenu({
      reader,
      params: { ids: ["ANNO2345"] },
      append: (i) => menu.push(i),
    });
    assert.equal(menu.length, 1);
    assert.equal(menu[0].label, "Ask Zocrates about this image");
    menu[0].onCommand();
    await new Promise((resolve) => setTimeout(resolve, 10));
    assert.deepEqual(
      pinned.map((s) => [s.kind, s.item_key, s.page, s.image.data]),
      [["image", "ABCD2345", 7, PNG_BASE64]],
    );
    // an image Zotero cannot give: the pane says so, in words
    z.Zotero.Annotations.hasCacheImage = async () => false;
    z.Zotero.PDFWorker = {
      renderAttachmentAnnotations: async () => {
        throw new Error("Item must be a PDF attachment");
      },
    };
    assert.equal(await app.pinImages([{ libraryID: 1, key: "ANNO2345" }], win), 0);
    assert.match(notes[0], /Zotero could not give the image of that annotation \(no_image\)/);
  });

  test("the popup gets “Ask Zocrates about this”, the pane is told, a click pins the passage", () => {
    const { app, z } = setup();
    const offered = [];
    app.onReaderSelectionChange((s) => offered.push(s));
    const pinned = [];
    const win = z.windows[0];
    app.data.windows.set(win, { pinSnippet: (s) => pinned.push(s) });
    const appended = [];
    const button = {
      listeners: {},
      addEventListener(t, f) {
        this.listeners[t] = f;
      },
    };
    const parent = { key: "ABCD2345", getDisplayTitle: () => "lme4" };
    app.renderSelectionPopup({
      reader: { _item: { key: "ATTA2345", parentItem: parent }, _window: win },
      doc: { createElement: (tag) => (assert.equal(tag, "button"), button) },
      params: { annotation: { text: "  bobyqa\n first ", position: { pageIndex: 2 } } },
      append: (el) => appended.push(el),
    });
    const snippet = { text: "bobyqa first", item_key: "ABCD2345", page: 3, title: "lme4" };
    assert.deepEqual(offered, [snippet]);
    assert.equal(appended[0], button);
    assert.equal(button.textContent, "Ask Zocrates about this");
    assert.equal(button.title, "Pin this passage to your next question in the Zocrates pane");
    button.listeners.click();
    assert.deepEqual(pinned, [snippet]);
  });

  test("the preferences pane mounts into the fragment's root; without it, nothing happens", async () => {
    const { app } = setup();
    assert.equal(await app.onPrefsLoad({ document: { getElementById: () => null } }), null);
  });
});
