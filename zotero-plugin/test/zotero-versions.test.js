/**
 * The built .xpi against the API surface of each Zotero major it declares (7, 8, 9, 10):
 * bootstrap.js and the bundle start, a main window loads and gets the pane, the selection,
 * a citation, the reader's text selection and the settings go through Zotero's APIs as that
 * version has them, then the window unloads and the plugin shuts down. A call that a version
 * lacks fails here (test/zotero-versions.js says where each surface comes from).
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import vm from "node:vm";
import { buildPlugin } from "../scripts/build.mjs";
import { readZip } from "../scripts/zip.mjs";
import { ANSWER, jsonResponse, pausedSession, PNG_BASE64, SESSION_ID } from "./fixtures.js";
import { fakeFiles } from "./fake-zotero.js";
import { ZOTERO_VERSIONS, zoteroSurface } from "./zotero-versions.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const pkg = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8"));
const PLUGIN_ID = "zocrates@zocrates.dev";
const ROOT_URI = `jar:file:///profile/extensions/${PLUGIN_ID}.xpi!/`;
const LME4 = {
  id: 11,
  key: "ABCD2345",
  title: "Fitting Linear Mixed-Effects Models Using lme4",
  attachment: { id: 12, key: "ATTA2345" },
};
const BRMS = {
  id: 21,
  key: "BRMS7890",
  title: "brms: An R Package for Bayesian Multilevel Models",
  attachment: { id: 22, key: "ATTB7890" },
};
const COLLECTION = { key: "COLL2345", name: "Mixed models", libraryID: 1 };
const FIGURE = {
  key: "ANNO2345",
  attachmentKey: LME4.attachment.key,
  type: "image",
  comment: "Figure 2: profile zeta",
  pageIndex: 5,
};

/** GET /sessions/{id}: the paused turn's question, then its completed answer. */
function completedSession() {
  const session = pausedSession();
  const [question] = session.messages;
  return {
    ...session,
    messages: [
      question,
      {
        id: "a9",
        role: "assistant",
        author: "synthesizer",
        text: ANSWER,
        thought: false,
        timestamp: 1726000009,
        invocation_id: question.invocation_id,
        intermediate: false,
      },
    ],
    pending_hitl: null,
  };
}

/** The gateway as the plugin meets it at start-up: register, the chat list, one chat. */
function gatewayFetch(requests) {
  return async (url, init = {}) => {
    const { pathname } = new URL(url);
    requests.push(`${init.method || "GET"} ${pathname}${init.body ? ` ${init.body}` : ""}`);
    if (pathname === "/register")
      return jsonResponse({ status: "success", zotero_data_dir: "/home/me/Zotero" });
    if (pathname === "/sessions") {
      return jsonResponse({
        status: "success",
        sessions: [
          {
            id: SESSION_ID,
            title: "lmer optimizers",
            created_at: 1726000000,
            updated_at: 1726000100,
            event_count: 2,
          },
        ],
      });
    }
    if (pathname === `/sessions/${SESSION_ID}`)
      return jsonResponse({ status: "success", session: completedSession() });
    if (pathname === "/library/prioritize")
      return jsonResponse({
        status: "success",
        item_keys: JSON.parse(init.body).item_keys,
        chunks_pending: 12,
      });
    return jsonResponse({ status: "error", code: "not_found", message: pathname }, 404);
  };
}

/** Objects made inside the plugin's sandbox (another realm) as plain data. */
const plain = (value) => JSON.parse(JSON.stringify(value));

async function until(check, what, ms = 3000) {
  const end = Date.now() + ms;
  for (;;) {
    const value = check();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** bootstrap.js from the built .xpi in a sandbox with Zotero's globals, as plugins.js gives them. */
function boot(z, fetch, { IOUtils, PathUtils }) {
  const booted = { chrome: null, sandbox: null };
  const globals = {
    Zotero: z.Zotero,
    fetch,
    IOUtils,
    PathUtils,
    TextDecoder,
    // in the plugin sandbox's wantGlobalProperties too (xpcom/plugins.js, 7.0 to 10.0)
    URL,
    URLSearchParams,
    APP_SHUTDOWN: 2,
    Components: {
      classes: {
        "@mozilla.org/addons/addon-manager-startup;1": {
          getService: () => ({
            registerChrome: (uri, entries) => {
              booted.chrome = { uri, entries, destructed: false };
              return { destruct: () => (booted.chrome.destructed = true) };
            },
          }),
        },
      },
      interfaces: { amIAddonManagerStartup: {} },
    },
    Services: {
      io: { newURI: (s) => s },
      scriptloader: {
        loadSubScript(url, ctx) {
          vm.runInContext(
            files.get(url.slice(ROOT_URI.length)).toString(),
            vm.createContext({ ...globals, ...ctx }),
          );
        },
      },
    },
  };
  const sandbox = vm.createContext({ ...globals });
  vm.runInContext(files.get("bootstrap.js").toString(), sandbox);
  booted.sandbox = sandbox;
  return booted;
}

let out;
let files;
before(async () => {
  out = mkdtempSync(path.join(tmpdir(), "zocrates-versions-"));
  files = await readZip(readFileSync((await buildPlugin({ out })).xpi));
});
after(() => rmSync(out, { recursive: true, force: true }));

test("the manifest declares Zotero 7.0 to 10.0.* and nothing newer", () => {
  const zotero = JSON.parse(files.get("manifest.json")).applications.zotero;
  assert.equal(zotero.strict_min_version, "6.999");
  assert.equal(zotero.strict_max_version, "10.0.*");
  assert.ok(zotero.update_url.startsWith("https://"), "every version requires update_url");
  const declared = (v) => Number.parseInt(v, 10) <= Number.parseInt(zotero.strict_max_version, 10);
  for (const { major } of ZOTERO_VERSIONS)
    assert.ok(declared(String(major)), `Zotero ${major} is declared`);
  assert.ok(!declared("11"), "Zotero 11 is not feature-frozen: it must not be declared");
});

test("no locale/ folder: the Fluent files are in the script, Zotero never localizes the plugin", () => {
  // In a real Zotero 10, an add-on with a locale/ folder makes Zotero rebuild its plugins'
  // Fluent source, every window re-translates, and the main window's own untranslated
  // browser-window-* buttons reject that unhandled: "uncaught exception: undefined" in the
  // console (tests/real_zotero). The plugin localizes its strings itself (src/l10n.js).
  assert.deepEqual(
    [...files.keys()].filter((n) => n.startsWith("locale/") || n.endsWith(".ftl")),
    [],
  );
  const script = String(files.get("content/scripts/zocrates.js"));
  assert.match(script, /zocrates-pref-title =/);
  assert.match(script, /zocrates-scope-detail-collections =/);
});

for (const { major, version } of ZOTERO_VERSIONS) {
  describe(`Zotero ${version} (API surface of ${major})`, () => {
    test("start-up, a window with the pane, selection, citation, reader selection, settings, unload, shutdown", async () => {
      const z = zoteroSurface(major, {
        items: [LME4, BRMS],
        collection: COLLECTION,
        annotations: [FIGURE],
      });
      const requests = [];
      const { IOUtils, PathUtils } = fakeFiles({
        "/home/me/Zotero/zocrates-data/gateway.token": "tok",
        [z.cachePath(FIGURE.key)]: new Uint8Array(Buffer.from(PNG_BASE64, "base64")),
      });
      const booted = boot(z, gatewayFetch(requests), { IOUtils, PathUtils });
      const { sandbox } = booted;

      // start-up: chrome, the bundle, settings pane, reader popup listener, the open window
      await sandbox.startup({ id: PLUGIN_ID, version: pkg.version, rootURI: ROOT_URI }, 1);
      const plugin = z.Zotero.Zocrates;
      assert.ok(plugin?.data.initialized, "Zotero.Zocrates is set up");
      assert.deepEqual(JSON.parse(JSON.stringify(booted.chrome.entries)), [
        ["content", "zocrates", `${ROOT_URI}content/`],
      ]);
      assert.equal(z.panes.length, 1);
      assert.equal(z.panes[0].pluginID, PLUGIN_ID);
      assert.equal(z.panes[0].src, `${ROOT_URI}content/preferences.xhtml`);
      assert.deepEqual(
        z.readerListeners.map((l) => [l.type, l.pluginID]),
        [
          ["renderTextSelectionPopup", PLUGIN_ID],
          ["createAnnotationContextMenu", PLUGIN_ID],
        ],
      );
      await plugin.data.registering;
      assert.equal(plugin.data.registration.ok, true);

      const doc = z.document;
      const container = doc.getElementById("zocrates-pane-container");
      assert.ok(container, "the pane is in the main window");
      const dock = doc.getElementById("zotero-context-pane");
      assert.equal(dock.nextElementSibling.id, "zocrates-pane-resizer");
      assert.equal(
        dock.nextElementSibling.nextElementSibling,
        container,
        "docked after the context pane",
      );
      assert.deepEqual(z.ftl, [], "no Fluent file is inserted into Zotero's window");
      assert.ok(doc.getElementById("zocrates-stylesheet"));

      // View > Zocrates Pane (a checkbox item of #menu_viewPopup) and Ctrl+Shift+E hide and
      // show the pane
      const menuItem = doc.getElementById("zocrates-view-pane-menuitem");
      assert.equal(menuItem?.parentNode.id, "menu_viewPopup");
      assert.deepEqual(
        ["type", "data-zc-l10n", "label", "accesskey", "acceltext", "checked"].map((a) =>
          menuItem.getAttribute(a),
        ),
        ["checkbox", "zocrates-menu-view-pane", "Zocrates Pane", "Z", "Ctrl+Shift+E", "true"],
      );
      const collapsed = () => container.getAttribute("data-collapsed");
      menuItem.dispatchEvent(new doc.defaultView.Event("command"));
      assert.equal(collapsed(), "true");
      assert.equal(menuItem.getAttribute("checked"), "false");
      assert.equal(z.store["extensions.zocrates.paneOpen"], false);
      const press = (keys) => {
        const e = new doc.defaultView.Event("keydown", { bubbles: true, cancelable: true });
        Object.assign(e, { key: "E", ctrlKey: false, metaKey: false, altKey: false }, keys);
        doc.defaultView.dispatchEvent(e);
        return e.defaultPrevented;
      };
      assert.equal(press({ ctrlKey: true, shiftKey: true }), true);
      assert.equal(collapsed(), "false");
      assert.equal(menuItem.getAttribute("checked"), "true");
      assert.equal(press({ ctrlKey: true, shiftKey: true, key: "e" }), true);
      assert.equal(collapsed(), "true");
      assert.equal(press({ ctrlKey: true, shiftKey: false }), false, "Ctrl+E is not ours");
      assert.equal(press({ ctrlKey: true, shiftKey: true, altKey: true }), false);
      menuItem.dispatchEvent(new doc.defaultView.Event("command"));
      assert.equal(collapsed(), "false");

      // the chat list and the last chat load; the answer's citations are links
      const mounted = plugin.data.windows.get(z.window);
      const controller = mounted.pane.controller;
      await until(
        () => controller.state.session?.id === SESSION_ID && controller.state.messages.length === 2,
        "the chat",
      );
      assert.match(requests[0], /^POST \/register /);

      // selection: the items and collection as this version's ZoteroPane gives them
      z.select();
      mounted.pane.refreshSelection();
      const selection = controller.state.selection;
      assert.deepEqual(plain(selection.selectedItems.map((i) => i.key)), [LME4.key, BRMS.key]);
      assert.deepEqual(plain(selection.collection), { key: COLLECTION.key, name: COLLECTION.name });
      const called = new Set(z.calls.map((c) => c.name));
      if (major >= 10) {
        assert.ok(called.has("ZoteroPane.getSelectedCollections"));
        assert.ok(
          !called.has("ZoteroPane.getSelectedCollection"),
          "the removed getter is never called",
        );
        // several collections at once: one scope over their papers, named in the detail line
        const paper = ({ key, title }) => ({
          key,
          getDisplayTitle: () => title,
          isNote: () => false,
        });
        const pick = (key, name, items) => ({
          key,
          name,
          getChildItems: () => items.map(paper),
          getChildCollections: () => [],
        });
        const one = z.window.ZoteroPane.getSelectedCollections;
        // the collection scope is showing one collection; then a second is ctrl-clicked
        z.window.ZoteroPane.getSelectedCollections = () => [
          pick("FORE2345", "Forecasting", [LME4]),
        ];
        mounted.pane.refreshSelection();
        controller.setMode("collection");
        mounted.pane.view.render();
        z.window.ZoteroPane.getSelectedCollections = () => [
          pick("FORE2345", "Forecasting", [LME4]),
          pick("ECON2345", "Econometrics", [BRMS]),
        ];
        mounted.pane.refreshSelection();
        mounted.pane.view.render();
        const detail = container.querySelector(".zc-scope-detail").textContent;
        assert.match(detail, /^Forecasting, Econometrics, with their sub-collections: 2 papers/);
        z.window.ZoteroPane.getSelectedCollections = one;
        mounted.pane.refreshSelection();
        controller.setMode("items");
      } else {
        assert.ok(called.has("ZoteroPane.getSelectedCollection"));
      }

      // a citation opens the cited paper's PDF at the cited page (0-based pageIndex)
      mounted.pane.view.render();
      const link = await until(
        () =>
          [...container.querySelectorAll("a.zocrates-citation")].find(
            (a) => a.getAttribute("data-item-key") === LME4.key,
          ),
        "a citation link",
      );
      assert.equal(link.getAttribute("data-page"), "3");
      link.dispatchEvent(new doc.defaultView.Event("click", { bubbles: true, cancelable: true }));
      const opened = await until(
        () => z.calls.find((c) => c.name === "Zotero.Reader.open"),
        "Zotero.Reader.open",
      );
      assert.deepEqual(plain(opened.args.slice(0, 2)), [LME4.attachment.id, { pageIndex: 2 }]);
      if (major >= 10)
        assert.ok(z.calls.some((c) => c.name === "ZoteroPane.getSelectedLibraryIDs"));
      else assert.ok(z.calls.some((c) => c.name === "ZoteroPane.getSelectedLibraryID"));

      // the answer kept: a child note of the paper it cites most (ties: the first cited), its
      // links opening each paper's PDF at the cited page; copied with its citations
      container.querySelector(".zc-save-note").dispatchEvent(new doc.defaultView.Event("click"));
      const [note] = await until(() => (z.notes.length ? z.notes : null), "the saved note");
      assert.equal(note.itemType, "note");
      assert.equal(note.libraryID, 1);
      assert.equal(note.parentKey, LME4.key);
      assert.deepEqual(plain(note.options), { notifierData: { autoSyncDelay: 15 } });
      assert.match(note.note, /^<div data-schema-version="9">/);
      for (const href of [
        `zotero://open-pdf/library/items/${LME4.attachment.key}?page=3`,
        `zotero://open-pdf/library/items/${BRMS.attachment.key}?page=5`,
      ])
        assert.ok(note.note.includes(`href="${href}"`), href);
      container
        .querySelector(".zc-copy-markdown")
        .dispatchEvent(new doc.defaultView.Event("click"));
      const copied = await until(
        () => z.calls.find((c) => c.name === "Zotero.Utilities.Internal.copyTextToClipboard"),
        "the copied answer",
      );
      assert.match(copied.args[0], /\[1, p\. 3\]/);
      assert.ok(
        copied.args[0].includes(`(zotero://open-pdf/library/items/${LME4.attachment.key}?page=3)`),
      );

      // a reader tab: the scope offers the open paper; its text selection can be pinned
      const attachment = z.item(LME4.attachment.key);
      z.openReaderTab(attachment);
      mounted.pane.refreshSelection();
      assert.deepEqual(plain(controller.state.selection.selectedItems.map((i) => i.key)), [
        LME4.attachment.key,
      ]);
      // ... and goes to the front of the embedding queue
      await until(
        () => requests.includes(`POST /library/prioritize {"item_keys":["${LME4.key}"]}`),
        "the open paper prioritized",
      );
      const appended = z.selectText(attachment, "bobyqa is the default optimizer", 2);
      assert.equal(appended.length, 1, "the popup got one button");
      appended[0].dispatchEvent(new doc.defaultView.Event("click"));
      assert.deepEqual(
        plain(controller.state.scope.snippets.map((s) => [s.item_key, s.page, s.text])),
        [[LME4.key, 3, "bobyqa is the default optimizer"]],
      );

      // an image annotation's context menu: its image (drawn by Zotero first) is pinned
      const menu = z.annotationMenu(attachment, [FIGURE.key]);
      assert.deepEqual(
        menu.map((i) => i.label),
        ["Ask Zocrates about this image"],
      );
      menu[0].onCommand();
      const image = await until(
        () => controller.state.scope.snippets.find((s) => s.kind === "image"),
        "the image snippet",
      );
      assert.deepEqual(plain([image.item_key, image.page, image.text, image.image.data]), [
        LME4.key,
        FIGURE.pageIndex + 1,
        FIGURE.comment,
        PNG_BASE64,
      ]);
      assert.deepEqual(
        z.calls.find((c) => c.name === "Zotero.PDFWorker.renderAttachmentAnnotations").args,
        [LME4.attachment.id],
      );

      // the settings open at the plugin's pane
      plugin.app.openPreferences();
      assert.deepEqual(
        z.calls.find((c) => c.name === "Zotero.Utilities.Internal.openPreferences").args,
        [`${PLUGIN_ID}-pane`],
      );

      // window unload, then shutdown: nothing of the plugin is left behind
      await sandbox.onMainWindowUnload({ window: z.window }, 1);
      assert.equal(doc.getElementById("zocrates-pane-container"), null);
      assert.equal(doc.getElementById("zocrates-stylesheet"), null);
      assert.equal(doc.getElementById("zocrates-view-pane-menuitem"), null, "menu item removed");
      assert.equal(press({ ctrlKey: true, shiftKey: true }), false, "the shortcut is gone");
      assert.equal(z.listenerCount(), 0, "selection listeners removed");
      assert.equal(z.observers.size, 0, "notifier observers removed");
      await sandbox.onMainWindowLoad({ window: z.window }, 1);
      assert.ok(
        doc.getElementById("zocrates-pane-container"),
        "a window loaded again gets the pane again",
      );
      await sandbox.shutdown({ id: PLUGIN_ID }, 4);
      assert.equal(z.Zotero.Zocrates, undefined);
      assert.equal(booted.chrome.destructed, true);
      assert.equal(doc.getElementById("zocrates-pane-container"), null);
      assert.equal(doc.getElementById("zocrates-view-pane-menuitem"), null);
      assert.equal(
        doc.querySelectorAll("#menu_viewPopup > *").length,
        1,
        "Zotero's own item stays",
      );
      // 7.0 to 9.0.6 drop every other plugin's listener on unregisterEventListener: Zotero
      // removes ours by plugin ID instead.
      assert.ok(!z.calls.some((c) => c.name === "Zotero.Reader.unregisterEventListener"));

      // what the plugin looked for and this version does not have: only its feature tests
      // (and its own Zotero.Zocrates, read before it is set)
      const expectedAbsent =
        major >= 10
          ? []
          : ["ZoteroPane.getSelectedCollections", "ZoteroPane.getSelectedLibraryIDs"];
      const own = (n) =>
        n === "Zotero.Zocrates" || n.startsWith("item.") || n.startsWith("collection.");
      assert.deepEqual([...z.absent].filter((n) => !own(n)).sort(), expectedAbsent.sort());
      assert.deepEqual(
        z.log.filter((m) => /error|could not|failed/i.test(m)),
        [],
        "nothing went wrong in the log",
      );
    });

    test("a gateway that fails in every way leaves no rejection unhandled, and says so in the log", async () => {
      // Zotero 8-10 log "uncaught exception: undefined" for a promise rejected with undefined
      // that nobody handles: whatever fetch does, start-up, the pane and shutdown must handle it.
      const failures = {
        "rejects with undefined": () => Promise.reject(undefined),
        "network error": () =>
          Promise.reject(new TypeError("NetworkError when attempting to fetch resource.")),
        "HTTP 500": async () => jsonResponse({ status: "error", code: "internal" }, 500),
        aborted: () => Promise.reject(new DOMException("The operation was aborted.", "AbortError")),
      };
      const unhandled = [];
      const collect = (reason) => unhandled.push(reason === undefined ? "undefined" : reason);
      process.on("unhandledRejection", collect);
      try {
        for (const [name, fetch] of Object.entries(failures)) {
          for (const token of [true, false]) {
            const z = zoteroSurface(major, { items: [LME4], collection: COLLECTION });
            const { IOUtils, PathUtils } = fakeFiles(
              token ? { "/home/me/Zotero/zocrates-data/gateway.token": "tok" } : {},
            );
            const { sandbox } = boot(z, fetch, { IOUtils, PathUtils });
            await sandbox.startup({ id: PLUGIN_ID, version: pkg.version, rootURI: ROOT_URI }, 1);
            const plugin = z.Zotero.Zocrates;
            await plugin.data.registering;
            assert.equal(plugin.data.registration.ok, false, `${name}: not registered`);
            assert.ok(
              z.log.some((m) => m.includes("could not register the data directory: ")),
              `${name}: the log says why`,
            );
            assert.ok(
              !z.log.some((m) => /register the data directory: (undefined)?$/.test(m)),
              `${name}: a reason, not nothing`,
            );
            // let the pane's own start (the chat list) fail too
            await new Promise((r) => setTimeout(r, 50));
            await sandbox.onMainWindowUnload({ window: z.window }, 1);
            await sandbox.shutdown({ id: PLUGIN_ID }, 4);
            await new Promise((r) => setTimeout(r, 20));
            assert.deepEqual(unhandled, [], `${name}, token ${token}: no unhandled rejection`);
          }
        }
      } finally {
        process.off("unhandledRejection", collect);
      }
    });
  });
}
