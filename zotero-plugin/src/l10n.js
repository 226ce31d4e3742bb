/**
 * The pane's strings, through Fluent (@fluent/bundle, the library Firefox's own Fluent grew
 * from), from the plugin's .ftl files (addon/locale/<locale>/*.ftl).
 *
 * The pane formats synchronously (it renders on every streamed chunk) and also marks each
 * element with `data-zc-l10n` / `data-zc-l10n-args` (dom.js's `l10n` attribute), so a test can
 * find every string by its id. Not `data-l10n-id`: Zotero's own document localization does
 * not load the plugin's files (scripts/build.mjs says why) and must leave its elements alone. A message missing in the chosen locale falls back to
 * English; a message missing everywhere shows its id (and is reported once), never nothing.
 *
 *   const l10n = createLocalization({ locale: "de-DE", resources: { "en-US": [ftl], de: [ftl] } });
 *   l10n.t("zocrates-sidebar-new-chat")                 -> "Neuer Chat"
 *   l10n.message("zocrates-sidebar-send", {})           -> { value, attributes: { title } }
 */
import { FluentBundle, FluentResource } from "@fluent/bundle";

export const DEFAULT_LOCALE = "en-US";

/**
 * The shipped locale closest to `wanted` ("de-AT" -> "de", "en-GB" -> "en-US"), else English.
 * @param {string} wanted a BCP 47 tag (Zotero.locale, navigator.language)
 * @param {string[]} available the shipped locales
 */
export function negotiateLocale(wanted, available) {
  const tag = String(wanted || "").replace(/_/g, "-");
  const lower = (s) => s.toLowerCase();
  const exact = available.find((l) => lower(l) === lower(tag));
  if (exact) return exact;
  const lang = lower(tag.split("-")[0] || "");
  const sameLanguage = available.find((l) => lower(l.split("-")[0]) === lang);
  if (sameLanguage) return sameLanguage;
  return available.includes(DEFAULT_LOCALE) ? DEFAULT_LOCALE : available[0] || DEFAULT_LOCALE;
}

function bundleFor(locale, texts, report) {
  // No bidi isolation marks around arguments: the pane is left-to-right and its strings are
  // compared and copied as plain text.
  const bundle = new FluentBundle(locale, { useIsolating: false });
  for (const text of texts || []) {
    const errors = bundle.addResource(new FluentResource(text));
    for (const e of errors) report(`${locale}: ${e?.message || e}`);
  }
  return bundle;
}

/**
 * @param {{locale?: string, resources: Record<string, string[]>, log?: (msg: string) => void}} options
 *   resources: the text of each locale's .ftl files
 */
export function createLocalization({ locale = DEFAULT_LOCALE, resources, log = () => {} }) {
  const available = Object.keys(resources || {});
  const chosen = negotiateLocale(locale, available);
  const chain = [chosen, DEFAULT_LOCALE].filter((l, i, all) => all.indexOf(l) === i);
  const bundles = chain
    .filter((l) => resources[l])
    .map((l) => bundleFor(l, resources[l], (m) => log(`l10n: ${m}`)));
  const reported = new Set();

  function find(id) {
    for (const bundle of bundles) {
      const msg = bundle.getMessage(id);
      if (msg) return { bundle, msg };
    }
    if (!reported.has(id)) {
      reported.add(id);
      log(`l10n: no string "${id}"`);
    }
    return null;
  }

  function format(bundle, pattern, args) {
    const errors = [];
    const out = bundle.formatPattern(pattern, args || {}, errors);
    for (const e of errors) log(`l10n: ${e?.message || e}`);
    return out;
  }

  /** A message's value and attributes; `null` value for an attributes-only message. */
  function message(id, args) {
    const found = find(id);
    if (!found) return { value: id, attributes: {} };
    const { bundle, msg } = found;
    const attributes = {};
    for (const [name, pattern] of Object.entries(msg.attributes || {}))
      attributes[name] = format(bundle, pattern, args);
    return { value: msg.value ? format(bundle, msg.value, args) : null, attributes };
  }

  /** A message's value as text. */
  function t(id, args) {
    const { value, attributes } = message(id, args);
    return value ?? Object.values(attributes)[0] ?? id;
  }

  return { locale: chosen, locales: available, t, message, has: (id) => !!find(id) };
}
