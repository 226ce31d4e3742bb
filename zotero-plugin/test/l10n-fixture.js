/** The shipped Fluent files read from disk (the bundle gets them through esbuild). */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createLocalization } from "../src/l10n.js";

export const LOCALE_DIR = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  "..",
  "addon",
  "locale",
);

export function readResources() {
  const out = {};
  for (const locale of readdirSync(LOCALE_DIR)) {
    const dir = path.join(LOCALE_DIR, locale);
    out[locale] = readdirSync(dir)
      .filter((f) => f.endsWith(".ftl"))
      .sort()
      .map((f) => readFileSync(path.join(dir, f), "utf8"));
  }
  return out;
}

export function localization(locale = "en-US", log = () => {}) {
  return createLocalization({ locale, resources: readResources(), log });
}
