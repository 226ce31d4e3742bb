/**
 * Images pinned to a question (image snippets), as plain data: the bytes as base64, their
 * type, their size. The gateway takes PNG, JPEG and WebP of at most 2 MB each, three per
 * question (services/common/turn_scope.py); a larger image is shrunk on the Zotero side
 * (src/zotero/annotations.js) before it gets here.
 *
 * No Zotero, no DOM: runs under node --test.
 */

export const IMAGE_TYPES = Object.freeze(["image/png", "image/jpeg", "image/webp"]);
export const IMAGE_LIMITS = Object.freeze({ bytes: 2 * 1024 * 1024, perQuestion: 3 });

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const BASE64_RE = /^[A-Za-z0-9+/]*={0,2}$/;
export const SHA256_RE = /^[0-9a-f]{64}$/;

/** Standard, padded base64 of bytes (a Uint8Array, an ArrayBuffer or an array of numbers). */
export function bytesToBase64(input) {
  const bytes = input instanceof Uint8Array ? input : new Uint8Array(input);
  let out = "";
  for (let i = 0; i < bytes.length; i += 3) {
    const a = bytes[i];
    const b = i + 1 < bytes.length ? bytes[i + 1] : 0;
    const c = i + 2 < bytes.length ? bytes[i + 2] : 0;
    const n = (a << 16) | (b << 8) | c;
    out += ALPHABET[(n >> 18) & 63] + ALPHABET[(n >> 12) & 63];
    out += i + 1 < bytes.length ? ALPHABET[(n >> 6) & 63] : "=";
    out += i + 2 < bytes.length ? ALPHABET[n & 63] : "=";
  }
  return out;
}

/** How many bytes a base64 text decodes to (-1 when it is not base64). */
export function base64Size(text) {
  const s = String(text ?? "");
  if (s.length % 4 !== 0 || !BASE64_RE.test(s)) return -1;
  const padding = s.endsWith("==") ? 2 : s.endsWith("=") ? 1 : 0;
  return (s.length / 4) * 3 - padding;
}

/** The image type the first bytes say ("image/png", ...), or null. */
export function sniffImageType(input) {
  const b = input instanceof Uint8Array ? input : new Uint8Array(input);
  const starts = (...sig) => sig.every((v, k) => b[k] === v);
  if (starts(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return "image/png";
  if (starts(0xff, 0xd8, 0xff)) return "image/jpeg";
  if (starts(0x52, 0x49, 0x46, 0x46) && b[8] === 0x57 && b[9] === 0x45 && b[10] === 0x42)
    return "image/webp";
  return null;
}

/** `data:` URL of an image snippet's image (for a thumbnail), or "" without its bytes. */
export function imageDataURL(image) {
  if (!image?.data || !IMAGE_TYPES.includes(image.mime_type)) return "";
  return `data:${image.mime_type};base64,${image.data}`;
}

/** Whether an image (`{mime_type, data}`) can be sent: "ok", "type", "size" or "data". */
export function imageProblem(image) {
  if (!IMAGE_TYPES.includes(image?.mime_type)) return "type";
  const size = base64Size(image?.data);
  if (size <= 0) return "data";
  if (size > IMAGE_LIMITS.bytes) return "size";
  return "ok";
}

/** "1.4 MB", "380 KB" */
export function formatBytes(size) {
  if (!Number.isFinite(size) || size < 0) return "";
  if (size >= 1024 * 1024) return `${(size / (1024 * 1024)).toFixed(1)} MB`;
  return `${Math.max(1, Math.round(size / 1024))} KB`;
}
