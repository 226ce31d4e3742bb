/* Zocrates bootstrap: loads the bundled plugin code and forwards Zotero's lifecycle calls to
 * its hooks (src/hooks.js). Nothing else happens here.
 * Lifecycle: https://www.zotero.org/support/dev/zotero_7_for_developers (see README.md). */
/* global Zotero, Services, Components, APP_SHUTDOWN */

var chromeHandle;

function install(data, reason) {}

async function startup({ id, version, rootURI }, reason) {
  var aomStartup = Components.classes["@mozilla.org/addons/addon-manager-startup;1"].getService(
    Components.interfaces.amIAddonManagerStartup,
  );
  var manifestURI = Services.io.newURI(rootURI + "manifest.json");
  chromeHandle = aomStartup.registerChrome(manifestURI, [
    ["content", "zocrates", rootURI + "content/"],
  ]);

  var ctx = { rootURI, addonID: id, addonVersion: version };
  ctx._globalThis = ctx;
  Services.scriptloader.loadSubScript(rootURI + "content/scripts/zocrates.js", ctx);
  await Zotero.Zocrates.hooks.onStartup();
}

async function onMainWindowLoad({ window }, reason) {
  await Zotero.Zocrates?.hooks.onMainWindowLoad(window);
}

async function onMainWindowUnload({ window }, reason) {
  await Zotero.Zocrates?.hooks.onMainWindowUnload(window);
}

async function shutdown(data, reason) {
  if (reason === APP_SHUTDOWN) return;
  await Zotero.Zocrates?.hooks.onShutdown();
  if (chromeHandle) {
    chromeHandle.destruct();
    chromeHandle = null;
  }
}

function uninstall(data, reason) {}
