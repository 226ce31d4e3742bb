/** The Zotero side of the pane: where it docks, what it reads, the reader's popup button. */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { createApp } from "../src/zotero/app.js";
import { findDock, mountSidebar, zoteroSelection } from "../src/zotero/sidebar.js";
import { fakeFiles, fakeZotero } from "./fake-zotero.js";
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
  function setup() {
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
      ...fakeFiles({}),
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
      [["renderTextSelectionPopup", "zocrates@zocrates.dev"]],
    );
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
