/* The driver's steps in Zotero's window (see ops.js): the items pane, the plugin's pane and
 * reader tabs, the settings, the add-on's life. Loaded into the driver's scope by bootstrap.js. */
/* global Zotero, Services, ChromeUtils, sleep, waitFor, mainWindow, pluginPane, addonManager */

/* ---------------------------------------------------------------- the items pane */

async function selectItems({ keys, libraryID }) {
  const win = mainWindow();
  win.Zotero_Tabs.select("zotero-pane");
  const lib = libraryID || Zotero.Libraries.userLibraryID;
  await win.ZoteroPane.collectionsView.selectLibrary(lib);
  await win.ZoteroPane.itemsView.waitForLoad?.();
  const ids = keys.map((k) => Zotero.Items.getByLibraryAndKey(lib, k).id);
  await win.ZoteroPane.selectItems(ids);
  return win.ZoteroPane.getSelectedItems().map((i) => i.key);
}

/** Select collections in the collection tree: one, or (Zotero 10 on) several at once. */
async function selectCollections({ keys }) {
  const win = mainWindow();
  win.Zotero_Tabs.select("zotero-pane");
  const tree = win.ZoteroPane.collectionsView;
  const lib = Zotero.Libraries.userLibraryID;
  const ids = keys.map((k) => Zotero.Collections.getByLibraryAndKey(lib, k).id);
  await tree.selectCollection(ids[0]);
  for (const id of ids.slice(1)) {
    const row = tree.getRowIndexByID(`C${id}`);
    if (row === undefined || row === false || row < 0)
      throw new Error(`collection ${id} is not shown`);
    // as a ctrl-click does; the tree's "select" listeners (the pane's among them) run after
    const selected = tree.waitForSelect();
    tree.selection.toggleSelect(row);
    await selected;
  }
  await waitFor("the items view to load", async () => {
    await win.ZoteroPane.itemsView.waitForLoad?.();
    return true;
  });
  const selected =
    typeof win.ZoteroPane.getSelectedCollections === "function"
      ? win.ZoteroPane.getSelectedCollections()
      : [win.ZoteroPane.getSelectedCollection()].filter(Boolean);
  return selected.map((c) => c.key);
}

/* ---------------------------------------------------------------- the plugin's pane */

function paneState() {
  const win = mainWindow();
  const doc = win.document;
  const container = doc.getElementById("zocrates-pane-container");
  const pane = pluginPane();
  const menuItem = doc.getElementById("zocrates-view-pane-menuitem");
  const rect = container?.getBoundingClientRect();
  const deck = doc.getElementById("tabs-deck")?.getBoundingClientRect();
  return {
    plugin: !!Zotero.Zocrates,
    container: !!container,
    open: !!container && container.getAttribute("data-collapsed") !== "true",
    width: rect ? Math.round(rect.width) : 0,
    // docked at the right of the tabs deck (library and reader tabs alike)
    rightOfDeck: !!(rect && deck && rect.left >= deck.right - 1),
    stylesheet: !!doc.getElementById("zocrates-stylesheet"),
    menuItem: menuItem
      ? { label: menuItem.getAttribute("label"), checked: menuItem.getAttribute("checked") }
      : null,
    phase: pane?.getAttribute("data-phase") || null,
    scopeMode:
      pane?.querySelector(".zc-seg[aria-checked='true']")?.getAttribute("data-mode") || null,
    scopeModes: pane
      ? [...pane.querySelectorAll(".zc-seg")].map((s) => s.getAttribute("data-mode"))
      : [],
    scopeDetail: pane?.querySelector(".zc-scope-detail")?.textContent || "",
    notices: pane
      ? [...pane.querySelectorAll(".zc-notice")].map((n) => n.getAttribute("data-code"))
      : [],
    tab: win.Zotero_Tabs.selectedType,
    sessionId:
      Zotero.Zocrates?.app.data.windows.get(win)?.pane.controller.state.session?.id || null,
  };
}

async function waitPane() {
  return waitFor("the Zocrates pane to be ready", () => {
    const state = paneState();
    return state.container && state.phase === "ready" ? state : null;
  });
}

async function setScope({ mode }) {
  const pane = pluginPane();
  const seg = pane.querySelector(`.zc-seg[data-mode="${mode}"]`);
  if (!seg) throw new Error(`no scope button for ${mode}`);
  seg.click();
  await waitFor(`scope ${mode}`, () => paneState().scopeMode === mode, { timeout: 5000 });
  return paneState();
}

async function waitScope({ includes }) {
  return waitFor(
    `the scope line to name ${includes.join(", ")}`,
    () => {
      const state = paneState();
      return includes.every((text) => state.scopeDetail.includes(text)) ? state : null;
    },
    { timeout: 10000 },
  );
}

function lastAnswer() {
  const bubbles = pluginPane().querySelectorAll(".zocrates-message.assistant");
  return bubbles[bubbles.length - 1] || null;
}

function describeAnswer(bubble) {
  return {
    status: bubble.getAttribute("data-status"),
    text: bubble.querySelector(".zocrates-answer")?.textContent || "",
    citations: [...bubble.querySelectorAll(".zocrates-answer a.zocrates-citation")].map((a) => ({
      itemKey: a.getAttribute("data-item-key"),
      page: a.getAttribute("data-page"),
      text: a.textContent,
    })),
    notices: [...bubble.querySelectorAll(".zc-notice")].map((n) => n.getAttribute("data-code")),
  };
}

async function ask({ question, timeout = 180000 }) {
  const win = mainWindow();
  const pane = pluginPane();
  const before = pane.querySelectorAll(".zocrates-message.assistant").length;
  const input = pane.querySelector(".zc-input");
  input.focus();
  input.value = question;
  input.dispatchEvent(new win.InputEvent("input", { bubbles: true }));
  pane.querySelector(".zc-send").click();
  const bubble = await waitFor(
    "the answer",
    () => {
      const all = pane.querySelectorAll(".zocrates-message.assistant");
      const last = all[all.length - 1];
      if (all.length <= before || !last) return null;
      return ["completed", "paused", "error"].includes(last.getAttribute("data-status"))
        ? last
        : null;
    },
    { timeout },
  );
  return describeAnswer(bubble);
}

function currentReader() {
  const win = mainWindow();
  if (win.Zotero_Tabs.selectedType !== "reader") return null;
  const reader = Zotero.Reader.getByTabID(win.Zotero_Tabs.selectedID);
  const stats = reader?._internalReader?._state?.primaryViewStats;
  if (!reader || !stats || stats.pageIndex === undefined) return null;
  const item = Zotero.Items.get(reader.itemID);
  return {
    tabs: win.Zotero_Tabs._tabs.length,
    itemKey: item.key,
    parentKey: item.parentKey,
    pageIndex: stats.pageIndex,
    pagesCount: stats.pagesCount ?? null,
  };
}

/** Where the selected reader tab is: its item and page (0-based), once it has rendered (and,
 * given `pageIndex`, once it got there: a reader opens at page 1 and then navigates; after
 * `timeout` the page it is at comes back). */
async function readerState({ pageIndex, timeout = 30000 } = {}) {
  const state = await waitFor("a reader tab at a page", currentReader, { timeout: 60000 });
  if (pageIndex === undefined) return state;
  try {
    return await waitFor(
      `the reader at page index ${pageIndex}`,
      () => {
        const now = currentReader();
        return now && now.pageIndex === pageIndex ? now : null;
      },
      { timeout },
    );
  } catch {
    return currentReader() || state;
  }
}

async function openReader({ libraryID, key, pageIndex }) {
  const item = Zotero.Items.getByLibraryAndKey(libraryID || Zotero.Libraries.userLibraryID, key);
  await Zotero.Reader.open(item.id, pageIndex === undefined ? undefined : { pageIndex });
  return readerState({ pageIndex });
}

async function closeReaders() {
  const win = mainWindow();
  for (const tab of [...win.Zotero_Tabs._tabs])
    if (tab.type !== "library") win.Zotero_Tabs.close(tab.id);
  win.Zotero_Tabs.select("zotero-pane");
  return win.Zotero_Tabs._tabs.length;
}

async function clickCitation({ index = 0, itemKey }) {
  const links = [...lastAnswer().querySelectorAll(".zocrates-answer a.zocrates-citation")];
  const link = itemKey
    ? links.find((a) => a.getAttribute("data-item-key") === itemKey)
    : links[index];
  if (!link) throw new Error(`no citation ${itemKey || index} in the last answer`);
  await closeReaders();
  link.click();
  const page = Number(link.getAttribute("data-page"));
  return {
    citation: { itemKey: link.getAttribute("data-item-key"), page },
    reader: await readerState({ pageIndex: page - 1 }),
  };
}

async function maxNoteID() {
  return (await Zotero.DB.valueQueryAsync("SELECT MAX(itemID) FROM itemNotes")) || 0;
}

async function saveNote() {
  const before = await maxNoteID();
  const button = lastAnswer().querySelector(".zc-save-note");
  if (!button) throw new Error("the last answer has no Save as note button");
  button.click();
  // the row is written inside the save's transaction; the item is registered after it
  const note = await waitFor("the saved note", async () => {
    const now = await maxNoteID();
    const item = now > before && Zotero.Items.get(now);
    return item && item.isNote() ? item : null;
  });
  const html = note.getNote();
  const links = [...html.matchAll(/href="(zotero:\/\/open-pdf\/[^"]+)"/g)].map((m) =>
    m[1].replace(/&amp;/g, "&"),
  );
  return {
    key: note.key,
    parentKey: note.parentKey || null,
    isNote: note.isNote(),
    links,
    length: html.length,
  };
}

async function openLink({ url }) {
  await closeReaders();
  mainWindow().ZoteroPane.loadURI(url);
  const page = Number(new URL(url).searchParams.get("page"));
  return readerState(page ? { pageIndex: page - 1 } : {});
}

/* ---------------------------------------------------------------- settings */

function prefsWindow() {
  for (const win of Services.wm.getEnumerator("zotero:pref")) return win;
  return null;
}

async function openPrefs() {
  const paneID = Zotero.Zocrates?.data?.prefPaneID;
  if (!paneID) throw new Error("the plugin registered no settings pane");
  Zotero.Utilities.Internal.openPreferences(paneID);
  const win = await waitFor("the settings window", () => prefsWindow());
  const fields = await waitFor(
    "the Zocrates settings",
    () => {
      const doc = win.document;
      const keys = [...doc.querySelectorAll("#zocrates-prefs-root .zc-field[data-key]")].map((f) =>
        f.getAttribute("data-key"),
      );
      return keys.length ? keys : null;
    },
    { timeout: 60000 },
  );
  const text = (id) => win.document.querySelector(`[data-zc-l10n="${id}"]`)?.textContent || "";
  return {
    paneID,
    fields,
    heading: text("zocrates-pref-title"),
    intro: text("zocrates-pref-intro"),
  };
}

async function setPref({ key, value }) {
  const win = prefsWindow();
  const input = win.document.getElementById(`zocrates-config-${key}`);
  if (!input) throw new Error(`no settings field ${key}`);
  const status = input.parentNode.querySelector(".zc-field-status");
  status?.setAttribute("data-kind", "");
  if (input.type === "checkbox") input.checked = !!value;
  else input.value = String(value);
  input.dispatchEvent(new win.Event("change", { bubbles: true }));
  const kind = await waitFor(`the ${key} field to save`, () => {
    const k = status?.getAttribute("data-kind");
    return k === "ok" || k === "error" ? k : null;
  });
  return {
    kind,
    value: input.type === "checkbox" ? input.checked : input.value,
    status: status?.textContent || "",
  };
}

/** Zotero's own settings window, opened and closed (the baseline run's use of it). */
async function openSettings() {
  Zotero.Utilities.Internal.openPreferences();
  const win = await waitFor("the settings window", () => prefsWindow());
  await waitFor("the settings window to load", () => win.document.readyState === "complete");
  await sleep(1000);
  return closePrefs();
}

async function fieldValue({ key }) {
  const input = prefsWindow()?.document.getElementById(`zocrates-config-${key}`);
  if (!input) throw new Error(`no settings field ${key}`);
  return input.type === "checkbox" ? input.checked : input.value;
}

async function closePrefs() {
  const win = prefsWindow();
  if (win) win.close();
  await waitFor("the settings window to close", () => !prefsWindow(), { timeout: 10000 });
  return true;
}

/* ---------------------------------------------------------------- the add-on's life */

async function installAddon({ path }) {
  const AddonManager = addonManager();
  const install = await AddonManager.getInstallForFile(Zotero.File.pathToFile(path));
  const addon = await install.install();
  await waitFor("the plugin's pane", () => paneState().container);
  return { id: addon.id, version: addon.version, active: addon.isActive };
}

async function addonState() {
  const addon = await addonManager().getAddonByID(PLUGIN_ID);
  return addon
    ? { id: addon.id, version: addon.version, active: addon.isActive, enabled: addon.isEnabled }
    : null;
}

async function setAddon({ action }) {
  const addon = await addonManager().getAddonByID(PLUGIN_ID);
  if (!addon) throw new Error(`${PLUGIN_ID} is not installed`);
  if (action === "disable") await addon.disable();
  else if (action === "enable") await addon.enable();
  else if (action === "uninstall") await addon.uninstall();
  else throw new Error(`unknown action ${action}`);
  if (action === "enable") await waitFor("the plugin's pane", () => paneState().container);
  return addonState();
}

/** What the plugin could have left in Zotero: DOM, globals, reader listeners, settings panes. */
function leftovers() {
  const found = [];
  for (const win of Zotero.getMainWindows()) {
    const doc = win.document;
    for (const sel of [
      "#zocrates-pane-container",
      "#zocrates-pane-resizer",
      "#zocrates-pane-rail",
      "#zocrates-view-pane-menuitem",
      "#zocrates-stylesheet",
      '[href="zocrates-addon.ftl"]',
      '[href="zocrates-sidebar.ftl"]',
    ]) {
      if (doc.querySelector(sel)) found.push(`main window: ${sel}`);
    }
  }
  if (Zotero.Zocrates) found.push("Zotero.Zocrates");
  for (const l of Zotero.Reader._registeredListeners || []) {
    if (l.pluginID === PLUGIN_ID) found.push(`Zotero.Reader listener ${l.type}`);
  }
  for (const p of Zotero.PreferencePanes.pluginPanes || []) {
    if (p.pluginID === PLUGIN_ID) found.push(`settings pane ${p.id}`);
  }
  return found;
}

/** After the plugin is gone: the events its observers listened to must reach nobody. */
async function exerciseObservers({ attachmentKey }) {
  const win = mainWindow();
  await openReader({ key: attachmentKey });
  await closeReaders();
  win.ZoteroPane.itemsView.selection.select(0);
  Zotero.Prefs.set("extensions.zocrates.paneOpen", false, true);
  Zotero.Prefs.set("extensions.zocrates.paneOpen", true, true);
  Zotero.Prefs.set("extensions.zocrates.paneWidth", 333, true);
  await sleep(500);
  return leftovers();
}
