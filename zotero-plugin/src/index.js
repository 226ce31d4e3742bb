/**
 * Zotero entry point, bundled by esbuild into content/scripts/zocrates.js and loaded by
 * bootstrap.js with Services.scriptloader.loadSubScript(url, ctx): `rootURI` comes from ctx;
 * Zotero, fetch, IOUtils and PathUtils are globals of the plugin's sandbox.
 */
import { config } from "./config.js";
import { createHooks } from "./hooks.js";
import * as lib from "./lib.js";
import { RESOURCES } from "./locales.js";
import { createApp } from "./zotero/app.js";

function main() {
  if (Zotero[config.addonInstance]) return;
  const app = createApp({
    Zotero,
    rootURI,
    fetch: (...args) => fetch(...args),
    IOUtils,
    PathUtils,
    version: typeof addonVersion === "string" ? addonVersion : "",
    l10nResources: RESOURCES,
  });
  Zotero[config.addonInstance] = { config, app, data: app.data, hooks: createHooks(app), lib };
}

main();
