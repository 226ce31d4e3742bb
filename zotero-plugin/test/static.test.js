/** Checks on the sources themselves: purity of the logic modules, safety, Fluent ids. */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { ENGLISH } from "../src/card.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const read = (p) => readFileSync(path.join(root, p), "utf8");

function sources(dir = "src") {
  const out = [];
  for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true })) {
    const rel = `${dir}/${entry.name}`;
    if (entry.isDirectory()) out.push(...sources(rel));
    else if (entry.name.endsWith(".js")) out.push(rel);
  }
  return out;
}

function ftlIds(file) {
  const ids = new Set();
  for (const line of read(file).split("\n")) {
    const m = /^([a-zA-Z][\w-]*)\s*=/.exec(line);
    if (m) ids.add(m[1]);
  }
  return ids;
}

describe("sources", () => {
  test("every module but the Zotero entry imports in a plain Node process (no Zotero or DOM globals)", () => {
    // index.js is the Zotero entry; locales.js imports the .ftl files as text, which only
    // the esbuild bundles can.
    const modules = sources().filter((f) => f !== "src/index.js" && f !== "src/locales.js");
    assert.ok(modules.length >= 12);
    const script = `
      for (const name of ["Zotero", "window", "document", "ZoteroPane", "Services", "IOUtils"]) {
        if (name in globalThis) throw new Error(name + " exists before the imports");
      }
      ${modules.map((m) => `await import(${JSON.stringify(path.join(root, m))});`).join("\n")}
      for (const name of ["Zotero", "window", "document", "ZoteroPane", "Services", "IOUtils"]) {
        if (name in globalThis) throw new Error(name + " was defined by an import");
      }
      console.log("ok");
    `;
    const output = execFileSync(process.execPath, ["--input-type=module", "-e", script], {
      encoding: "utf8",
    });
    assert.equal(output.trim(), "ok");
  });

  test("no HTML parsing sinks or eval anywhere in src/", () => {
    for (const file of sources()) {
      const text = read(file);
      for (const sink of [
        "innerHTML",
        "outerHTML",
        "insertAdjacentHTML",
        "document.write",
        "eval(",
        "new Function",
        "DOMParser",
      ]) {
        assert.ok(!text.includes(sink), `${file} uses ${sink}`);
      }
    }
  });

  test("no module of src/ passes 400 lines (one concept per module: split it)", () => {
    const long = sources()
      .map((file) => [file, read(file).split("\n").length - 1])
      .filter(([, lines]) => lines > 400);
    assert.deepEqual(long, []);
  });

  test("the pure modules do not mention Zotero's globals at all", () => {
    for (const file of [
      "src/sse.js",
      "src/api.js",
      "src/errors.js",
      "src/messages.js",
      "src/bubble.js",
      "src/history.js",
      "src/markdown.js",
      "src/markdown-blocks.js",
      "src/markdown-inline.js",
      "src/card.js",
      "src/throttle.js",
      "src/scope.js",
      "src/citations.js",
    ]) {
      const code = read(file)
        .replace(/\/\*[\s\S]*?\*\//g, "")
        .replace(/\/\/.*$/gm, "");
      for (const name of [
        "Zotero.",
        "ZoteroPane",
        "window.",
        "document.",
        "Services.",
        "IOUtils",
        "PathUtils",
      ]) {
        assert.ok(!code.includes(name), `${file} mentions ${name}`);
      }
    }
  });
});

test("the pane's UI modules take their document and Zotero helpers injected", () => {
  const ui = sources("src/ui");
  assert.ok(ui.length >= 10);
  for (const file of ui) {
    const code = read(file)
      .replace(/\/\*[\s\S]*?\*\//g, "")
      .replace(/\/\/.*$/gm, "");
    for (const name of [
      "Zotero.",
      "ZoteroPane",
      "window.",
      "document.",
      "Services.",
      "IOUtils",
      "createElement(",
    ]) {
      assert.ok(!code.includes(name), `${file} mentions ${name}`);
    }
  }
});

describe("Fluent", () => {
  test("the card's strings have Fluent ids in sidebar.ftl", () => {
    const ids = ftlIds("addon/locale/en-US/sidebar.ftl");
    for (const key of Object.keys(ENGLISH))
      assert.ok(ids.has(`zocrates-card-${key}`), `zocrates-card-${key}`);
  });

  test("every string of preferences.xhtml is in preferences.ftl, localized by the plugin", () => {
    const ids = ftlIds("addon/locale/en-US/preferences.ftl");
    const used = [
      ...read("addon/content/preferences.xhtml").matchAll(/data-zc-l10n="([^"]+)"/g),
    ].map((m) => m[1]);
    assert.ok(used.length >= 3);
    for (const id of used) assert.ok(ids.has(id), id);
    const xhtml = read("addon/content/preferences.xhtml");
    // no Fluent link, no data-l10n-id: Zotero does not localize the plugin (scripts/build.mjs)
    assert.doesNotMatch(xhtml, /rel="localization"|data-l10n-id/);
    // the groups are built by src/ui/prefs-view.js into this root, on the pane's load event
    assert.match(xhtml, /id="zocrates-prefs-root"/);
    assert.match(xhtml, /onload="Zotero\.Zocrates\.hooks\.onPrefsEvent\('load', \{ window \}\)"/);
  });

  test("all message ids are prefixed with zocrates- (Fluent ids are shared across plugins)", () => {
    for (const name of ["addon", "preferences", "sidebar"]) {
      for (const id of ftlIds(`addon/locale/en-US/${name}.ftl`))
        assert.match(id, /^zocrates-/, `${name}.ftl: ${id}`);
    }
  });
});
