import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import vm from "node:vm";
import { buildPlugin } from "../scripts/build.mjs";
import { createZip, readZip } from "../scripts/zip.mjs";
import { fakeFiles, fakeZotero } from "./fake-zotero.js";
import { jsonResponse } from "./fixtures.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const pkg = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8"));

describe("zip writer", () => {
  test("round-trips files, stored or deflated, byte for byte", async () => {
    const big = Buffer.from("abc ".repeat(5000));
    const tiny = Buffer.from([1, 2, 3]);
    const zip = createZip([
      { name: "a/big.txt", data: big },
      { name: "tiny.bin", data: tiny },
      { name: "ü.txt", data: "unicode name" },
    ]);
    const files = await readZip(zip);
    assert.deepEqual([...files.keys()], ["a/big.txt", "tiny.bin", "ü.txt"]);
    assert.deepEqual(files.get("a/big.txt"), big);
    assert.deepEqual(files.get("tiny.bin"), tiny);
    assert.ok(zip.length < big.length / 10, "compressed");
    assert.deepEqual(
      createZip([{ name: "x", data: "1" }]),
      createZip([{ name: "x", data: "1" }]),
      "reproducible",
    );
  });

  test("refuses unsafe and duplicate names", () => {
    assert.throws(() => createZip([{ name: "../x", data: "" }]), /bad zip entry/);
    assert.throws(() => createZip([{ name: "/abs", data: "" }]), /bad zip entry/);
    assert.throws(
      () =>
        createZip([
          { name: "x", data: "" },
          { name: "x", data: "" },
        ]),
      /duplicate/,
    );
  });
});

describe("the built .xpi", () => {
  let out;
  let result;
  let files;

  before(async () => {
    out = mkdtempSync(path.join(tmpdir(), "zocrates-build-"));
    result = await buildPlugin({ out });
    files = await readZip(readFileSync(result.xpi));
  });
  after(() => rmSync(out, { recursive: true, force: true }));

  test("has the plugin's files at its root", () => {
    assert.deepEqual([...files.keys()].sort(), [
      "THIRD-PARTY-NOTICES.txt",
      "bootstrap.js",
      "content/icons/zocrates.svg",
      "content/preferences.xhtml",
      "content/scripts/zocrates.js",
      "content/sidebar.css",
      "manifest.json",
      "prefs.js",
    ]);
  });

  test("the notices name the bundled third-party code at the version installed", () => {
    const notices = String(files.get("THIRD-PARTY-NOTICES.txt"));
    const fluent = JSON.parse(
      readFileSync(new URL("../node_modules/@fluent/bundle/package.json", import.meta.url), "utf8"),
    );
    assert.ok(notices.includes(`@fluent/bundle ${fluent.version}`), notices);
    assert.ok(notices.includes("Apache License, Version 2.0"));
  });

  test("manifest: Zotero 7 to 10, the plugin id, the package version", () => {
    const manifest = JSON.parse(files.get("manifest.json"));
    assert.equal(manifest.manifest_version, 2);
    assert.equal(manifest.version, pkg.version);
    assert.deepEqual(manifest.applications.zotero.id, "zocrates@zocrates.dev");
    assert.equal(manifest.applications.zotero.strict_min_version, "6.999");
    assert.equal(manifest.applications.zotero.strict_max_version, "10.0.*");
    for (const icon of Object.values(manifest.icons)) assert.ok(files.has(icon), icon);
  });

  test("prefs.js sets the gateway URL default", () => {
    const defaults = {};
    vm.runInNewContext(files.get("prefs.js").toString(), { pref: (k, v) => (defaults[k] = v) });
    assert.equal(defaults["extensions.zocrates.gatewayURL"], "http://127.0.0.1:8765");
    assert.equal(defaults["extensions.zocrates.registerOnStartup"], true);
  });

  test("bootstrap.js + the bundle start, open a window and shut down in a simulated Zotero", async () => {
    const rootURI = "jar:file:///profile/extensions/zocrates@zocrates.dev.xpi!/";
    const z = fakeZotero();
    const fetchCalls = [];
    const fetch = async (url, init) => {
      fetchCalls.push({ url, body: JSON.parse(init.body) });
      return jsonResponse({ status: "success", zotero_data_dir: "/home/me/Zotero" });
    };
    const { IOUtils, PathUtils } = fakeFiles({
      "/home/me/Zotero/zocrates-data/gateway.token": "tok",
    });
    let registered = null;
    let destructed = false;
    const loaded = [];
    const globals = {
      Zotero: z.Zotero,
      fetch,
      IOUtils,
      PathUtils,
      APP_SHUTDOWN: 2,
      Components: {
        classes: {
          "@mozilla.org/addons/addon-manager-startup;1": {
            getService: () => ({
              registerChrome: (manifestURI, entries) => {
                registered = { manifestURI, entries };
                return { destruct: () => (destructed = true) };
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
            loaded.push(url);
            const name = url.slice(rootURI.length);
            // Firefox resolves the script's free names on ctx first, then on the sandbox
            vm.runInContext(files.get(name).toString(), vm.createContext({ ...globals, ...ctx }));
          },
        },
      },
    };
    const sandbox = vm.createContext({ ...globals });
    vm.runInContext(files.get("bootstrap.js").toString(), sandbox);
    await sandbox.startup({ id: "zocrates@zocrates.dev", version: pkg.version, rootURI }, 1);

    assert.deepEqual(loaded, [`${rootURI}content/scripts/zocrates.js`]);
    assert.deepEqual(JSON.parse(JSON.stringify(registered.entries)), [
      ["content", "zocrates", `${rootURI}content/`],
    ]);
    const plugin = z.Zotero.Zocrates;
    assert.ok(plugin, "Zotero.Zocrates is set");
    assert.equal(plugin.data.initialized, true);
    assert.equal(plugin.data.version, pkg.version);
    assert.deepEqual(Object.keys(plugin.lib).sort(), [
      "api",
      "card",
      "citations",
      "errors",
      "markdown",
      "messages",
      "scope",
      "sse",
      "throttle",
    ]);
    assert.equal(z.panes[0].src, `${rootURI}content/preferences.xhtml`);
    await plugin.data.registering;
    assert.deepEqual(fetchCalls, [
      { url: "http://127.0.0.1:8765/register", body: { zotero_data_dir: "/home/me/Zotero" } },
    ]);
    const win = z.windows[0];
    assert.ok(win.document.getElementById("zocrates-stylesheet"), "the open window was set up");

    await sandbox.onMainWindowUnload({ window: win });
    assert.equal(win.document.getElementById("zocrates-stylesheet"), null);
    await sandbox.onMainWindowLoad({ window: win });
    assert.ok(win.document.getElementById("zocrates-stylesheet"));

    // the bundled pure modules work inside the sandbox too
    const tree = plugin.lib.markdown.parseMarkdown("**hi** [1]", {
      citations: [{ n: 1, item_key: "ABCD2345", page: 2 }],
    });
    assert.equal(tree[0].children[2].type, "citation");

    await sandbox.shutdown({ id: "zocrates@zocrates.dev" }, 4);
    assert.equal(z.Zotero.Zocrates, undefined);
    assert.equal(destructed, true);
    assert.equal(win.document.getElementById("zocrates-stylesheet"), null);
  });

  test("shutdown at application exit does nothing", async () => {
    const z = fakeZotero();
    z.Zotero.Zocrates = { hooks: { onShutdown: () => assert.fail("must not run") } };
    const sandbox = vm.createContext({ Zotero: z.Zotero, APP_SHUTDOWN: 2 });
    vm.runInContext(files.get("bootstrap.js").toString(), sandbox);
    await sandbox.shutdown({}, 2);
  });
});
