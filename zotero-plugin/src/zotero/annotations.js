/**
 * The reader's image annotations (a figure or region the user drew a box around) as image
 * snippets: "Ask Zocrates about this image" in the annotation's context menu pins its image.
 *
 * Zotero APIs, read off zotero/zotero at 7.0.32, 8.0.5, 9.0.6 and 10.0 (the same in all four):
 *
 * - Zotero.Reader.registerEventListener("createAnnotationContextMenu", handler, pluginID)
 *   (xpcom/reader.js, the doc comment before registerEventListener: 7.0.32 l. 1828-1842, 10.0
 *   l. 2747-2762): the event is `{reader, params: {ids, ...}, append}`; `params.ids` are the
 *   selected annotations' ids, which are their item keys (onSaveAnnotations sets
 *   `annotation.key = annotation.id`); `append({label, onCommand})` adds a menu item and must be
 *   called synchronously (zotero/reader src/common/context-menu.js appendCustomItemGroups).
 *   Zotero removes the listener when the plugin shuts down.
 * - Zotero.Items.getByLibraryAndKey(reader._item.libraryID, id): the annotation item, with
 *   annotationType ("image"), annotationComment, annotationPageLabel and annotationPosition
 *   (a JSON string; `pageIndex` is 0-based) (xpcom/data/item.js).
 * - Zotero.Annotations.hasCacheImage(item) / getCacheImagePath(item): the PNG Zotero keeps of an
 *   image annotation, <data dir>/cache/library/<key>.png (xpcom/annotations.js: 7.0.32 to 9.0.6
 *   l. 46 and 52, 10.0 l. 61 and 67). The reader writes it when it saves the annotation
 *   (reader.js onSaveAnnotations -> Zotero.Annotations.saveCacheImage).
 * - Zotero.PDFWorker.renderAttachmentAnnotations(attachmentID): draws the missing ones
 *   (xpcom/pdfWorker/manager.js: 7.0.32 l. 711, 8.0.5 and 9.0.6 l. 726, 10.0 l. 733), which is
 *   what Zotero itself does before it puts image annotations in a note
 *   (xpcom/editorInstance.js createNoteFromAnnotations: 7.0.32 l. 1305-1310, 10.0 l. 1557).
 * - IOUtils.read(path): the file's bytes (a Uint8Array).
 *
 * The page sent is pageIndex + 1, as for text selections (the library index numbers pages from
 * 1). An image over the gateway's 2 MB is drawn again smaller as a JPEG on a canvas of the
 * window (`shrinkImage`).
 */
import { base64Size, bytesToBase64, IMAGE_LIMITS, sniffImageType } from "../images.js";

const XHTML_NS = "http://www.w3.org/1999/xhtml";
const MAX_SIDE = 2048; // px: what vision models look at, at most

/** The image annotations among a context menu's `params.ids` (keys, for later lookup: live
 * Zotero items are not kept across the menu's compartment boundary). */
export function imageAnnotationKeys(Zotero, reader, ids) {
  const libraryID = reader?._item?.libraryID;
  if (!libraryID || !ids?.length) return [];
  const out = [];
  for (const id of Array.from(ids || [])) {
    const item = Zotero.Items.getByLibraryAndKey(libraryID, String(id));
    if (item && item.annotationType === "image") out.push({ libraryID, key: item.key });
  }
  return out;
}

function pageOf(item) {
  try {
    const index = JSON.parse(item.annotationPosition || "{}").pageIndex;
    if (Number.isInteger(index) && index >= 0) return index + 1;
  } catch {
    // not loaded or not JSON: the page label below
  }
  const label = Number.parseInt(item.annotationPageLabel, 10);
  return Number.isInteger(label) && label > 0 ? label : null;
}

/**
 * The image snippet of an image annotation: `{kind: "image", text (its comment), item_key (the
 * paper), page, title, image: {mime_type, data}, annotation_key}`.
 * Throws an Error whose `reason` is "not_found", "no_image" or "too_large" (with `size`).
 * @param {{Zotero, IOUtils, win?: Window}} env  win: where a too large image is shrunk
 */
export async function imageSnippetOf({ Zotero, IOUtils, win }, { libraryID, key }) {
  const item = Zotero.Items.getByLibraryAndKey(libraryID, key);
  if (!item || item.annotationType !== "image") throw failure("not_found");
  if (!(await Zotero.Annotations.hasCacheImage(item))) {
    try {
      await Zotero.PDFWorker.renderAttachmentAnnotations(item.parentID);
    } catch (err) {
      throw failure("no_image", err);
    }
  }
  let bytes;
  try {
    bytes = await IOUtils.read(Zotero.Annotations.getCacheImagePath(item));
  } catch (err) {
    throw failure("no_image", err);
  }
  let image = { mime_type: sniffImageType(bytes) || "image/png", data: bytesToBase64(bytes) };
  if (bytes.length > IMAGE_LIMITS.bytes) {
    const smaller = win ? await shrinkImage(win, image, IMAGE_LIMITS.bytes) : null;
    if (!smaller) throw Object.assign(failure("too_large"), { size: bytes.length });
    image = smaller;
  }
  const attachment = item.parentItem;
  const paper = attachment?.parentItem || attachment;
  return {
    kind: "image",
    text: String(item.annotationComment || "").trim(),
    item_key: paper?.key || "",
    page: pageOf(item),
    title: paper?.getDisplayTitle?.() || "",
    image,
    annotation_key: item.key,
  };
}

function failure(reason, cause) {
  const err = new Error(
    `image annotation: ${reason}${cause ? ` (${cause.message || cause})` : ""}`,
  );
  err.reason = reason;
  return err;
}

/**
 * The image drawn again as a JPEG small enough for `maxBytes` (at most MAX_SIDE px wide or
 * high, white behind transparent parts), or null when even a small one is too large.
 */
export async function shrinkImage(win, image, maxBytes) {
  const doc = win.document;
  const img = doc.createElementNS(XHTML_NS, "img");
  img.src = `data:${image.mime_type};base64,${image.data}`;
  await img.decode();
  let scale = Math.min(1, MAX_SIDE / Math.max(img.naturalWidth, img.naturalHeight, 1));
  for (let attempt = 0; attempt < 6; attempt++, scale *= 0.7) {
    const canvas = doc.createElementNS(XHTML_NS, "canvas");
    canvas.width = Math.max(1, Math.round(img.naturalWidth * scale));
    canvas.height = Math.max(1, Math.round(img.naturalHeight * scale));
    const ctx = canvas.getContext("2d");
    ctx.fillStyle = "#fff";
    ctx.fillRect(0, 0, canvas.width, canvas.height);
    ctx.drawImage(img, 0, 0, canvas.width, canvas.height);
    const url = canvas.toDataURL("image/jpeg", 0.85);
    const data = url.slice(url.indexOf(",") + 1);
    if (base64Size(data) <= maxBytes) return { mime_type: "image/jpeg", data };
  }
  return null;
}
