#!/usr/bin/env node
/**
 * The pane's UI test: the plugin's own UI code in a browser harness, against a real gateway.
 *
 *   node test-ui/run.mjs --gateway http://127.0.0.1:8765 --token-file ~/Zotero/zocrates-data/gateway.token \
 *        [--artifacts build/ui-artifacts] [--shim test-ui/fixture-library.json] [--chromium /usr/bin/chromium]
 *
 * Serves test-ui/harness.html on 127.0.0.1 with /gateway/* proxied to --gateway, drives
 * Debian's Chromium through playwright-core, and walks the scenario below, saving PNG
 * screenshots to --artifacts. Exits 0 when every step passed, 1 with the failing step's
 * message (and failure.png) otherwise, 2 when something it needs is missing.
 *
 * The library is expected to be indexed, with the offline model answering (answers start
 * with "*Offline extractive answer..."); --shim describes the Zotero library the shim shows
 * (item keys, titles, collections, the reader page): by default the 38-paper test library of
 * tests/support/zotero_fixture.py.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { checkLocalModels } from "./prefs-models.mjs";
import { bundleHarness, createControl, PLUGIN_ROOT, startServer } from "./server.mjs";
import { createLocalization } from "../src/l10n.js";

/** The plugin's strings in a locale, from the shipped .ftl files (as the bundle has them). */
function localization(locale) {
  const dir = path.join(PLUGIN_ROOT, "addon", "locale");
  const resources = {};
  for (const l of readdirSync(dir))
    resources[l] = readdirSync(path.join(dir, l))
      .filter((f) => f.endsWith(".ftl"))
      .map((f) => readFileSync(path.join(dir, l, f), "utf8"));
  return createLocalization({ locale, resources });
}

/** Every message id of the shipped English files. */
function ftlIds() {
  const dir = path.join(PLUGIN_ROOT, "addon", "locale", "en-US");
  const ids = [];
  for (const f of readdirSync(dir).filter((x) => x.endsWith(".ftl")))
    for (const m of readFileSync(path.join(dir, f), "utf8").matchAll(/^([a-z][\w-]*)\s*=/gm))
      ids.push(m[1]);
  return ids;
}

const FOCUSED = "How does lmer choose its optimizer, and how does brms fit the same kind of model?";
const BROAD = "How does lmer choose its optimizer, and which photonic chips implement its solver?";
const PAUSED =
  "Why did lme4 switch to derivative-free optimizers, and which photonic chips run them?";
const GUIDANCE =
  "Look for hardware implementations: photonic or optical chips running the optimizer.";

function usage(message) {
  if (message) console.error(`run.mjs: ${message}`);
  console.error(
    "usage: node test-ui/run.mjs --gateway URL (--token-file PATH | --token TOKEN) [--artifacts DIR] [--shim JSON] [--chromium PATH] [--timeout-ms N] [--remote-api-base URL --remote-model openai/NAME]",
  );
  process.exit(2);
}

function parseArgs(argv) {
  const args = {
    artifacts: path.join(PLUGIN_ROOT, "build", "ui-artifacts"),
    shim: path.join(PLUGIN_ROOT, "test-ui", "fixture-library.json"),
    chromium: process.env.CHROMIUM_PATH || "/usr/bin/chromium",
    timeoutMs: 30000,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) usage(`${a} needs a value`);
      return argv[++i];
    };
    if (a === "--gateway") args.gateway = next();
    else if (a === "--token-file") args.tokenFile = next();
    else if (a === "--token") args.token = next();
    else if (a === "--artifacts") args.artifacts = path.resolve(next());
    else if (a === "--shim") args.shim = path.resolve(next());
    else if (a === "--chromium") args.chromium = next();
    else if (a === "--timeout-ms") args.timeoutMs = Number(next());
    else if (a === "--remote-api-base") args.remoteApiBase = next();
    else if (a === "--remote-model") args.remoteModel = next();
    else if (a === "--help" || a === "-h") usage();
    else usage(`unknown argument ${a}`);
  }
  if (!args.gateway) usage("--gateway is required");
  if (!args.tokenFile && !args.token) usage("--token-file or --token is required");
  args.gateway = args.gateway.replace(/\/+$/, "");
  return args;
}

/** What the runner needs, with the command that installs what is missing. */
async function preflight(args) {
  const problems = [];
  if (!existsSync(args.chromium)) {
    problems.push(
      `Chromium not found at ${args.chromium}: install it with \`apt-get install -y chromium\` (Debian), or pass --chromium PATH.`,
    );
  }
  let playwright = null;
  try {
    playwright = await import("playwright-core");
  } catch {
    problems.push(
      `playwright-core is not installed: run \`npm ci\` (or \`npm install\`) in ${PLUGIN_ROOT}.`,
    );
  }
  try {
    await import("esbuild");
  } catch {
    problems.push(`esbuild is not installed: run \`npm ci\` in ${PLUGIN_ROOT}.`);
  }
  if (args.tokenFile && !existsSync(args.tokenFile))
    problems.push(
      `No token file at ${args.tokenFile}: is the gateway running for that Zotero data directory?`,
    );
  if (!existsSync(args.shim)) problems.push(`No shim library at ${args.shim}.`);
  if (problems.length) {
    console.error(`run.mjs cannot start:\n  - ${problems.join("\n  - ")}`);
    process.exit(2);
  }
  return playwright;
}

// ------------------------------------------------------------------ a tiny gateway client (Node)

function gatewayClient(base, token) {
  return async function api(method, p, body) {
    const res = await fetch(base + p, {
      method,
      headers: { Authorization: `Bearer ${token()}`, "Content-Type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let json;
    try {
      json = JSON.parse(text);
    } catch {
      json = { text };
    }
    if (!res.ok) throw new Error(`${method} ${p}: HTTP ${res.status} ${text.slice(0, 300)}`);
    return json;
  };
}

// ------------------------------------------------------------------ the scenario

class StepError extends Error {}

function check(condition, message) {
  if (!condition) throw new StepError(message);
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const playwright = await preflight(args);
  rmSync(args.artifacts, { recursive: true, force: true });
  mkdirSync(args.artifacts, { recursive: true });
  const readToken = () => (args.token ? args.token : readFileSync(args.tokenFile, "utf8").trim());
  const api = gatewayClient(args.gateway, readToken);
  const fixture = JSON.parse(readFileSync(args.shim, "utf8"));

  try {
    await fetch(`${args.gateway}/healthz`);
  } catch (err) {
    console.error(
      `run.mjs: nothing answers at ${args.gateway}/healthz (${err.cause?.code || err.message}). Start the stack (\`make run\`) first.`,
    );
    process.exit(2);
  }

  const started = Date.now();
  const bundle = await bundleHarness();
  const control = createControl();
  const server = await startServer({ gateway: args.gateway, readToken, fixture, bundle, control });
  const browser = await playwright.chromium.launch({
    executablePath: args.chromium,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-gpu",
    ],
  });
  const context = await browser.newContext({
    viewport: { width: 1360, height: 900 },
    deviceScaleFactor: 1,
    colorScheme: "light",
  });
  const page = await context.newPage();
  page.setDefaultTimeout(args.timeoutMs);
  const consoleLines = [];
  page.on("console", (m) => consoleLines.push(`[${m.type()}] ${m.text()}`));
  page.on("pageerror", (e) => consoleLines.push(`[pageerror] ${e.stack || e.message}`));

  // The question box must never become disabled: watched in every page load of the run.
  const disabledSeen = [];
  await page.exposeBinding("zhReportDisabled", (_source, where) => disabledSeen.push(where));
  await page.addInitScript(() => {
    const watch = () => {
      const el = document.querySelector(".zocrates-pane .zc-input");
      if (!el) return setTimeout(watch, 20);
      const report = () => (el.disabled || el.readOnly) && window.zhReportDisabled(location.href);
      new MutationObserver(report).observe(el, { attributes: true });
      report();
    };
    document.addEventListener("DOMContentLoaded", watch);
  });
  const steps = [];
  const shots = [];
  let current = "";
  async function step(name, fn) {
    current = name;
    const t0 = Date.now();
    process.stdout.write(`• ${name} … `);
    await fn();
    const ms = Date.now() - t0;
    steps.push({ name, ms });
    console.log(`ok (${(ms / 1000).toFixed(1)} s)`);
  }
  async function shot(name, options = {}) {
    const file = path.join(args.artifacts, name);
    await page.screenshot({ path: file, ...options });
    shots.push(file);
  }

  const pane = ".zocrates-pane";
  const textarea = `${pane} .zc-input`;
  const assistant = `${pane} .zocrates-message.assistant`;
  const lastAssistant = `${assistant} >> nth=-1`;
  const bubbleStatus = (sel = lastAssistant) => page.locator(sel).getAttribute("data-status");
  const waitStatus = async (wanted, sel = lastAssistant, timeout = 120000) => {
    const t0 = Date.now();
    for (;;) {
      const s = await bubbleStatus(sel);
      if (wanted.includes(s)) return s;
      check(
        Date.now() - t0 < timeout,
        `the assistant bubble stayed "${s}" (waited for ${wanted.join(" or ")})`,
      );
      await page.waitForTimeout(100);
    }
  };
  const textareaEnabled = async (where) => {
    const disabled = await page
      .locator(textarea)
      .evaluate((el) => el.disabled || el.hasAttribute("disabled") || el.readOnly);
    check(!disabled, `the question box is disabled ${where}`);
  };
  const ask = async (text) => {
    await page.locator(textarea).fill(text);
    await page
      .locator(textarea)
      .press(process.platform === "darwin" ? "Meta+Enter" : "Control+Enter");
  };
  const waitNotice = async (code) => {
    await page
      .locator(`${pane} .zc-notice[data-code="${code}"]`)
      .first()
      .waitFor({ state: "visible" });
    return page.locator(`${pane} .zc-notice[data-code="${code}"]`).first().innerText();
  };
  const state = () =>
    page.evaluate(() => {
      const s = window.zh.controller.state;
      return {
        session: s.session,
        phase: s.phase,
        count: s.messages.length,
        notice: s.notice && { code: s.notice.code, message: s.notice.message },
        streaming: !!s.streaming,
        scope: s.scope,
      };
    });
  const results = {};

  try {
    await step("open the pane: a user without chats gets a first one, once", async () => {
      check(
        (await api("GET", "/sessions")).sessions.length === 0,
        "the stack should start without chats",
      );
      await page.goto(`${server.url}/`);
      await page.waitForFunction(() => window.zh && window.zh.pane);
      await page.evaluate(() => window.zh.ready);
      const phase = await page.locator(pane).getAttribute("data-phase");
      check(
        phase === "ready",
        `the pane did not connect to the gateway (phase ${phase}): ${JSON.stringify((await state()).notice)}`,
      );
      const first = (await state()).session;
      const listed = (await api("GET", "/sessions")).sessions;
      check(
        first && listed.length === 1 && listed[0].id === first.id,
        `the pane opened ${JSON.stringify(first)}; the gateway lists ${JSON.stringify(listed)}`,
      );
      const shown = await page.locator(`${pane} .zc-title-btn .zc-title-text`).innerText();
      check(
        shown === localization("en-US").t("zocrates-sessions-default-title"),
        `the header shows "${shown}", not the first chat`,
      );
      await shot("first-session.png");
      // a reload (the pane opened again) opens the same chat and makes no other
      await page.reload();
      await page.waitForFunction(() => window.zh && window.zh.pane);
      await page.evaluate(() => window.zh.ready);
      const again = (await state()).session;
      const after = (await api("GET", "/sessions")).sessions;
      check(
        again?.id === first.id && after.length === 1,
        `after a reload: open ${again?.id}, ${after.length} chats (first ${first.id})`,
      );
      results.firstSession = first.id;
      await textareaEnabled("after opening");
    });

    await step("New chat on the empty first chat keeps it (no second empty chat)", async () => {
      const before = (await state()).session?.id || null;
      await page.locator(`${pane} .zc-new-chat`).click();
      await page.waitForFunction((id) => {
        const s = window.zh.controller.state;
        return s.session && s.session.id === id && s.messages.length === 0;
      }, before);
      const s = await state();
      const listed = (await api("GET", "/sessions")).sessions.map((x) => x.id);
      check(
        listed.length === 1 && listed[0] === s.session.id,
        `GET /sessions lists ${JSON.stringify(listed)}, the pane has ${s.session.id}`,
      );
      results.sessionId = s.session.id;
      const scopeMode = await page
        .locator(`${pane} .zc-seg[aria-checked="true"]`)
        .getAttribute("data-mode");
      check(
        scopeMode === "items",
        `the scope should start on the selected papers, got ${scopeMode}`,
      );
    });

    await step("ask a focused question; screenshot while the answer streams", async () => {
      const hold = control.holdAfter(10);
      const sent = Date.now();
      await ask(FOCUSED);
      await Promise.race([
        hold.reached,
        page.waitForTimeout(90000).then(() => {
          throw new StepError("no streamed answer chunk arrived within 90 s");
        }),
      ]);
      results.firstChunkMs = Date.now() - sent;
      // the throttled render shows what arrived so far
      await page.waitForFunction(() => {
        const b = [...document.querySelectorAll(".zocrates-message.assistant")].pop();
        return (
          b &&
          b.dataset.status === "streaming" &&
          b.querySelector(".zocrates-answer").textContent.trim().length > 40
        );
      });
      const mid = await page.locator(lastAssistant).evaluate((b) => ({
        status: b.dataset.status,
        text: b.querySelector(".zocrates-answer").textContent,
        caret: b.classList.contains("streaming"),
      }));
      check(mid.status === "streaming", "the bubble is not streaming mid-answer");
      await textareaEnabled("while the answer streams");
      await page.locator(textarea).fill("(typing the next question while the answer streams)");
      await shot("answer-streaming.png");
      await page.locator(textarea).fill("");
      results.midAnswerChars = mid.text.length;
      hold.release();
      await waitStatus(["completed"]);
      results.answerMs = Date.now() - sent;
      const stats = await page.evaluate(() => window.zh.pane.stats);
      check(
        stats.renders < stats.changes,
        `renders were not throttled: ${stats.renders} renders for ${stats.changes} changes`,
      );
      results.renderStats = stats;
    });

    await step("the answer has citations, the offline notice and collapsed steps", async () => {
      const info = await page.locator(lastAssistant).evaluate((b) => ({
        citations: [...b.querySelectorAll("a.zocrates-citation")].map((a) => ({
          key: a.dataset.itemKey,
          page: Number(a.dataset.page) || null,
          text: a.textContent,
        })),
        offline: !b.querySelector(".zc-offline-notice").hidden
          ? b.querySelector(".zc-offline-notice").textContent
          : "",
        answer: b.querySelector(".zocrates-answer").textContent,
        stepsOpen: b.querySelector(".intermediate-steps-bubble").open,
        stepsHidden: b.querySelector(".intermediate-steps-bubble").hidden,
        steps: b.querySelectorAll(".zc-steps .step").length,
        headline: b.querySelector(".zc-steps-headline").textContent,
      }));
      check(
        info.citations.length >= 2,
        `expected citations in the answer, found ${info.citations.length}`,
      );
      const keys = new Set(info.citations.map((c) => c.key));
      const lme4 = fixture.selected?.[0];
      const brms = fixture.selected?.[1];
      check(
        keys.has(lme4),
        `no citation of the lme4 paper (${lme4}) among ${[...keys].join(", ")}`,
      );
      check(
        keys.has(brms),
        `no citation of the brms paper (${brms}) among ${[...keys].join(", ")}`,
      );
      check(
        /Offline model/.test(info.offline),
        `no offline-model notice on an offline answer (notice: "${info.offline}")`,
      );
      check(
        !/^\s*\*?Offline extractive answer/.test(info.answer),
        "the offline line is still in the answer body",
      );
      check(
        !info.stepsHidden && !info.stepsOpen && info.steps >= 5,
        `the research steps should be collapsed and listed (open ${info.stepsOpen}, ${info.steps} steps)`,
      );
      results.citations = info.citations.length;
      results.stepsHeadline = info.headline;
      await page.locator(lastAssistant).evaluate((b) => b.scrollIntoView({ block: "end" }));
      await shot("answer-complete.png");
    });

    await step("click a citation: the PDF opens at the cited page", async () => {
      const lme4 = fixture.selected?.[0];
      const link = page
        .locator(`${lastAssistant} >> a.zocrates-citation[data-item-key="${lme4}"]`)
        .first();
      const page_ = Number(await link.getAttribute("data-page"));
      await link.click();
      await page.waitForFunction(() => window.zh.opened.length > 0);
      const opened = await page.evaluate(() => ({
        opened: window.zh.opened,
        reader: window.zh.readerOpens,
      }));
      const last = opened.opened.at(-1);
      check(
        last.itemKey === lme4 && last.page === page_,
        `openCitation recorded ${JSON.stringify(last)}, expected (${lme4}, ${page_})`,
      );
      const r = opened.reader.at(-1);
      check(
        r && r.itemKey === lme4 && r.pageIndex === page_ - 1,
        `Zotero.Reader.open got ${JSON.stringify(r)}, expected pageIndex ${page_ - 1}`,
      );
      results.citationOpened = last;
      await page.evaluate(() => window.zh.showLibrary());
    });

    await step("copy the answer with its citations, as Markdown and as plain text", async () => {
      const foot = page.locator(`${lastAssistant} >> .zc-bubble-foot`);
      await foot.waitFor({ state: "visible" });
      const before = await page.evaluate(() => window.zh.copied.length);
      await foot.locator(".zc-copy-markdown").click();
      await page.waitForFunction((n) => window.zh.copied.length > n, before);
      await foot.locator(".zc-copy-text").click();
      await page.waitForFunction((n) => window.zh.copied.length > n + 1, before);
      const [markdown, text] = await page.evaluate(() => window.zh.copied.slice(-2));
      check(
        /\[\d+, p\. \d+\]/.test(markdown) &&
          /^#+ Sources/m.test(markdown) &&
          /zotero:\/\/open-pdf\/library\/items\/[A-Z0-9]{8}\?page=\d+/.test(markdown),
        `the Markdown copy lacks its markers, sources or links:\n${markdown.slice(0, 600)}`,
      );
      check(
        /\[\d+, p\. \d+\]/.test(text) &&
          /^Sources/m.test(text) &&
          !/\*\*|^#|\]\(zotero:/m.test(text),
        `the plain-text copy lacks its markers or sources, or has Markdown left:\n${text.slice(0, 600)}`,
      );
      check(
        (await foot.locator(".zc-usage").count()) === 0,
        "an answer of the offline model shows a cost line",
      );
      const label = await foot.locator(".zc-copy-text .zc-foot-label").textContent();
      check(label === "Copied", `the copy button says "${label}", not "Copied"`);
      results.copied = { markdown: markdown.length, text: text.length };
      await shot("answer-copied.png");
    });

    await step(
      "save the answer as a note: a child of the paper it cites most, links open the cited pages",
      async () => {
        const chips = await page.locator(lastAssistant).evaluate((b) =>
          [...b.querySelectorAll(".zocrates-answer a.zocrates-citation")].map((a) => ({
            itemKey: a.dataset.itemKey,
            attachmentKey: a.dataset.attachmentKey || "",
            page: Number(a.dataset.page) || null,
          })),
        );
        // what the turn's done event cites (the note's Sources list links these pages)
        const doneCitations = await page.evaluate(
          () => window.zh.controller.state.messages.at(-1).citations || [],
        );
        const cited = chips.map((c) => c.itemKey);
        const counts = new Map();
        for (const k of cited) counts.set(k, (counts.get(k) || 0) + 1);
        const most = Math.max(...counts.values());
        await page.locator(`${lastAssistant} >> .zc-save-note`).click();
        await page.waitForFunction(() => window.zh.notes.length > 0);
        const note = await page.evaluate(() => window.zh.notes.at(-1));
        check(
          counts.get(note.parentKey) === most,
          `the note's parent ${note.parentKey} is not the most cited paper (${JSON.stringify([...counts])})`,
        );
        check(
          note.html.startsWith('<div data-schema-version="9">') && /<h1>/.test(note.html),
          `not a Zotero note: ${note.html.slice(0, 200)}`,
        );
        const links = [
          ...note.html.matchAll(
            /href="(zotero:\/\/open-pdf\/library\/items\/[A-Z0-9]{8}\?page=(\d+))"/g,
          ),
        ];
        check(links.length >= 2, `the note has ${links.length} links that open a PDF page`);
        // Every link names a PDF (an attachment's key: Zotero's handler opens nothing for a
        // regular item), the one the citation's quote came from when it says so, at a page
        // the answer cites in that paper.
        const attachmentOf = new Map((fixture.items || []).map((it) => [it.attachmentKey, it.key]));
        for (const [, href, pageText] of links) {
          const key = /items\/([A-Z0-9]{8})/.exec(href)[1];
          const item = attachmentOf.get(key);
          const at = Number(pageText);
          const cites = [
            ...chips,
            ...doneCitations.map((c) => ({
              itemKey: c.item_key,
              attachmentKey: c.attachment_key || "",
              page: c.verified === false && c.found_on_page != null ? c.found_on_page : c.page,
            })),
          ].filter((c) => c.itemKey === item && c.page === at);
          check(item && cites.length, `the note's link ${href} opens no page the answer cites`);
          check(
            cites.some((c) => !c.attachmentKey || c.attachmentKey === key),
            `the note's link ${href} is not the PDF its citation names: ${JSON.stringify(cites)}`,
          );
        }
        await page.locator("#zw-note").waitFor({ state: "visible" });
        await shot("saved-note.png");
        // Click every link of the note: each opens its PDF at its page in the reader.
        const noteLinks = page.locator('#zw-note-body a[href^="zotero://open-pdf/"]');
        const count = await noteLinks.count();
        check(count === links.length, `${count} links shown, ${links.length} in the note`);
        let last = null;
        for (let k = 0; k < count; k++) {
          const link = noteLinks.nth(k);
          const href = await link.getAttribute("href");
          const opened = await page.evaluate(() => window.zh.readerOpens.length);
          await page.evaluate(() => window.zh.showNoteAgain());
          await link.click();
          await page.waitForFunction((n) => window.zh.readerOpens.length > n, opened);
          last = await page.evaluate(() => window.zh.opened.at(-1));
          const reader = await page.evaluate(() => window.zh.readerOpens.at(-1));
          const wanted = Number(/page=(\d+)/.exec(href)[1]);
          const key = /items\/([A-Z0-9]{8})/.exec(href)[1];
          check(
            last.page === wanted &&
              last.itemKey === attachmentOf.get(key) &&
              reader.pageIndex === wanted - 1,
            `the note's link ${href} opened ${JSON.stringify(last)}`,
          );
        }
        results.note = { parentKey: note.parentKey, links: links.length, opened: last };
        await page.evaluate(() => {
          window.zh.hideNote();
          window.zh.showLibrary();
        });
      },
    );

    await step("View > Zocrates Pane and Ctrl+Shift+E hide and show the pane", async () => {
      const container = page.locator("#zocrates-pane-container");
      const collapsed = () => container.getAttribute("data-collapsed");
      await page.locator("#zw-view-menu-button").click();
      const item = page.locator("#menu_viewPopup zw-menuitem");
      await item.waitFor({ state: "visible" });
      check(
        (await item.getAttribute("checked")) === "true" &&
          (await item.getAttribute("label")) === "Zocrates Pane",
        "the View menu item is not there, checked, with its label",
      );
      await shot("view-menu.png");
      await item.click();
      check((await collapsed()) === "true", "View > Zocrates Pane did not hide the pane");
      await page.keyboard.press(process.platform === "darwin" ? "Meta+Shift+E" : "Control+Shift+E");
      check((await collapsed()) === "false", "Ctrl+Shift+E did not show the pane again");
      await page.keyboard.press(process.platform === "darwin" ? "Meta+Shift+E" : "Control+Shift+E");
      check((await collapsed()) === "true", "Ctrl+Shift+E did not hide the pane");
      await page.locator("#zw-view-menu-button").click();
      check((await item.getAttribute("checked")) === "false", "the menu item stayed checked");
      await item.click();
      check((await collapsed()) === "false", "the pane did not come back");
    });

    let pausedBubble = null;
    await step("a broader question reaches a checkpoint card", async () => {
      await page.locator(`${pane} .zc-seg[data-mode="library"]`).click();
      const sent = Date.now();
      await ask(BROAD);
      await waitStatus(["paused", "completed"]);
      check(
        (await bubbleStatus()) === "paused",
        "the broad question did not pause at a checkpoint",
      );
      results.checkpointMs = Date.now() - sent;
      const card = page.locator(`${lastAssistant} >> .hitl-checkpoint-card`);
      await card.waitFor({ state: "visible" });
      const info = await card.evaluate((c) => ({
        id: c.dataset.interruptId,
        badge: c.querySelector(".badge").textContent,
        gaps: [...c.querySelectorAll(".gaps li")].map((li) => li.textContent),
        grant: c.querySelector('[data-action="extend_budget"]').textContent,
        synth: c.querySelector('[data-action="synthesize"]').textContent,
      }));
      check(info.id === "interrupt_ext_1", `the card is for ${info.id}`);
      check(
        info.gaps.some((g) => /photonic/i.test(g)),
        `the card's gaps do not name the photonic chips: ${info.gaps.join(" | ")}`,
      );
      check(
        /\+5 searches/.test(info.grant) || /\+5 calls/.test(info.grant),
        `the grant button does not say what it costs: ${info.grant}`,
      );
      check(
        /No more searching/.test(info.synth),
        `the synthesize button does not say what it means: ${info.synth}`,
      );
      await textareaEnabled("while the checkpoint waits");
      results.card = info;
      await shot("checkpoint-card.png");
      await page.emulateMedia({ colorScheme: "dark" });
      await page.waitForTimeout(100);
      await shot("checkpoint-card-dark.png");
      await page.emulateMedia({ colorScheme: "light" });
      pausedBubble = await page.locator(lastAssistant).getAttribute("data-id");
    });

    await step("grant with guidance: the continuation stays in the same bubble", async () => {
      const bubbles = await page.locator(assistant).count();
      await page.locator(`${lastAssistant}`).evaluate((b) => (b.zcProbe = "same-node"));
      await page.locator(`${lastAssistant} >> .zc-guidance`).fill(GUIDANCE);
      await page.locator(`${lastAssistant} >> [data-action="extend_budget"]`).click();
      const status = await waitStatus(["paused", "completed"], lastAssistant);
      let passes = 2;
      if (status === "paused") {
        const second = await page
          .locator(`${lastAssistant} >> .hitl-checkpoint-card`)
          .getAttribute("data-interrupt-id");
        check(second === "interrupt_ext_2", `a second card for ${second}`);
        results.secondCard = true;
        await page.locator(`${lastAssistant} >> [data-action="synthesize"]`).click();
        await waitStatus(["completed"], lastAssistant);
        passes = 3;
      }
      const after = await page.locator(lastAssistant).evaluate((b) => ({
        probe: b.zcProbe,
        id: b.dataset.id,
        passes: Number(b.dataset.passes),
        decisions: [...b.querySelectorAll(".step.decision")].map((s) => s.textContent),
        citations: b.querySelectorAll("a.zocrates-citation").length,
        card: !!b.querySelector(".hitl-checkpoint-card"),
      }));
      check(
        after.probe === "same-node" && after.id === pausedBubble,
        "the resumed answer went into a different bubble",
      );
      check(
        (await page.locator(assistant).count()) === bubbles,
        "a new assistant bubble appeared for the resumed stream",
      );
      check(after.passes === passes, `the bubble has ${after.passes} passes, expected ${passes}`);
      check(
        after.decisions.some((d) => d.includes("extension 1") && d.includes("photonic")),
        `the grant and its guidance are not in the steps: ${after.decisions.join(" | ")}`,
      );
      check(
        after.citations > 0 && !after.card,
        "the resumed answer has no citations, or the card is still there",
      );
      results.resume = after;
      await page.locator(`${lastAssistant} >> .intermediate-steps-bubble > summary`).click();
      await page
        .locator(`${lastAssistant} >> .zc-steps .step.decision`)
        .first()
        .scrollIntoViewIfNeeded();
      await shot("resumed-same-bubble.png");
      await page.locator(`${lastAssistant} >> .intermediate-steps-bubble > summary`).click();
    });

    await step("a new paused turn with a collection scope and a pinned passage", async () => {
      // scope: the current collection; focal snippet: text selected in the reader
      await page.evaluate(() =>
        window.zh.openReader(window.zh.fixture.reader.itemKey, window.zh.fixture.reader.page),
      );
      const selected = await page.evaluate(() =>
        window.zh.selectReaderText(window.zh.fixture.reader.selection),
      );
      check(selected, "could not select the reader text");
      await page.locator(`${pane} .zc-offer`).waitFor({ state: "visible" });
      await page.locator("#zw-ask-zocrates").click();
      await page.locator(`${pane} .zocrates-snippet-chip`).waitFor({ state: "visible" });
      await page.evaluate(() => window.zh.showLibrary());
      await page.locator(`${pane} .zc-seg[data-mode="collection"]`).click();
      const scope = (await state()).scope;
      check(
        scope.mode === "collection" && scope.snippets.length === 1,
        `scope before sending: ${JSON.stringify(scope)}`,
      );
      await ask(PAUSED);
      await waitStatus(["paused", "completed"]);
      check(
        (await bubbleStatus()) === "paused",
        "the third question did not pause at a checkpoint",
      );
      // the gateway finishes the turn (lock, post-turn work) just after the stream ends
      let session = null;
      for (let k = 0; k < 50; k++) {
        session = (await api("GET", `/sessions/${results.sessionId}`)).session;
        if (session.pending_hitl) break;
        await page.waitForTimeout(200);
      }
      check(
        session.pending_hitl && session.pending_hitl.interrupt_id === "interrupt_ext_1",
        "GET /sessions/{id} has no pending_hitl",
      );
      const user = session.messages.filter((m) => m.role === "user").at(-1);
      check(
        user.context?.active_collection?.key === fixture.collection,
        `the turn's context lacks the collection: ${JSON.stringify(user.context)}`,
      );
      check(user.context?.snippets?.length === 1, "the turn's context lacks the pinned snippet");
      results.pausedInvocation = session.pending_hitl.invocation_id;
    });

    await step("a new question while paused gets a clear 409 message", async () => {
      await ask("What is BOBYQA?");
      const text = await waitNotice("checkpoint_pending");
      check(/paused at a deep-research checkpoint/.test(text), `409 message: ${text}`);
      check(
        (await page.locator(textarea).inputValue()) === "What is BOBYQA?",
        "the refused question did not come back to the box",
      );
      await textareaEnabled("after a 409");
      await shot("error-409-checkpoint-pending.png");
      await page.locator(textarea).fill("");
      await page.locator(`${pane} .zc-notice .zc-notice-close`).click();
    });

    await step("reload the page: the card comes back from pending_hitl", async () => {
      await page.reload();
      await page.waitForFunction(() => window.zh && window.zh.pane);
      await page.evaluate(() => window.zh.ready);
      const card = page.locator(`${lastAssistant} >> .hitl-checkpoint-card`);
      await card.waitFor({ state: "visible" });
      const id = await card.getAttribute("data-interrupt-id");
      check(id === "interrupt_ext_1", `the rehydrated card is for ${id}`);
      const s = await state();
      check(s.session.id === results.sessionId, "the reload opened another chat");
      await textareaEnabled("after a reload");
      await shot("rehydrated-card.png");
    });

    await step("rewind the paused turn: its prompt and scope come back", async () => {
      await page.locator(`${lastAssistant} >> .zc-discard`).click();
      await page.waitForFunction(
        (q) => document.querySelector(".zocrates-pane .zc-input").value === q,
        PAUSED,
      );
      const s = await state();
      check(
        s.scope.mode === "collection" && s.scope.collection?.key === fixture.collection,
        `the scope was not restored: ${JSON.stringify(s.scope)}`,
      );
      check(
        s.scope.snippets.length === 1 && /derivative-free/.test(s.scope.snippets[0].text),
        "the pinned passage was not restored",
      );
      const seg = await page
        .locator(`${pane} .zc-seg[aria-checked="true"]`)
        .getAttribute("data-mode");
      check(seg === "collection", `the scope chooser shows ${seg}`);
      await page.locator(`${pane} .zocrates-snippet-chip`).waitFor({ state: "visible" });
      const session = (await api("GET", `/sessions/${results.sessionId}`)).session;
      check(!session.pending_hitl, "the session still has a pending checkpoint after the rewind");
      check(
        !session.messages.some((m) => m.role === "user" && m.text === PAUSED),
        "the rewound question is still in the session",
      );
      await textareaEnabled("after a rewind");
      await shot("rewound-prompt.png");
      await page.locator(textarea).fill("");
      await page.locator(`${pane} .zc-chip-remove`).click();
    });

    await step("edit an earlier question: it comes back with its scope", async () => {
      const user = page.locator(`${pane} .zocrates-message.user`).first();
      await user.hover();
      await user.locator(".zc-edit").click();
      check(
        (await page.locator(textarea).inputValue()) === FOCUSED,
        "the edited question is not in the box",
      );
      const seg = await page
        .locator(`${pane} .zc-seg[aria-checked="true"]`)
        .getAttribute("data-mode");
      check(seg === "items", `editing restored scope ${seg}, expected the selected papers`);
      check(await page.locator(`${pane} .zc-editing`).isVisible(), "no editing banner");
      await page.locator(textarea).press("Escape");
      check(
        !(await page.locator(`${pane} .zc-editing`).isVisible()),
        "Escape did not cancel the edit",
      );
    });

    await step("pin an image annotation from the reader and ask about it", async () => {
      const figure = fixture.reader?.figure;
      check(figure?.annotationKey, "the shim library has no figure on its reader page");
      await page.evaluate(() =>
        window.zh.openReader(window.zh.fixture.reader.itemKey, window.zh.fixture.reader.page),
      );
      await page.locator("#zw-figure").scrollIntoViewIfNeeded();
      await page.locator("#zw-figure").click({ button: "right" });
      const item = page.locator("#zw-annotation-menu .zw-plugin-menuitem");
      await item.waitFor({ state: "visible" });
      check(
        (await item.innerText()) === "Ask Zocrates about this image",
        `the annotation menu offers "${await item.innerText()}"`,
      );
      await shot("image-annotation-menu.png");
      await item.click();
      const thumb = page.locator(`${pane} .zc-image-chip img.zc-chip-thumb`);
      await thumb.waitFor({ state: "visible" });
      const chip = await page.locator(`${pane} .zc-image-chip`).evaluate((c) => ({
        src: c.querySelector("img").getAttribute("src").slice(0, 22),
        width: c.querySelector("img").naturalWidth,
        text: c.querySelector(".zc-chip-text").textContent,
        page: c.querySelector(".zc-chip-page")?.textContent,
      }));
      check(
        chip.src === "data:image/png;base64," && chip.width === 480,
        `the chip's thumbnail is not the figure: ${JSON.stringify(chip)}`,
      );
      check(
        chip.text.includes(figure.comment.slice(0, 20)) &&
          chip.page === `p. ${fixture.reader.page}`,
        `the chip does not show the annotation's comment and page: ${JSON.stringify(chip)}`,
      );
      const rendered = await page.evaluate(() => window.zh.rendered.length);
      check(rendered === 1, "the image was not drawn through Zotero.PDFWorker first");
      await page.evaluate(() => window.zh.showLibrary());
      await shot("image-snippet.png");
      await ask("What does this figure show?");
      if ((await waitStatus(["paused", "completed"])) === "paused") {
        await page.locator(`${lastAssistant} >> [data-action="synthesize"]`).click();
        await waitStatus(["completed"]);
      }
      let user = null;
      for (let k = 0; k < 50 && !user; k++) {
        const session = (await api("GET", `/sessions/${results.sessionId}`)).session;
        user = session.messages.filter((m) => m.role === "user").at(-1);
        if (user?.text !== "What does this figure show?") user = null;
        if (!user) await page.waitForTimeout(200);
      }
      const [sent] = user?.context?.snippets || [];
      check(
        sent?.kind === "image" &&
          /^[0-9a-f]{64}$/.test(sent.image?.sha256 || "") &&
          sent.image.data === undefined &&
          sent.page === fixture.reader.page,
        `the question's context does not name the image: ${JSON.stringify(sent)}`,
      );
      const image = (await api("GET", `/sessions/${results.sessionId}/images/${sent.image.sha256}`))
        .image;
      check(image.mime_type === "image/png", `the gateway sent back ${image.mime_type}`);
      const scope = await page
        .locator(`${pane} .zocrates-message.user >> nth=-1`)
        .locator(".zc-user-scope")
        .innerText();
      check(/1 pinned image/.test(scope), `the question's scope line reads "${scope}"`);
      await page.locator(lastAssistant).evaluate((b) => b.scrollIntoView({ block: "end" }));
      await shot("image-snippet-answer.png");
      // reloaded, then edited: the image comes back from the gateway, thumbnail and all
      await page.reload();
      await page.waitForFunction(() => window.zh && window.zh.pane);
      await page.evaluate(() => window.zh.ready);
      await page.waitForFunction(() => window.zh.controller.state.messages.length > 0);
      const question = page.locator(`${pane} .zocrates-message.user >> nth=-1`);
      await question.hover();
      await question.locator(".zc-edit").click();
      await page.locator(`${pane} .zc-image-chip img.zc-chip-thumb`).waitFor({ state: "visible" });
      const restored = await page.evaluate(() => window.zh.controller.state.scope.snippets);
      check(
        restored.length === 1 && restored[0].image.data === image.data,
        "editing did not bring the image back with its bytes",
      );
      await page.locator(textarea).press("Escape");
      await page.locator(`${pane} .zc-image-chip .zc-chip-remove`).click();
      results.image = { sha256: sent.image.sha256, size: sent.image.size };
    });

    await step("the gateway is down: an actionable message", async () => {
      control.down = true;
      await ask("Is anyone there?");
      const text = await waitNotice("gateway_down");
      check(
        /Zocrates is not running: start it with `?make run/.test(text) || /not running/.test(text),
        `gateway-down message: ${text}`,
      );
      check(
        (await page.locator(textarea).inputValue()) === "Is anyone there?",
        "the question was lost when the gateway was down",
      );
      await shot("error-gateway-down.png");
      control.down = false;
      await page.locator(textarea).fill("");
      await page.locator(`${pane} .zc-notice .zc-notice-close`).click();
    });

    await step("a wrong token: an actionable message", async () => {
      control.wrongToken = true;
      await page.evaluate(() => window.zh.controller.refreshSessions());
      const text = await waitNotice("unauthorized");
      check(
        /wrong token/.test(text) && /gateway\.token/.test(text),
        `wrong-token message: ${text}`,
      );
      control.wrongToken = false;
      await page.locator(`${pane} .zc-notice [data-action="retry"]`).click();
      await page.waitForFunction(() => !window.zh.controller.state.notice);
    });

    await step("sessions: rename, new, switch, delete", async () => {
      await page.locator(`${pane} .zc-title-btn`).click();
      const row = page.locator(`${pane} .zc-session[data-session-id="${results.sessionId}"]`);
      await row.waitFor({ state: "visible" });
      await row.locator(".zc-rename").click();
      await page.locator(`${pane} .zc-rename-input`).fill("lmer optimizers and photonic chips");
      await page.locator(`${pane} .zc-rename-input`).press("Enter");
      await page.waitForFunction(
        () => window.zh.controller.state.session.title === "lmer optimizers and photonic chips",
      );
      const listed = (await api("GET", "/sessions")).sessions.find(
        (s) => s.id === results.sessionId,
      );
      check(
        listed.title === "lmer optimizers and photonic chips",
        `rename not saved: ${listed.title}`,
      );
      await page.locator(`${pane} .zc-new-chat`).click();
      await page.waitForFunction(
        (id) => window.zh.controller.state.session.id !== id,
        results.sessionId,
      );
      const second = (await state()).session.id;
      await page.locator(`${pane} .zc-title-btn`).click();
      await page
        .locator(`${pane} .zc-session[data-session-id="${results.sessionId}"] .zc-session-title`)
        .click();
      await page.waitForFunction(
        (id) =>
          window.zh.controller.state.session.id === id &&
          window.zh.controller.state.messages.length > 0,
        results.sessionId,
      );
      const citations = await page.locator(`${pane} a.zocrates-citation`).count();
      check(citations > 0, "citations are not links in a chat reloaded from history");
      await page.locator(`${pane} .zc-title-btn`).click();
      const other = page.locator(`${pane} .zc-session[data-session-id="${second}"]`);
      await other.hover();
      await other.locator(".zc-delete").click();
      await page.locator(`${pane} .zc-session.zc-confirm .zc-danger`).click();
      await page.waitForFunction(
        (id) => !window.zh.controller.state.sessions.some((s) => s.id === id),
        second,
      );
      check(
        !(await api("GET", "/sessions")).sessions.some((s) => s.id === second),
        "the deleted session is still listed by the gateway",
      );
      await page
        .locator(`${pane} .zc-session[data-session-id="${results.sessionId}"]`)
        .press("Escape");
      check(
        await page.locator(`${pane} .zc-sessions`).isHidden(),
        "Escape did not close the chat list",
      );
    });

    await step("preferences: settings, storage, Clean Up Now, library indexing", async () => {
      await page.evaluate(() => window.zh.openPrefs());
      const prefs = "#zocrates-prefs-root .zocrates-prefs";
      await page
        .locator(`${prefs} [data-key="coordinator_model"] input`)
        .waitFor({ state: "visible" });
      check(
        (await page.locator(`${prefs} [data-key="coordinator_model"] input`).inputValue()) ===
          "offline",
        "the coordinator model is not shown",
      );
      await page.locator(`${prefs} .zc-conn-status[data-kind="ok"]`).waitFor();
      await page.waitForFunction(() =>
        /Database/.test(document.querySelector("#zocrates-storage-stats")?.textContent || ""),
      );
      // a setting saved through PUT /config
      const max = page.locator(`${prefs} [data-key="max_saved_sessions"] input`);
      await max.fill("50");
      await max.press("Enter");
      await page
        .locator(`${prefs} [data-key="max_saved_sessions"] .zc-pref-status[data-kind="ok"]`)
        .waitFor();
      check(
        (await api("GET", "/config")).config.max_saved_sessions === 50,
        "max_saved_sessions was not saved",
      );
      // a value the form refuses, with a sentence next to the field
      const days = page.locator(`${prefs} [data-key="session_retention_days"] input`);
      await days.fill("-3");
      await days.press("Enter");
      await page
        .locator(`${prefs} [data-key="session_retention_days"] .zc-pref-status[data-kind="error"]`)
        .waitFor();
      await days.fill("180");
      await days.press("Enter");
      await page
        .locator(`${prefs} [data-key="session_retention_days"] .zc-pref-status[data-kind="ok"]`)
        .waitFor();
      // Clean Up Now with live feedback
      await page.locator("#zocrates-pref-clean-up").click();
      await page.locator(`${prefs} .zc-clean-status[data-kind="ok"]`).waitFor({ timeout: 60000 });
      results.cleanUp = await page.locator(`${prefs} .zc-clean-status`).innerText();
      // library indexing with a progress bar: pause the stream at the first page progress
      const midway = (f) => {
        const m = /"pages_done": (\d+), "pages_total": (\d+)/.exec(f);
        return /event: progress/.test(f) && m && Number(m[1]) > 0 && Number(m[1]) < Number(m[2]);
      };
      const hold = control.holdAfter(1, { pathPrefix: "/gateway/library/sync", match: midway });
      await page.locator("#zocrates-sync").click();
      const finished = page
        .locator(`${prefs} .zc-sync-status[data-kind="ok"]`)
        .waitFor({ timeout: 180000 })
        .then(() => false);
      const reached = await Promise.race([hold.reached.then(() => true), finished]);
      if (reached) {
        await page.waitForFunction(() =>
          /Indexing: /.test(
            document.querySelector("#zocrates-progress-keyword .zc-progress-label")?.textContent ||
              "",
          ),
        );
        const bar = await page
          .locator(`${prefs} #zocrates-progress-keyword .zc-progress`)
          .getAttribute("aria-valuenow");
        check(bar !== null, "the progress bar has no value while indexing");
        await page.locator("#zocrates-library-status").scrollIntoViewIfNeeded();
        await shot("preferences-indexing.png");
        results.syncProgressShown = true;
        hold.release();
      } else {
        hold.release();
        results.syncProgressShown = false;
      }
      // the keyword phase ends ("searchable"), the embedding bar follows to the end ("done")
      await page
        .locator(`${prefs} .zc-sync-status[data-kind="ok"]`, { hasText: /^indexed \d+ new/ })
        .waitFor({ timeout: 180000 });
      results.sync = await page.locator(`${prefs} .zc-sync-status`).innerText();
      check(
        (await page
          .locator(`${prefs} #zocrates-progress-keyword .zc-progress`)
          .getAttribute("aria-valuenow")) === "100",
        "the keyword bar did not reach 100%",
      );
      results.embeddingBar = await page
        .locator(`${prefs} #zocrates-progress-embedding .zc-progress-label`)
        .innerText();
      check(
        /Meaning search ready/.test(results.embeddingBar),
        `the embedding bar did not finish: ${results.embeddingBar}`,
      );
      check(
        (await page
          .locator(`${prefs} #zocrates-progress-embedding .zc-progress`)
          .getAttribute("aria-valuenow")) === "100",
        "the embedding bar did not reach 100%",
      );
      // the whole settings page in one tall image
      const tall = await page.evaluate(() => document.querySelector(".zw-prefs-main").scrollHeight);
      await page.setViewportSize({ width: 1360, height: Math.ceil((tall + 40) / 0.94) });
      await page.waitForTimeout(100);
      await shot("preferences.png");
      await page.setViewportSize({ width: 1360, height: 900 });
      await page.evaluate(() => window.zh.closePrefs());
    });

    await step("preferences: a local model server's models, Test model, its errors", () =>
      checkLocalModels({ page, control, api, check, shot, results }),
    );

    await step("dark mode", async () => {
      await page.emulateMedia({ colorScheme: "dark" });
      await page.waitForTimeout(150);
      await shot("dark-mode.png");
      await page.emulateMedia({ colorScheme: "light" });
    });

    if (args.remoteApiBase) {
      await step("a remote model's turn shows what it cost", async () => {
        const model = args.remoteModel || "openai/gpt-4o-mini";
        // The scripted server stands for a capable model: it calls tools, its context is large
        // (without these, the agent probes it for tool calls, which it is not scripted for).
        const keys = [
          "coordinator_model",
          "subagent_model",
          "synthesizer_model",
          "model_api_base",
          "model_tool_calling",
          "model_context_window",
        ];
        const before = (await api("GET", "/config")).config;
        const saved = Object.fromEntries(keys.map((k) => [k, before[k]]));
        await api("PUT", "/config", {
          coordinator_model: model,
          subagent_model: model,
          synthesizer_model: model,
          model_api_base: args.remoteApiBase,
          model_tool_calling: "on",
          model_context_window: 131072,
        });
        try {
          await page.locator(`${pane} .zc-new-chat`).click();
          await page.waitForFunction(() => window.zh.controller.state.messages.length === 0);
          await page.locator(`${pane} .zc-seg[data-mode="library"]`).click();
          await ask("How does lmer choose its optimizer when fitting a linear mixed model?");
          await waitStatus(["completed"], lastAssistant, 180000);
          const usage = page.locator(`${lastAssistant} >> .zc-usage`);
          await usage.waitFor({ state: "visible" });
          const text = await usage.textContent();
          check(
            /^[\d,]+ tokens in · [\d,]+ out · ≈ \$\d/.test(text),
            `the cost line reads "${text}"`,
          );
          // The scripted model cites pages without quoting them: its citations are marked as
          // unverified (not on the cited page), with a tooltip that says so.
          const marks = await page.locator(lastAssistant).evaluate((b) =>
            [...b.querySelectorAll(".zocrates-answer a.zocrates-citation")].map((a) => ({
              verified: a.dataset.verified || "",
              unverified: a.classList.contains("zocrates-citation-unverified"),
              title: a.getAttribute("title") || "",
            })),
          );
          const flagged = marks.filter((m) => m.verified === "false");
          check(
            flagged.length > 0 &&
              flagged.every(
                (m) => m.unverified && /quote was not found|quote is on p\./.test(m.title),
              ),
            `unverified citations are not marked: ${JSON.stringify(marks)}`,
          );
          results.costLine = { text, model, unverifiedMarked: flagged.length };
          await page.locator(lastAssistant).evaluate((b) => b.scrollIntoView({ block: "end" }));
          await shot("cost-line.png");
        } finally {
          await api("PUT", "/config", saved);
        }
      });
    }

    /** What the pane shows, element by element, with the Fluent id each one names. */
    const readLocalized = (root) => {
      const bare = root.cloneNode(true);
      // what the user and the model wrote is not the pane's: answers, questions, titles
      for (const el of bare.querySelectorAll(
        [
          ".zocrates-answer",
          ".zc-user-text",
          ".zc-title-text",
          ".zc-session-title",
          ".zc-scope-detail",
          ".zc-step-detail",
          ".zc-step-error",
          ".zc-chip-text",
        ].join(", "),
      ))
        el.remove();
      return {
        lang: root.getAttribute("lang"),
        newChat: root.querySelector(".zc-new-chat span").textContent,
        send: root.querySelector(".zc-send span").textContent,
        placeholder: root.querySelector(".zc-input").getAttribute("placeholder"),
        text: bare.textContent,
        ids: [...root.querySelectorAll("[data-zc-l10n]")].map((el) => ({
          id: el.getAttribute("data-zc-l10n"),
          args: el.getAttribute("data-zc-l10n-args"),
          // the message's value is the element's text when it has no child elements
          text: el.children.length ? null : el.textContent,
          attributes: Object.fromEntries(
            ["title", "placeholder", "aria-label"].map((a) => [a, el.getAttribute(a)]),
          ),
        })),
      };
    };
    /** Every localized element says what the German file says for its id and arguments, and
     * no English message of the pane is left in what it shows. */
    const checkGerman = (seen, where) => {
      const de = localization("de");
      const en = localization("en-US");
      const wrong = [];
      for (const e of seen.ids) {
        const m = de.message(e.id, e.args ? JSON.parse(e.args) : undefined);
        if (m.value === e.id) wrong.push(`${e.id}: no such message`);
        if (m.value != null && e.text != null && e.text !== m.value)
          wrong.push(`${e.id}: "${e.text}", not "${m.value}"`);
        for (const [name, value] of Object.entries(m.attributes))
          if (name in e.attributes && e.attributes[name] !== value)
            wrong.push(`${e.id}.${name}: "${e.attributes[name]}", not "${value}"`);
      }
      check(!wrong.length, `${where} is not the German file's:\n  ${wrong.join("\n  ")}`);
      check(seen.ids.length >= 15, `only ${seen.ids.length} localized elements in ${where}`);
      const english = [];
      for (const id of ftlIds()) {
        const text = en.message(id).value;
        // whole English phrases only (two words or more) that German says otherwise
        if (!text || !/\S\s+\S/.test(text) || text === de.message(id).value) continue;
        if (/[{}]/.test(text)) continue;
        if (seen.text.includes(text)) english.push(`${id}: "${text}"`);
      }
      check(!english.length, `English left in ${where}:\n  ${english.join("\n  ")}`);
    };

    await step(
      "the pane in German (Zotero's language): every string from the German file",
      async () => {
        const de = localization("de");
        await page.goto(`${server.url}/?locale=de`);
        await page.waitForFunction(() => window.zh && window.zh.pane);
        await page.evaluate(() => window.zh.ready);
        await page.waitForFunction(() => window.zh.controller.state.messages.length > 0);
        const seen = await page.locator(pane).evaluate(readLocalized);
        check(seen.lang === "de", `the pane's lang is ${seen.lang}`);
        check(
          seen.newChat === de.t("zocrates-sidebar-new-chat") && seen.newChat !== "New chat",
          `"New chat" reads "${seen.newChat}"`,
        );
        check(seen.send === de.t("zocrates-sidebar-send"), `"Ask" reads "${seen.send}"`);
        check(
          seen.placeholder === de.message("zocrates-sidebar-input").attributes.placeholder,
          `the question box says "${seen.placeholder}"`,
        );
        checkGerman(seen, "the pane");
        // The remote turn's answer is on screen: its buttons and its cost line, in German.
        for (const id of [
          "zocrates-answer-copy-markdown",
          "zocrates-answer-save-note",
          ...(args.remoteApiBase ? ["zocrates-answer-usage-cost"] : []),
        ])
          check(
            seen.ids.some((e) => e.id === id),
            `no ${id} in the German pane (ids: ${[...new Set(seen.ids.map((e) => e.id))].join(", ")})`,
          );
        await shot("german.png");
        // the chat list too
        await page.locator(`${pane} .zc-title-btn`).click();
        await page.locator(`${pane} .zc-sessions`).waitFor({ state: "visible" });
        const list = await page.locator(pane).evaluate(readLocalized);
        checkGerman(list, "the chat list");
        await page.keyboard.press("Escape");
        results.german = {
          localized: seen.ids.length,
          inList: list.ids.length,
          newChat: seen.newChat,
        };
      },
    );

    await step("the question box was never disabled", async () => {
      check(
        disabledSeen.length === 0,
        `the question box was disabled ${disabledSeen.length} time(s)`,
      );
    });
  } catch (err) {
    const failure = path.join(args.artifacts, "failure.png");
    await page.screenshot({ path: failure }).catch(() => {});
    console.log("FAILED");
    console.error(`\nUI test failed at step "${current}": ${err.message}`);
    if (!(err instanceof StepError)) console.error(err.stack);
    console.error(`screenshot: ${failure}`);
    const zlog = await page
      .evaluate(() => (window.zh ? window.zh.log.slice(-15) : []))
      .catch(() => []);
    if (zlog.length)
      console.error(`plugin log (last ${zlog.length} lines):\n  ${zlog.join("\n  ")}`);
    const tail = consoleLines.slice(-25);
    if (tail.length)
      console.error(`browser console (last ${tail.length} lines):\n  ${tail.join("\n  ")}`);
    writeFileSync(
      path.join(args.artifacts, "report.json"),
      JSON.stringify(
        {
          ok: false,
          failedStep: current,
          error: err.message,
          steps,
          results,
          console: consoleLines,
        },
        null,
        2,
      ),
    );
    await browser.close();
    await server.close();
    process.exit(1);
  }

  const total = Date.now() - started;
  writeFileSync(
    path.join(args.artifacts, "report.json"),
    JSON.stringify(
      { ok: true, totalMs: total, steps, results, screenshots: shots.map((f) => path.basename(f)) },
      null,
      2,
    ),
  );
  await browser.close();
  await server.close();
  console.log(
    `\nUI test passed in ${(total / 1000).toFixed(1)} s; ${shots.length} screenshots in ${args.artifacts}`,
  );
  console.log(
    `  first answer chunk after ${results.firstChunkMs} ms, answer complete after ${results.answerMs} ms, checkpoint after ${results.checkpointMs} ms`,
  );
  console.log(
    `  renders: ${results.renderStats?.renders} for ${results.renderStats?.changes} state changes (${results.renderStats?.streamChanges} streamed)`,
  );
  process.exit(0);
}

main().catch((err) => {
  console.error(`run.mjs: ${err?.stack || err}`);
  process.exit(1);
});
