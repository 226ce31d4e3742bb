/**
 * Keep an answer in Zotero: save it as a note, or copy it with its citations.
 *
 * APIs (checked against Zotero 7.0.0, 7.0.32, 8.0.5, 9.0.6 and 10.0.0 sources):
 * - Zotero.Items.getByLibraryAndKeyAsync(libraryID, key): the item, or false
 *   (data/dataObjects.js); item.deleted (in the trash), isRegularItem(), isAttachment(),
 *   isFileAttachment(), isPDFAttachment(), parentItem, libraryID, key.
 * - item.getBestAttachment(): the oldest PDF first, never a linked URL, false when none; it
 *   throws on anything but a regular item (data/item.js). A citation's `attachment_key` (the
 *   PDF its quote came from) wins when it is a file attachment whose parentItem is the item.
 * - Zotero.Libraries.get(id).libraryType ("user" | "group" | "feed") and .editable;
 *   Zotero.Groups.getGroupIDFromLibraryID(id): the group id that zotero://open-pdf/groups/
 *   wants.
 * - A note as ZoteroPane.newNote makes one: `new Zotero.Item("note")`, `libraryID`,
 *   `setNote(html)`, then `parentKey = key` for a child note (the parent must be a regular
 *   item, item.js _saveData) or `addToCollection(collectionID)` for a standalone one, and
 *   `await saveTx({notifierData: {autoSyncDelay: Zotero.Notes.AUTO_SYNC_DELAY}})`; the new
 *   note's id and key are set by the save.
 * - The pane's library and collections through items.js's helpers and getSelectedCollections()
 *   (10) / getSelectedCollection() (7 to 9), never the singular getters in 10, which throw.
 * - Zotero.Utilities.Internal.copyTextToClipboard(text) (utilities_internal.js, 7 to 10); Zotero
 *   has no helper for HTML, so both flavours go through nsITransferable the way
 *   fileInterface.js's Quick Copy does (text/plain and text/html; Gecko 115 and 140 have no
 *   text/unicode).
 */

import { citationIndex } from "../citations.js";
import {
  answerToMarkdown,
  answerToNoteHTML,
  answerToPlainText,
  citedItemKeys,
  linkResolver,
} from "../notes.js";
import { selectedLibraryIDs } from "./items.js";

/** Codes of the errors thrown here (the pane shows a localized sentence for each). */
export const NoteErrors = Object.freeze({ READ_ONLY: "library_read_only" });

function noteError(code, message, extra = {}) {
  return Object.assign(new Error(message), { code, ...extra });
}

/** The libraries to look cited items up in: the pane's, then the user's. */
function lookupLibraries(Zotero, pane) {
  const ids = [];
  try {
    ids.push(...selectedLibraryIDs(pane));
  } catch {
    // no library selected
  }
  ids.push(Zotero.Libraries.userLibraryID);
  return [...new Set(ids)];
}

/** The Zotero collections selected in the collection tree (Zotero 10 can select several). */
export function selectedZoteroCollections(pane) {
  if (!pane) return [];
  if (typeof pane.getSelectedCollections === "function")
    return [...(pane.getSelectedCollections() || [])].filter(Boolean);
  if (typeof pane.getSelectedCollection === "function") {
    const collection = pane.getSelectedCollection();
    return collection ? [collection] : [];
  }
  return [];
}

/** The group id of a group library, null for the user's library. */
export function groupIDOf(Zotero, libraryID) {
  const library = Zotero.Libraries.get(libraryID);
  if (!library || library.libraryType !== "group") return null;
  return Zotero.Groups.getGroupIDFromLibraryID(libraryID);
}

/**
 * A cited key as a note needs it: the regular item (a child note's possible parent) and the
 * file attachment that its links open. Null when no library holds the key (or it is in the trash).
 * @returns {Promise<{item, parent: object | null, attachment: object | null} | null>}
 */
export async function resolveCitedItem(Zotero, libraryIDs, key) {
  let item = null;
  for (const libraryID of libraryIDs) {
    const found = await Zotero.Items.getByLibraryAndKeyAsync(libraryID, key);
    if (found && !found.deleted) {
      item = found;
      break;
    }
  }
  if (!item) return null;
  if (item.isRegularItem())
    return { item, parent: item, attachment: (await item.getBestAttachment()) || null };
  if (item.isAttachment()) {
    const parent = item.parentItem && item.parentItem.isRegularItem() ? item.parentItem : null;
    return { item, parent, attachment: item.isFileAttachment() ? item : null };
  }
  return { item, parent: null, attachment: null }; // a note or an annotation
}

/**
 * The attachment a citation's evidence was read from (`attachment_key`), when it is still a
 * file attachment of the cited regular item (as items.js openCitation checks); else null.
 */
export async function citedAttachment(Zotero, { item }, attachmentKey) {
  if (!attachmentKey || !item.isRegularItem()) return null;
  const found = await Zotero.Items.getByLibraryAndKeyAsync(item.libraryID, attachmentKey);
  if (!found || found.deleted || !found.isFileAttachment()) return null;
  return found.parentItem?.id === item.id ? found : null;
}

const targetOf = (Zotero, attachment) => ({
  key: attachment.key,
  groupID: groupIDOf(Zotero, attachment.libraryID),
  pdf: attachment.isPDFAttachment(),
});

async function resolveAll(Zotero, pane, answer, citations) {
  const libraryIDs = lookupLibraries(Zotero, pane);
  const entries = [...citationIndex(citations, answer).values()].sort((a, b) => a.n - b.n);
  const keys = [...new Set(entries.map((c) => c.item_key))];
  const resolved = new Map();
  for (const key of keys) {
    const r = await resolveCitedItem(Zotero, libraryIDs, key);
    if (r) resolved.set(key, r);
  }
  // Per item: its best attachment, and the attachments its citations name (the PDF each
  // quote came from; an item can have several).
  const targets = new Map();
  for (const [key, r] of resolved) {
    const attachments = new Map();
    for (const c of entries) {
      if (c.item_key !== key || !c.attachment_key || attachments.has(c.attachment_key)) continue;
      const found = await citedAttachment(Zotero, r, c.attachment_key);
      if (found) attachments.set(c.attachment_key, targetOf(Zotero, found));
    }
    // An item without a PDF is kept for its notes (they link to themselves, in its library).
    targets.set(key, {
      groupID: groupIDOf(Zotero, r.item.libraryID),
      ...(r.attachment ? targetOf(Zotero, r.attachment) : {}),
      attachments,
    });
  }
  return { libraryIDs, keys, resolved, linkFor: linkResolver(targets) };
}

/**
 * The `linkFor` of an answer's citations: the PDF each quote came from (the citation's
 * `attachment_key`, when it is still one of the item's), else the cited item's best
 * attachment, in the library that holds it (the pane's, else the user's).
 * @returns {Promise<(citation: {item_key: string, page: number | null}) => string | null>}
 */
export async function citationLinks({ Zotero, pane, answer = "", citations = [] }) {
  return (await resolveAll(Zotero, pane, answer, citations)).linkFor;
}

/**
 * Save an answer as a Zotero note: a child note of the item the answer cites most (of those
 * found; ties: the first cited), else a standalone note in the pane's library and selected
 * collections. Its links open the PDF each quote came from (else the cited item's best
 * attachment) at the cited page.
 * @param {{Zotero, pane, question?: string, answer?: string, citations?: object[],
 *          title?: string, labels?: object}} options
 * @returns {Promise<{noteID: number, noteKey: string, parentKey: string | null,
 *          collectionID: number | null, collectionIDs: number[]}>}
 * @throws {Error} code `library_read_only` when the note's library cannot be edited
 */
export async function saveAnswerNote({
  Zotero,
  pane,
  question = "",
  answer = "",
  citations = [],
  title = "",
  labels = {},
}) {
  const { libraryIDs, keys, resolved, linkFor } = await resolveAll(Zotero, pane, answer, citations);
  const html = answerToNoteHTML({ question, answer, citations, title, labels, linkFor });

  // Markers first; an answer without markers still has its sources.
  const ranked = [...new Set([...citedItemKeys(citations, answer), ...keys])];
  const parent = ranked.map((key) => resolved.get(key)?.parent).find(Boolean) || null;
  const libraryID = parent ? parent.libraryID : libraryIDs[0];
  const library = Zotero.Libraries.get(libraryID);
  if (library && library.editable === false)
    throw noteError(
      NoteErrors.READ_ONLY,
      `The library "${library.name}" is read-only: the note cannot be saved there.`,
      { library: library.name },
    );

  const note = new Zotero.Item("note");
  note.libraryID = libraryID;
  note.setNote(html);
  let collectionIDs = [];
  if (parent) note.parentKey = parent.key;
  else {
    collectionIDs = selectedZoteroCollections(pane)
      .filter((c) => c.libraryID === libraryID)
      .map((c) => c.id);
    for (const id of collectionIDs) note.addToCollection(id);
  }
  const delay = Zotero.Notes?.AUTO_SYNC_DELAY;
  await note.saveTx(delay != null ? { notifierData: { autoSyncDelay: delay } } : {});
  return {
    noteID: note.id,
    noteKey: note.key,
    parentKey: parent ? parent.key : null,
    collectionID: collectionIDs[0] ?? null,
    collectionIDs,
  };
}

/**
 * Put text on the clipboard, with an HTML flavour beside it when `html` is given (rich-text
 * editors paste that one).
 * @param {object} Zotero
 * @param {string} text
 * @param {{html?: string, components?: object}} [options] components: Gecko's `Components`
 * @returns {"text" | "text+html"} what was written
 */
export function copyToClipboard(
  Zotero,
  text,
  { html = "", components = globalThis.Components } = {},
) {
  const C = components;
  if (html && C?.classes?.["@mozilla.org/widget/transferable;1"]) {
    const transferable = C.classes["@mozilla.org/widget/transferable;1"].createInstance(
      C.interfaces.nsITransferable,
    );
    const clipboard = C.classes["@mozilla.org/widget/clipboard;1"].getService(
      C.interfaces.nsIClipboard,
    );
    for (const [flavor, data] of [
      ["text/plain", String(text)],
      ["text/html", String(html)],
    ]) {
      const str = C.classes["@mozilla.org/supports-string;1"].createInstance(
        C.interfaces.nsISupportsString,
      );
      str.data = data;
      transferable.addDataFlavor(flavor);
      // The length argument as fileInterface.js passes it (Gecko ignores it now).
      transferable.setTransferData(flavor, str, data.length * 2);
    }
    clipboard.setData(transferable, null, C.interfaces.nsIClipboard.kGlobalClipboard);
    return "text+html";
  }
  Zotero.Utilities.Internal.copyTextToClipboard(String(text));
  return "text";
}

/**
 * "Copy with citations": the answer as plain text (with the note's HTML as the rich flavour,
 * its markers linked to the PDFs) or as Markdown (text only, so Markdown editors get exactly
 * that), the sources listed under it.
 * @param {{Zotero, pane, question?: string, answer?: string, citations?: object[],
 *          as?: "text" | "markdown", labels?: object, components?: object}} options
 * @returns {Promise<{text: string, html: string, written: "text" | "text+html"}>}
 */
export async function copyAnswer({
  Zotero,
  pane,
  question = "",
  answer = "",
  citations = [],
  as = "text",
  labels = {},
  components = globalThis.Components,
}) {
  const linkFor = await citationLinks({ Zotero, pane, answer, citations });
  if (as === "markdown") {
    const text = answerToMarkdown({ question, answer, citations, linkFor, labels });
    return { text, html: "", written: copyToClipboard(Zotero, text, { components }) };
  }
  const text = answerToPlainText({ question, answer, citations, labels });
  const html = answerToNoteHTML({ question, answer, citations, linkFor, labels });
  return { text, html, written: copyToClipboard(Zotero, text, { html, components }) };
}
