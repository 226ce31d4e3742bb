/* What the driver's steps share (see bootstrap.js, which loads common.js, library.js, ui.js and
 * ops.js into one scope). The steps take JSON arguments and return JSON. They use Zotero's own
 * API (checked against Zotero 8.0.5, 9.0.6 and 10.0.0 sources, run on 8.0.5, 9.0.6 and
 * 10.0.1: the same calls Zotero's test/content/support.js makes to build libraries) and the
 * plugin's DOM the way a user reaches it (the pane's text box and buttons, the View menu, the
 * settings window). */
/* global Zotero, Components, ChromeUtils */
/* exported PLUGIN_ID, REPORTER_PREF, sleep, waitFor, describeMessage, mainWindow, pluginPane, addonManager */

const PLUGIN_ID = "zocrates@zocrates.dev";
const REPORTER_PREF = "extensions.apptest.reporter";
const PANE = ".zocrates-pane";

const sleep = (ms) => Zotero.Promise.delay(ms);

async function waitFor(what, probe, { timeout = 60000, every = 100 } = {}) {
  const deadline = Date.now() + timeout;
  let last;
  for (;;) {
    try {
      last = await probe();
      if (last) return last;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeout} ms waiting for ${what} (last: ${last})`);
    }
    await sleep(every);
  }
}

function frames(stack) {
  const out = [];
  for (let f = stack; f && out.length < 12; f = f.parent) {
    out.push(`${f.functionDisplayName || "?"}@${f.source}:${f.line}:${f.column}`);
  }
  return out;
}

/** Every console message at warning level or above, as JSON. */
function describeMessage(msg) {
  const Ci = Components.interfaces;
  let level = msg.logLevel;
  const out = { message: "", source: "", line: 0, category: "", stack: [] };
  if (msg instanceof Ci.nsIScriptError) {
    out.message = msg.errorMessage;
    out.source = msg.sourceName || "";
    out.line = msg.lineNumber || 0;
    out.category = msg.category || "";
    if (msg.stack) out.stack = frames(msg.stack);
    if (level === undefined) level = msg.flags & Ci.nsIScriptError.warningFlag ? 2 : 3;
  } else {
    out.message = msg.message;
  }
  out.level = level === 3 ? "error" : level === 2 ? "warning" : level === 1 ? "info" : "debug";
  return out;
}

function mainWindow() {
  const win = Zotero.getMainWindow();
  if (!win) throw new Error("no Zotero main window");
  return win;
}

function pluginPane() {
  return mainWindow().document.querySelector(PANE);
}

function addonManager() {
  return ChromeUtils.importESModule("resource://gre/modules/AddonManager.sys.mjs").AddonManager;
}
