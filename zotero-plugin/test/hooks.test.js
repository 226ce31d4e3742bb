import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { createHooks } from "../src/hooks.js";
import { createApp } from "../src/zotero/app.js";
import { fakeFiles, fakeWindow, fakeZotero } from "./fake-zotero.js";
import { jsonResponse } from "./fixtures.js";

const TOKEN = "/home/me/Zotero/zocrates-data/gateway.token";

function recordingApp(windows = ["w1", "w2"]) {
  const calls = [];
  const app = {
    ready: async () => calls.push("ready"),
    startup: async () => calls.push("startup"),
    shutdown: async () => calls.push("shutdown"),
    mainWindows: () => windows,
    addToWindow: async (w) => calls.push(`add:${w}`),
    removeFromWindow: async (w) => calls.push(`remove:${w}`),
    onPrefsLoad: async (w) => calls.push(`prefs:${w}`),
    onReaderSelection: (e) => calls.push(`selection:${e}`),
    log: (m) => calls.push(`log:${m}`),
  };
  return { app, calls };
}

describe("hooks only dispatch", () => {
  test("startup waits for Zotero, starts, then adds every main window", async () => {
    const { app, calls } = recordingApp();
    await createHooks(app).onStartup();
    assert.deepEqual(calls, ["ready", "startup", "add:w1", "add:w2"]);
  });

  test("window load/unload, prefs, reader selection, shutdown", async () => {
    const { app, calls } = recordingApp();
    const hooks = createHooks(app);
    await hooks.onMainWindowLoad("w3");
    await hooks.onMainWindowUnload("w3");
    await hooks.onPrefsEvent("load", { window: "pw" });
    await hooks.onPrefsEvent("other");
    hooks.onReaderSelection("e");
    await hooks.onShutdown();
    assert.deepEqual(calls, [
      "add:w3",
      "remove:w3",
      "prefs:pw",
      "log:unknown prefs event other",
      "selection:e",
      "remove:w1",
      "remove:w2",
      "shutdown",
    ]);
  });
});

describe("the Zotero app behind the hooks", () => {
  function setup({ files = { [TOKEN]: "tok-123\n" }, fetch } = {}) {
    const z = fakeZotero();
    const calls = [];
    const fetchImpl =
      fetch ??
      (async (url, init) => {
        calls.push({ url, init, body: init.body && JSON.parse(init.body) });
        return jsonResponse({
          status: "success",
          zotero_data_dir: "/home/me/Zotero",
          changed: false,
        });
      });
    const app = createApp({
      Zotero: z.Zotero,
      rootURI: "jar:file:///p/zocrates.xpi!/",
      fetch: fetchImpl,
      ...fakeFiles(files),
      version: "0.1.0",
    });
    z.Zotero.Zocrates = { app };
    return { z, app, calls, hooks: createHooks(app) };
  }

  test("startup registers the preferences pane and the data directory with the gateway", async () => {
    const { z, app, calls, hooks } = setup();
    await hooks.onStartup();
    assert.deepEqual(z.panes, [
      {
        pluginID: "zocrates@zocrates.dev",
        src: "jar:file:///p/zocrates.xpi!/content/preferences.xhtml",
        label: "Zocrates",
        image: "jar:file:///p/zocrates.xpi!/content/icons/zocrates.svg",
      },
    ]);
    await app.data.registering;
    assert.equal(calls.length, 1);
    assert.equal(calls[0].url, "http://127.0.0.1:8765/register");
    assert.equal(calls[0].init.headers.Authorization, "Bearer tok-123");
    assert.deepEqual(calls[0].body, { zotero_data_dir: "/home/me/Zotero" });
    assert.equal(app.data.registration.ok, true);
    assert.equal(app.data.initialized, true);
  });

  test("a main window gets the stylesheet (no Fluent file), and loses it on unload", async () => {
    const { z, hooks } = setup();
    await hooks.onStartup();
    const win = z.windows[0];
    const link = win.document.getElementById("zocrates-stylesheet");
    assert.equal(link.href, "jar:file:///p/zocrates.xpi!/content/sidebar.css");
    assert.deepEqual(win.ftl, []);
    await hooks.onMainWindowLoad(win); // twice: nothing doubled
    assert.equal(win.document.documentElement.children.length, 1);
    await hooks.onMainWindowUnload(win);
    assert.equal(win.document.getElementById("zocrates-stylesheet"), null);
    assert.deepEqual(win.ftl, []);
    const other = fakeWindow();
    await hooks.onMainWindowLoad(other);
    assert.ok(other.document.getElementById("zocrates-stylesheet"));
  });

  test("Zotero starts even when the gateway is down or the token is missing", async () => {
    const down = setup({
      fetch: async () => {
        throw new TypeError("NetworkError when attempting to fetch resource.");
      },
    });
    await down.hooks.onStartup();
    await down.app.data.registering;
    assert.equal(down.app.data.registration.ok, false);
    assert.equal(down.app.data.registration.error.code, "gateway_down");
    assert.match(down.z.log.join("\n"), /Zocrates is not running: start it with `make run`/);

    const noToken = setup({ files: {} });
    await noToken.hooks.onStartup();
    await noToken.app.data.registering;
    assert.equal(noToken.app.data.registration.error.code, "token_missing");
    assert.match(
      noToken.app.data.registration.error.message,
      /No gateway token at \/home\/me\/Zotero\/zocrates-data\/gateway\.token/,
    );
  });

  test("the token is read once and re-read after a 401", async () => {
    let reads = 0;
    const files = fakeFiles({ [TOKEN]: "old" });
    const z = fakeZotero();
    const seen = [];
    const app = createApp({
      Zotero: z.Zotero,
      rootURI: "file:///p/",
      fetch: async (url, init) => {
        seen.push(init.headers.Authorization);
        return init.headers.Authorization === "Bearer new"
          ? jsonResponse({ status: "success", sessions: [] })
          : jsonResponse({ status: "error", code: "unauthorized", message: "no" }, 401);
      },
      IOUtils: {
        readUTF8: async (p) => {
          reads += 1;
          return reads === 1 ? files.IOUtils.readUTF8(p) : "new\n";
        },
      },
      PathUtils: files.PathUtils,
    });
    const client = app.env.client();
    assert.equal(client.tokenPath, TOKEN);
    assert.deepEqual(await client.listSessions(), []);
    assert.deepEqual(seen, ["Bearer old", "Bearer new"]);
    await client.listSessions();
    assert.equal(reads, 2, "the new token is cached");
  });

  test("the gateway URL preference is honoured", async () => {
    const z = fakeZotero({ prefs: { "extensions.zocrates.gatewayURL": "http://localhost:9100/" } });
    const urls = [];
    const app = createApp({
      Zotero: z.Zotero,
      rootURI: "file:///p/",
      fetch: async (url) => {
        urls.push(url);
        return jsonResponse({ status: "ok" });
      },
      ...fakeFiles({ [TOKEN]: "t" }),
    });
    await app.env.client().health();
    assert.deepEqual(urls, ["http://localhost:9100/healthz"]);
  });

  test("a reader text selection becomes a snippet of the parent item", () => {
    const { app } = setup();
    const snippet = app.onReaderSelection({
      reader: {
        _item: { key: "PDF23456", parentItem: { key: "ABCD2345", getDisplayTitle: () => "lme4" } },
      },
      params: { annotation: { text: "bobyqa  first", position: { pageIndex: 4 } } },
    });
    assert.deepEqual(snippet, {
      text: "bobyqa first",
      item_key: "ABCD2345",
      page: 5,
      title: "lme4",
    });
  });

  test("shutdown removes the plugin object from Zotero", async () => {
    const { z, hooks, app } = setup();
    await hooks.onStartup();
    await hooks.onShutdown();
    assert.equal(app.data.alive, false);
    assert.equal(z.Zotero.Zocrates, undefined);
    assert.equal(z.windows[0].document.getElementById("zocrates-stylesheet"), null);
  });
});
