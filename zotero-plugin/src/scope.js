/**
 * What a question is about: the scope chooser (selected papers / current collection / whole
 * library) and the snippets the user pinned from the PDF reader: passages of text, and images
 * (a figure or region, Zotero's image annotations).
 *
 * Plain data in, plain data out: the Zotero side (src/zotero/) turns Zotero items into
 * `{key, title, parentKey?, parentTitle?}`, reader selections into
 * `{text, pageIndex, pageLabel?, itemKey, title}` and image annotations into image snippets
 * first, so this module runs anywhere.
 *
 * An image snippet is `{kind: "image", text (the user's comment, may be empty), item_key, page,
 * title, image: {mime_type, data?, sha256?, size?}, annotation_key?}`: `data` (base64) once it
 * is loaded, `sha256` when it came back from a message's `context` (the gateway serves its
 * bytes by that name). Only loaded images are sent.
 *
 * `chatBody` builds the POST /chat body (services/gateway/routers/chat.py `ChatBody`, which
 * forbids unknown keys): session_id, prompt, mode, active_items, collection_key,
 * collection_name, snippets. `scopeFromContext` restores a scope from a user message's
 * `context` (GET /sessions/{id}) when the user rewinds to or edits that message.
 */

import { base64Size, IMAGE_LIMITS, IMAGE_TYPES, SHA256_RE } from "./images.js";

export const MODES = Object.freeze({
  ITEMS: "items",
  COLLECTION: "collection",
  LIBRARY: "library",
});
export const LIMITS = Object.freeze({
  items: 500,
  snippets: 10,
  images: IMAGE_LIMITS.perQuestion,
  snippetChars: 8000,
  title: 500,
  prompt: 20000,
});
export const ITEM_KEY_RE = /^[A-Z0-9]{8}$/;

const validKey = (k) => typeof k === "string" && ITEM_KEY_RE.test(k);
const title = (t) =>
  String(t ?? "")
    .trim()
    .slice(0, LIMITS.title);

/** Selected Zotero items (as plain objects) to `[{item_key, title}]`: attachments and notes
 * count as their parent, duplicates and invalid keys go. */
export function itemsFromSelection(selected = []) {
  const seen = new Set();
  const out = [];
  for (const it of selected || []) {
    if (!it) continue;
    const useParent = validKey(it.parentKey);
    const key = useParent ? it.parentKey : (it.key ?? it.item_key);
    if (!validKey(key) || seen.has(key)) continue;
    seen.add(key);
    out.push({ item_key: key, title: title(useParent ? (it.parentTitle ?? it.title) : it.title) });
    if (out.length >= LIMITS.items) break;
  }
  return out;
}

/** A collection `{key, name}`; several selected at once (Zotero 10) also carry `keys` and
 * their papers as `items` (`[{item_key, title}]`, at most LIMITS.items). */
function normalizeCollection(c) {
  if (!c) return null;
  const key = c.key ?? c.collection_key;
  if (!validKey(key)) return null;
  const out = { key, name: title(c.name ?? c.collection_name) };
  const keys = (c.keys || []).filter(validKey);
  if (keys.length > 1) {
    out.keys = keys;
    out.items =
      Array.isArray(c.items) && c.items.every((i) => validKey(i?.item_key))
        ? c.items
            .slice(0, LIMITS.items)
            .map((i) => ({ item_key: i.item_key, title: title(i.title) }))
        : itemsFromSelection(c.items || []);
  }
  return out;
}

/** Several collections selected at once: asked about through their papers. */
const severalCollections = (c) => Boolean(c?.keys && c.items?.length);

/** A scope: `{mode, items, collection, snippets}` (a mode without its data falls back). */
export function createScope({ mode, items = [], collection = null, snippets = [] } = {}) {
  const scope = {
    mode: MODES.LIBRARY,
    items: (items || [])
      .filter((i) => validKey(i?.item_key))
      .map((i) => ({ item_key: i.item_key, title: title(i.title) })),
    collection: normalizeCollection(collection),
    snippets: (snippets || []).map(normalizeSnippet).filter(Boolean).slice(0, LIMITS.snippets),
  };
  scope.mode = resolveMode(scope, mode);
  return scope;
}

function resolveMode(scope, wanted) {
  if (wanted === MODES.ITEMS && scope.items.length) return MODES.ITEMS;
  if (wanted === MODES.COLLECTION && scope.collection) return MODES.COLLECTION;
  if (wanted === MODES.LIBRARY) return MODES.LIBRARY;
  // no (valid) choice: the narrowest scope available
  if (scope.items.length) return MODES.ITEMS;
  if (scope.collection) return MODES.COLLECTION;
  return MODES.LIBRARY;
}

/**
 * The scope chooser after Zotero's selection changed: the new selected items and collection,
 * keeping the user's mode when it is still possible, and the pinned snippets.
 * @param {{selectedItems?: object[], collection?: {key, name} | null}} selection
 */
export function scopeFromSelection(previous, { selectedItems = [], collection = null } = {}) {
  return createScope({
    mode: previous?.mode,
    items: itemsFromSelection(selectedItems),
    collection,
    snippets: previous?.snippets || [],
  });
}

/** Switch between items / collection / library (ignored when that mode has nothing). */
export function setMode(scope, mode) {
  return { ...scope, mode: resolveMode(scope, mode) };
}

/** Which modes the chooser can offer. */
export function availableModes(scope) {
  const modes = [];
  if (scope.items.length) modes.push(MODES.ITEMS);
  if (scope.collection) modes.push(MODES.COLLECTION);
  modes.push(MODES.LIBRARY);
  return modes;
}

function normalizeSnippet(s) {
  if (!s) return null;
  const text = String(s.text ?? "")
    .trim()
    .slice(0, LIMITS.snippetChars);
  const image = isImageSnippet(s) ? normalizeImage(s.image) : null;
  if (isImageSnippet(s) ? !image : !text) return null;
  const itemKey = s.item_key ?? s.itemKey ?? "";
  const page = Number(s.page);
  const out = {
    text,
    item_key: validKey(itemKey) ? itemKey : "",
    page: Number.isInteger(page) && page >= 1 && page <= 100000 ? page : null,
    title: title(s.title),
  };
  if (!image) return out;
  const annotationKey = s.annotation_key ?? s.annotationKey;
  return {
    kind: "image",
    ...out,
    image,
    ...(validKey(annotationKey) ? { annotation_key: annotationKey } : {}),
  };
}

export const isImageSnippet = (s) => s?.kind === "image";

/** An image snippet's image: its type and its bytes, or the name to fetch them by. */
function normalizeImage(image) {
  if (!image || !IMAGE_TYPES.includes(image.mime_type)) return null;
  const data = typeof image.data === "string" && base64Size(image.data) > 0 ? image.data : "";
  const sha256 = SHA256_RE.test(image.sha256 || "") ? image.sha256 : "";
  if (!data && !sha256) return null;
  const size = data ? base64Size(data) : Number(image.size) || 0;
  return {
    mime_type: image.mime_type,
    ...(data ? { data } : {}),
    ...(sha256 ? { sha256 } : {}),
    ...(size ? { size } : {}),
  };
}

/** Whether an image snippet still waits for its bytes (restored from a message's context). */
export const needsImageData = (s) => isImageSnippet(s) && !s.image.data;

/** The image snippet with its bytes in (after the gateway sent them back). */
export function withImageData(snippet, { mime_type, data }) {
  return normalizeSnippet({ ...snippet, image: { ...snippet.image, mime_type, data } });
}

/**
 * A snippet from a reader text selection (Zotero.Reader's `renderTextSelectionPopup` event:
 * `params.annotation.text`, `params.annotation.position.pageIndex` (0-based)); the page sent
 * is pageIndex + 1, as the library index numbers pages.
 */
export function snippetFromSelection({ text, pageIndex, itemKey, title: t } = {}) {
  const index = Number(pageIndex);
  return normalizeSnippet({
    text: String(text ?? "").replace(/\s+/g, " "),
    item_key: itemKey,
    page: Number.isInteger(index) && index >= 0 ? index + 1 : null,
    title: t,
  });
}

const imageIdentity = (s) => s.annotation_key || s.image.sha256 || s.image.data;
const sameSnippet = (a, b) =>
  isImageSnippet(a) || isImageSnippet(b)
    ? isImageSnippet(a) && isImageSnippet(b) && imageIdentity(a) === imageIdentity(b)
    : a.text === b.text && a.item_key === b.item_key && a.page === b.page;

export const imageCount = (scope) => scope.snippets.filter(isImageSnippet).length;

/** Whether another snippet (another image, with `image`) fits the question. */
export function canAddSnippet(scope, { image = false } = {}) {
  return scope.snippets.length < LIMITS.snippets && (!image || imageCount(scope) < LIMITS.images);
}

/** Pin a snippet (ignored when empty, already pinned, or when 10, or 3 images, are pinned). */
export function addSnippet(scope, snippet) {
  const s = normalizeSnippet(snippet);
  if (!s || !canAddSnippet(scope, { image: isImageSnippet(s) })) return scope;
  if (scope.snippets.some((x) => sameSnippet(x, s))) return scope;
  return { ...scope, snippets: [...scope.snippets, s] };
}

/** A short stand-in for a snippet in render keys (an image's bytes are megabytes). */
export function snippetSignature(s) {
  if (!isImageSnippet(s)) return `t|${s.item_key}|${s.page}|${s.text}`;
  const { data = "", sha256 = "" } = s.image;
  return `i|${s.item_key}|${s.page}|${s.text}|${sha256}|${data.length}|${data.slice(-24)}`;
}

/** A short stand-in for a message's context in render keys. */
export function contextSignature(context) {
  if (!context) return "";
  const c = context;
  return [
    c.active_mode || "",
    (c.active_context_items || []).map((i) => i.item_key).join(","),
    c.active_collection?.key || "",
    (c.snippets || []).map((x) => snippetSignature({ ...x, image: x.image || {} })).join(";"),
  ].join("|");
}

/** Replace the snippet at `index` (an image whose bytes arrived). */
export function replaceSnippet(scope, index, snippet) {
  const s = normalizeSnippet(snippet);
  if (!s) return removeSnippet(scope, index);
  return { ...scope, snippets: scope.snippets.map((x, k) => (k === index ? s : x)) };
}

export function removeSnippet(scope, index) {
  return { ...scope, snippets: scope.snippets.filter((_, k) => k !== index) };
}

export function clearSnippets(scope) {
  return { ...scope, snippets: [] };
}

/** The scope fields of POST /chat. */
export function chatFields(scope) {
  const s = scope || createScope();
  let collection = s.mode === MODES.COLLECTION && s.collection ? s.collection : null;
  let items = s.mode === MODES.ITEMS && s.items.length ? s.items.map((i) => ({ ...i })) : null;
  // The gateway takes one collection: several (Zotero 10) are asked about as their papers.
  if (severalCollections(collection)) {
    items = collection.items.map((i) => ({ ...i }));
    collection = null;
  }
  return {
    // What the turn searches, as the gateway stores it (active_mode); a mode whose papers or
    // collection are missing asks about the library, as the chooser shows it.
    mode: items ? MODES.ITEMS : collection ? MODES.COLLECTION : MODES.LIBRARY,
    active_items: items,
    collection_key: collection ? collection.key : null,
    collection_name: collection ? collection.name : "",
    snippets: s.snippets.filter((x) => !needsImageData(x)).map(snippetBody),
  };
}

/** A snippet as POST /chat takes it (`SnippetBody`): an image with its type and bytes. */
function snippetBody(s) {
  if (!isImageSnippet(s)) return { ...s };
  const { annotation_key: _key, image, ...rest } = s;
  return { ...rest, image: { mime_type: image.mime_type, data: image.data } };
}

/** The whole POST /chat body; throws on an empty or too long prompt. */
export function chatBody({ sessionId, prompt, scope }) {
  if (!sessionId) throw new TypeError("chatBody: sessionId is required");
  const text = String(prompt ?? "").trim();
  if (!text) throw new RangeError("The question is empty.");
  if (text.length > LIMITS.prompt) {
    throw new RangeError(
      `The question has ${text.length} characters; at most ${LIMITS.prompt} fit.`,
    );
  }
  return { session_id: sessionId, prompt: text, ...chatFields(scope) };
}

/**
 * The scope a user message was sent with, from its `context` (session API): active items,
 * active collection and snippets. Used on rewind and on edit.
 */
export function scopeFromContext(context) {
  const c = context || {};
  const items = Array.isArray(c.active_context_items) ? c.active_context_items : [];
  const collection = c.active_collection || null;
  let mode = c.active_mode;
  if (![MODES.ITEMS, MODES.COLLECTION, MODES.LIBRARY].includes(mode)) mode = undefined;
  if (!mode) mode = items.length ? MODES.ITEMS : collection ? MODES.COLLECTION : MODES.LIBRARY;
  return createScope({
    mode,
    items,
    collection,
    snippets: Array.isArray(c.snippets) ? c.snippets : [],
  });
}

/** The context a just-sent message would show (to keep a local user message editable; its
 * images keep their bytes, so a rewind needs no fetch). */
export function contextFromScope(scope) {
  const f = chatFields(scope);
  return {
    active_context_items: f.active_items,
    active_collection: f.collection_key ? { key: f.collection_key, name: f.collection_name } : null,
    snippets: (scope || createScope()).snippets
      .filter((x) => !needsImageData(x))
      .map((x) => ({ ...x, ...(x.image ? { image: { ...x.image } } : {}) })),
  };
}

const ENGLISH_LABELS = {
  "zocrates-scope-items": ({ count, title }) => (count === 1 ? title : `${count} papers`),
  "zocrates-scope-collection": ({ name }) => `Collection: ${name}`,
  "zocrates-scope-library": () => "Whole library",
};

/**
 * A short label for the chooser chip.
 * @param {(id: string, args?: object) => string} [t] the pane's strings (sidebar.ftl
 *   zocrates-scope-*); English without it
 */
export function scopeLabel(scope, t = (id, args) => ENGLISH_LABELS[id](args || {})) {
  const s = scope || createScope();
  if (s.mode === MODES.ITEMS)
    return t("zocrates-scope-items", {
      count: s.items.length,
      title: s.items[0]?.title || s.items[0]?.item_key || "",
    });
  if (s.mode === MODES.COLLECTION && s.collection)
    return t("zocrates-scope-collection", { name: s.collection.name || s.collection.key });
  return t("zocrates-scope-library");
}
