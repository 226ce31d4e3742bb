/**
 * Zotero items <-> the plain data of scope.js and citations. Zotero objects are passed in.
 *
 * APIs (checked against Zotero 7.0.32, 8.0.5, 9.0.6 and 10.0.1 sources; test/zotero-versions.js
 * has the surface of each): ZoteroPane.getSelectedItems(); the selected collections and library
 * through getSelectedCollections() / getSelectedLibraryIDs() where they exist (Zotero 10 on,
 * where several can be selected; their papers through collection.getChildItems() and
 * getChildCollections()),
 * else getSelectedCollection() / getSelectedLibraryID() (Zotero 7 to 9; in 10 they are stubs
 * that throw, so the new names are tried first and the old ones are never called there);
 * Zotero.Items.getByLibraryAndKey(libraryID, key), item.isRegularItem(), item.isAttachment(),
 * item.getBestAttachment() (regular items only), item.getDisplayTitle(), item.parentItem,
 * Zotero.Reader.open(itemID, {pageIndex}) (resolves to the reader), ZoteroPane.selectItem(itemID);
 * the reader's find bar through toggleFindPopup() and zotero/reader's find state, when present.
 */

import { findPhrase } from "../citations.js";

/** A Zotero item as scope.js wants it: `{key, title, parentKey?, parentTitle?}`. */
export function describeItem(item) {
  const parent = item.parentItem || null;
  return {
    key: item.key,
    title: safeTitle(item),
    parentKey: parent ? parent.key : undefined,
    parentTitle: parent ? safeTitle(parent) : undefined,
  };
}

function safeTitle(item) {
  try {
    return item.getDisplayTitle();
  } catch {
    return "";
  }
}

/** The papers of collections and their sub-collections (regular items and standalone files,
 * not notes), once each. collection.getChildItems / getChildCollections leave trashed ones out;
 * a collection that cannot be read (deleted meanwhile) adds nothing. */
function collectionPapers(collections) {
  const papers = new Map();
  const seen = new Set();
  const visit = (collection) => {
    if (seen.has(collection.key)) return;
    seen.add(collection.key);
    let items;
    let children;
    try {
      items = collection.getChildItems(false) || [];
      children = collection.getChildCollections(false) || [];
    } catch {
      return;
    }
    for (const item of items) {
      if (!item.isNote() && !papers.has(item.key)) papers.set(item.key, describeItem(item));
    }
    for (const child of children) visit(child);
  };
  for (const collection of collections) visit(collection);
  return [...papers.values()];
}

/**
 * The current collection of the items pane, or null (library root, a saved search, ...).
 * Zotero 10 can select several collections at once: then the result names them all and carries
 * their papers (`keys`, `items`), which scope.js asks about as one scope; several collections
 * without a paper are nothing to ask about (null).
 */
export function selectedCollection(pane) {
  let collections = [];
  if (typeof pane.getSelectedCollections === "function") {
    collections = [...(pane.getSelectedCollections() || [])];
  } else if (typeof pane.getSelectedCollection === "function") {
    const collection = pane.getSelectedCollection();
    if (collection) collections = [collection];
  }
  if (!collections.length) return null;
  const [first] = collections;
  if (collections.length === 1) return { key: first.key, name: first.name };
  const items = collectionPapers(collections);
  if (!items.length) return null;
  return {
    key: first.key,
    name: collections.map((c) => c.name).join(", "),
    keys: collections.map((c) => c.key),
    items,
  };
}

/** What scope.js's scopeFromSelection takes, read from the Zotero pane. */
export function selectionFromPane(pane) {
  return {
    selectedItems: (pane.getSelectedItems() || []).map(describeItem),
    collection: selectedCollection(pane),
  };
}

/** The libraries selected in the collection tree (Zotero 10 can select several). */
export function selectedLibraryIDs(pane) {
  if (!pane) return [];
  if (typeof pane.getSelectedLibraryIDs === "function")
    return [...(pane.getSelectedLibraryIDs() || [])];
  if (typeof pane.getSelectedLibraryID === "function") {
    const id = pane.getSelectedLibraryID();
    return id == null || id === false ? [] : [id];
  }
  return [];
}

/** The item with that key in the selected library, else the user's library. */
export function findItem(Zotero, pane, key) {
  const ids = [];
  try {
    ids.push(...selectedLibraryIDs(pane));
  } catch {
    // no library selected
  }
  ids.push(Zotero.Libraries.userLibraryID);
  for (const libraryID of [...new Set(ids)]) {
    const item = Zotero.Items.getByLibraryAndKey(libraryID, key);
    if (item) return item;
  }
  return null;
}

/**
 * Open a citation: the item's best attachment in Zotero's reader at the cited page
 * (pages are 1-based in answers, 0-based in the reader), else select the item. With a
 * `quote`, the reader's find bar then looks for its first words, highlighting them on the
 * page, where the reader has one (Zotero 7+: toggleFindPopup and the find state of
 * zotero/reader; without them the page alone opens).
 *
 * What the user wrote opens itself: a note (`origin` "note", `sourceKey` its key) is selected
 * in the items pane, where Zotero shows it; an annotation (`origin` "highlight" or
 * "comment") opens its PDF in the reader at the annotation (`{annotationID: key}`, which the
 * reader's navigate() takes, as zotero://open-pdf/...?annotation=KEY does).
 * @returns {Promise<"opened" | "found" | "selected" | "note" | "annotation" | "missing">}
 */
export async function openCitation({
  Zotero,
  pane,
  itemKey,
  attachmentKey = "",
  page,
  quote = "",
  origin = "",
  sourceKey = "",
}) {
  if (origin === "note" && sourceKey) {
    const note = findItem(Zotero, pane, sourceKey);
    if (note) {
      await pane.selectItem(note.id);
      return "note";
    }
  }
  const item = findItem(Zotero, pane, itemKey);
  if (!item) return "missing";
  if ((origin === "highlight" || origin === "comment") && sourceKey && attachmentKey) {
    const pdf = findItem(Zotero, pane, attachmentKey);
    if (pdf && pdf.isAttachment()) {
      const location = { annotationID: sourceKey };
      if (Number.isInteger(page) && page >= 1) location.pageIndex = page - 1;
      await Zotero.Reader.open(pdf.id, location);
      return "annotation";
    }
  }
  let attachment = null;
  if (item.isAttachment()) attachment = item;
  else if (item.isRegularItem()) {
    // The PDF the evidence came from, if it is still one of the item's; else Zotero's pick.
    const cited = attachmentKey ? findItem(Zotero, pane, attachmentKey) : null;
    attachment =
      cited && cited.isAttachment() && cited.parentItem?.id === item.id
        ? cited
        : await item.getBestAttachment();
  }
  if (attachment) {
    const location = Number.isInteger(page) && page >= 1 ? { pageIndex: page - 1 } : undefined;
    const reader = await Zotero.Reader.open(attachment.id, location);
    const phrase = findPhrase(quote);
    if (phrase && (await findInReader(reader, phrase))) return "found";
    return "opened";
  }
  await pane.selectItem(item.id);
  return "selected";
}

/**
 * Search `phrase` with the reader's own find bar (highlighting every match, the first on or
 * after the current page). Zotero's ReaderInstance forwards unknown members to the internal
 * reader of zotero/reader, whose find state is `{popupOpen, active, query, highlightAll, ...}`.
 * @returns {Promise<boolean>} whether the find was started
 */
export async function findInReader(reader, phrase) {
  const internal = reader?._internalReader;
  if (
    !reader ||
    typeof reader.toggleFindPopup !== "function" ||
    typeof internal?._handleFindStateChange !== "function"
  ) {
    return false;
  }
  try {
    if (reader._initPromise) await reader._initPromise;
    reader.toggleFindPopup({ primary: true, open: true });
    const previous = internal._state?.primaryViewFindState || {};
    internal._handleFindStateChange(true, {
      ...previous,
      popupOpen: true,
      active: true,
      query: phrase,
      highlightAll: true,
      caseSensitive: false,
      entireWord: false,
      index: null,
      result: null,
    });
    return true;
  } catch (e) {
    return false; // the page is open; finding is a courtesy
  }
}
