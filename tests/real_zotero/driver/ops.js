/* The driver's steps (see bootstrap.js): each op takes JSON arguments and returns JSON. They use
 * Zotero's own API (checked against Zotero 8.0.5, 9.0.6 and 10.0.0 sources, run on 8.0.5, 9.0.6 and 10.0.1: the same calls
 * Zotero's test/content/support.js makes to build libraries) and the plugin's DOM the way a
 * user reaches it (the pane's text box and buttons, the View menu, the settings window). */
/* global Zotero, Services, Components, ChromeUtils, PathUtils, fetch */
/* exported createDriver */

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

/* ---------------------------------------------------------------- building a library */

async function ensureCurrentUser() {
  // Group items need a current user in the users table (support.js createGroup).
  if (!Zotero.Users.getCurrentUserID()) await Zotero.Users.setCurrentUserID(1);
  const id = Zotero.Users.getCurrentUserID();
  if (!Zotero.Users.getName(id)) await Zotero.Users.setName(id, "App Test");
}

async function createGroup(name) {
  await ensureCurrentUser();
  const group = new Zotero.Group();
  group.id = 4242;
  group.name = name;
  group.description = "";
  group.editable = true;
  group.filesEditable = true;
  group.version = 1;
  group.archived = false;
  await group.saveTx();
  return group;
}

async function createPaper(libraryID, paper, collectionIDs) {
  const item = new Zotero.Item(paper.itemType || "journalArticle");
  item.libraryID = libraryID;
  item.setField("title", paper.title);
  if (paper.date) item.setField("date", paper.date);
  item.setCreators(
    (paper.creators || []).map(([lastName, firstName]) => ({
      lastName,
      firstName,
      creatorType: "author",
    })),
  );
  for (const name of paper.collections || []) item.addToCollection(collectionIDs[name]);
  await item.saveTx();
  const options = { file: paper.file, parentItemID: item.id };
  const attachment = paper.linked
    ? await Zotero.Attachments.linkFromFile(options)
    : await Zotero.Attachments.importFromFile(options);
  if (paper.trashed) {
    item.deleted = true;
    await item.saveTx();
  }
  return { item, attachment };
}

async function createAnnotation(attachment, a) {
  const annotation = new Zotero.Item("annotation");
  annotation.libraryID = attachment.libraryID;
  annotation.parentID = attachment.id;
  annotation.annotationType = a.type;
  if (a.text) annotation.annotationText = a.text;
  if (a.comment) annotation.annotationComment = a.comment;
  annotation.annotationColor = a.color || "#ffd400";
  annotation.annotationPageLabel = String(a.pageLabel ?? a.pageIndex + 1);
  const page = String(a.pageIndex).padStart(5, "0");
  annotation.annotationSortIndex = `${page}|000100|00100`;
  annotation.annotationPosition = JSON.stringify({ pageIndex: a.pageIndex, rects: a.rects });
  await annotation.saveTx({ skipEditCheck: true });
  return annotation;
}

async function createNote(libraryID, html, parentID, collectionID) {
  const note = new Zotero.Item("note");
  note.libraryID = libraryID;
  if (parentID) note.parentID = parentID;
  if (collectionID) note.addToCollection(collectionID);
  note.setNote(html);
  await note.saveTx();
  return note;
}

/**
 * spec: {collections: [{name, parent}], papers: [{file, title, creators, date, collections,
 *   linked, trashed}], group: {name, papers}, annotations: [{paper, type, text, comment,
 *   pageIndex, rects}], notes: [{paper, html, collection}], trashedCollection: name}
 */
async function createLibrary({ spec }) {
  const userID = Zotero.Libraries.userLibraryID;
  const collectionIDs = {};
  const collections = {};
  for (const c of spec.collections || []) {
    const collection = new Zotero.Collection();
    collection.libraryID = userID;
    collection.name = c.name;
    if (c.parent) collection.parentID = collectionIDs[c.parent];
    await collection.saveTx();
    collectionIDs[c.name] = collection.id;
    collections[c.name] = collection.key;
  }
  const papers = {};
  const attachments = {};
  for (const paper of spec.papers || []) {
    const { item, attachment } = await createPaper(userID, paper, collectionIDs);
    papers[paper.title] = {
      key: item.key,
      id: item.id,
      attachmentKey: attachment.key,
      attachmentID: attachment.id,
      libraryID: userID,
    };
    attachments[paper.title] = attachment;
  }
  let group = null;
  if (spec.group) {
    const g = await createGroup(spec.group.name);
    group = { libraryID: g.libraryID, name: g.name, papers: {} };
    for (const paper of spec.group.papers || []) {
      const { item, attachment } = await createPaper(g.libraryID, paper, {});
      group.papers[paper.title] = {
        key: item.key,
        id: item.id,
        attachmentKey: attachment.key,
        attachmentID: attachment.id,
        libraryID: g.libraryID,
      };
    }
  }
  const annotations = [];
  for (const a of spec.annotations || []) {
    const annotation = await createAnnotation(attachments[a.paper], a);
    annotations.push({ key: annotation.key, paper: a.paper, type: a.type });
  }
  const notes = [];
  for (const n of spec.notes || []) {
    const parentID = n.paper ? papers[n.paper].id : null;
    const note = await createNote(
      userID,
      n.html,
      parentID,
      n.collection ? collectionIDs[n.collection] : null,
    );
    notes.push({ key: note.key, paper: n.paper || null });
  }
  if (spec.trashedCollection) {
    const collection = Zotero.Collections.get(collectionIDs[spec.trashedCollection]);
    collection.deleted = true;
    await collection.saveTx();
  }
  return { papers, collections, group, annotations, notes, dataDir: Zotero.DataDirectory.dir };
}

/** The library as Zotero's own API shows it: every library, item and collection. */
async function libraryView() {
  const libraries = [];
  for (const library of Zotero.Libraries.getAll()) {
    if (library.libraryType !== "user" && library.libraryType !== "group") continue;
    const id = library.libraryID;
    const items = [];
    for (const item of await Zotero.Items.getAll(id, false, true)) {
      const row = {
        key: item.key,
        itemType: item.itemType,
        deleted: !!item.deleted,
        parentKey: item.parentKey || null,
        collections: item.getCollections().map((cid) => Zotero.Collections.get(cid).key),
      };
      if (item.isRegularItem()) row.title = item.getField("title");
      if (item.isAttachment()) {
        row.linkMode = item.attachmentLinkMode;
        row.contentType = item.attachmentContentType;
        row.path = await item.getFilePathAsync();
      }
      items.push(row);
    }
    const collections = Zotero.Collections.getByLibrary(id, true, true).map((c) => ({
      key: c.key,
      name: c.name,
      parentKey: c.parentKey || null,
      deleted: !!c.deleted,
    }));
    libraries.push({
      libraryID: id,
      type: library.libraryType,
      name: library.name,
      items,
      collections,
    });
  }
  return { libraries, journalMode: await Zotero.DB.valueQueryAsync("PRAGMA journal_mode") };
}

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

/* ---------------------------------------------------------------- the driver */

function createDriver() {
  const messages = [];
  let alive = true;
  const listener = {
    QueryInterface: ChromeUtils.generateQI(["nsIConsoleListener"]),
    observe(msg) {
      try {
        const m = describeMessage(msg);
        if (m.level === "error" || m.level === "warning") messages.push(m);
      } catch {
        // a message we cannot read
      }
    },
  };

  const OPS = {
    async hello() {
      return {
        version: Zotero.version,
        platform: Zotero.platform,
        locale: Zotero.locale,
        dataDir: Zotero.DataDirectory.dir,
        profileDir: Zotero.Profile.dir,
      };
    },
    createLibrary,
    libraryView,
    selectItems,
    selectCollections,
    paneState: async () => paneState(),
    waitPane,
    setScope,
    waitScope,
    ask,
    openReader,
    readerState,
    closeReaders,
    clickCitation,
    saveNote,
    openLink,
    openPrefs,
    setPref,
    fieldValue,
    openSettings,
    closePrefs,
    installAddon,
    addonState,
    setAddon,
    leftovers: async () => leftovers(),
    exerciseObservers,
    /** Debugging aid: run a local .js file with `Zotero`, `win` and `ops` in scope; its
     * `result` (a value or a promise) comes back. */
    async runScript({ path }) {
      const scope = {
        Zotero,
        Services,
        Components,
        ChromeUtils,
        win: mainWindow(),
        ops: OPS,
        result: null,
      };
      Services.scriptloader.loadSubScript(PathUtils.toFileURI(path), scope);
      return await scope.result;
    },
    async console() {
      return messages;
    },
    /** View > Zocrates Pane, as a user picks it: the View menu opened, the item activated. */
    async toggleFromMenu() {
      const win = mainWindow();
      const item = win.document.getElementById("zocrates-view-pane-menuitem");
      const popup = item.parentNode;
      const before = paneState().open;
      const shown = new Promise((resolve) =>
        popup.addEventListener("popupshown", resolve, { once: true }),
      );
      popup.parentNode.open = true;
      await shown;
      popup.activateItem(item);
      await waitFor(
        "the pane to toggle",
        () => paneState().open !== before && popup.state === "closed",
        { timeout: 5000 },
      );
      return paneState();
    },
    async quit() {
      alive = false;
      sleep(200).then(() =>
        Services.startup.quit(Components.interfaces.nsIAppStartup.eAttemptQuit),
      );
      return true;
    },
  };

  async function request(method, path, body) {
    const base = Zotero.Prefs.get(REPORTER_PREF, true);
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (response.status === 204) return null;
    if (!response.ok) throw new Error(`${method} ${path}: HTTP ${response.status}`);
    return response.json();
  }

  async function run() {
    await Zotero.initializationPromise;
    await Zotero.uiReadyPromise;
    await request("POST", "/hello", await OPS.hello());
    while (alive) {
      let step = null;
      try {
        step = await request("GET", "/next");
      } catch {
        await sleep(250);
        continue;
      }
      if (!step) {
        await sleep(50);
        continue;
      }
      let reply;
      try {
        const op = OPS[step.op];
        if (!op) throw new Error(`unknown op ${step.op}`);
        reply = { id: step.id, result: (await op(step.args || {})) ?? null };
      } catch (err) {
        reply = {
          id: step.id,
          error: { message: String(err?.message || err), stack: String(err?.stack || "") },
        };
      }
      try {
        await request("POST", "/result", reply);
      } catch {
        // the test went away
      }
    }
  }

  return {
    start() {
      for (const msg of Services.console.getMessageArray() || []) listener.observe(msg);
      Services.console.registerListener(listener);
      run().catch((err) => Zotero.debug(`apptest driver: ${err}`));
    },
    stop() {
      alive = false;
      Services.console.unregisterListener(listener);
    },
  };
}
