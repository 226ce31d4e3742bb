/**
 * Build the plugin: build/addon/ (the unpacked plugin) and build/zocrates.xpi.
 *
 *   node scripts/build.mjs [--out DIR]
 *
 * 1. copy addon/ without its locale/ folder (the .ftl files are bundled into the script, step
 *    2, and localized by src/l10n.js: an add-on that ships a locale/ folder makes Zotero 8 to
 *    10 re-translate every window, which rejects unhandled, "uncaught exception: undefined",
 *    over Zotero's own untranslated window buttons; see README.md), the manifest's __version__ set
 *    from package.json;
 * 2. bundle src/index.js with esbuild into content/scripts/zocrates.js (IIFE, Firefox 115,
 *    which Zotero 7 runs on; Zotero 8 runs a later Firefox);
 * 3. zip it (scripts/zip.mjs: deterministic, no system zip needed).
 * Works offline once `npm install` has run.
 */
import { build } from "esbuild";
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createZip } from "./zip.mjs";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const pkg = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8"));
const { addonRef } = pkg.config;

function parseArgs(argv) {
  const args = { out: path.join(root, "build") };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--out") args.out = path.resolve(argv[++i]);
    else throw new Error(`unknown argument ${argv[i]}`);
  }
  return args;
}

function listFiles(dir, base = dir) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) out.push(...listFiles(full, base));
    else out.push(path.relative(base, full).split(path.sep).join("/"));
  }
  return out;
}

export async function buildPlugin({ out = path.join(root, "build") } = {}) {
  const addonDir = path.join(out, "addon");
  // Only what the build makes: build/ui-artifacts (the UI test's screenshots) stays.
  rmSync(addonDir, { recursive: true, force: true });
  rmSync(path.join(out, `${addonRef}.xpi`), { force: true });
  mkdirSync(out, { recursive: true });
  const localeDir = path.join(root, "addon", "locale");
  cpSync(path.join(root, "addon"), addonDir, {
    recursive: true,
    filter: (source) => source !== localeDir && !source.startsWith(`${localeDir}${path.sep}`),
  });

  const manifestPath = path.join(addonDir, "manifest.json");
  const manifest = readFileSync(manifestPath, "utf8").replaceAll("__version__", pkg.version);
  JSON.parse(manifest); // fail the build on a broken manifest
  writeFileSync(manifestPath, manifest);

  await build({
    entryPoints: [path.join(root, "src", "index.js")],
    bundle: true,
    format: "iife",
    target: "firefox115",
    platform: "browser",
    outfile: path.join(addonDir, "content", "scripts", `${addonRef}.js`),
    legalComments: "none",
    loader: { ".ftl": "text" },
    logLevel: "warning",
    banner: {
      js: `/* ${pkg.config.addonName} ${pkg.version}: built from src/ by scripts/build.mjs */`,
    },
  });

  for (const required of [
    "manifest.json",
    "bootstrap.js",
    "prefs.js",
    `content/scripts/${addonRef}.js`,
  ]) {
    if (!existsSync(path.join(addonDir, required)))
      throw new Error(`build: ${required} is missing`);
  }

  const entries = listFiles(addonDir).map((name) => ({
    name,
    data: readFileSync(path.join(addonDir, name)),
  }));
  const xpi = path.join(out, `${addonRef}.xpi`);
  writeFileSync(xpi, createZip(entries));
  return { out, addonDir, xpi, files: entries.map((e) => e.name) };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    const { xpi, files } = await buildPlugin(parseArgs(process.argv.slice(2)));
    const size = statSync(xpi).size;
    console.log(
      `built ${path.relative(process.cwd(), xpi) || xpi} (${files.length} files, ${size} bytes)`,
    );
  } catch (err) {
    console.error(`build failed: ${err.message}`);
    process.exit(1);
  }
}
