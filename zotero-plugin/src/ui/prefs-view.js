/**
 * The preferences pane (Zotero > Settings > Zocrates, and the harness): the gateway address
 * with a connection test, library indexing with a progress bar (POST /library/sync streams
 * `progress` events), the model / deep-research / compaction settings of zocrates_config.json
 * (GET and PUT /config, saved field by field, validation messages next to the field), and
 * "Chat Sessions & Storage": database size and chat count (GET /sessions/storage_stats),
 * retention settings and Clean Up Now (POST /sessions/maintenance) with live feedback.
 *
 * Its strings are Fluent messages zocrates-pref-* (preferences.ftl, which Zotero's settings
 * window also loads); the gateway's errors come worded by describeError (addon.ftl).
 *
 * env: {getClient(), getGatewayURL(), setGatewayURL(url), tokenPath?, now?(), log?(msg),
 *       AbortController? (the window's; Zotero's plugin sandbox has none),
 *       l10n? (l10n.js; ids are shown without)}
 */
import { DEFAULT_TOKEN_PATH, describeError, isAbortError } from "../errors.js";
import { createLocalization } from "../l10n.js";
import { clear, createH, fill } from "./dom.js";
import {
  embeddingProgress,
  libraryStatusLine,
  maintenanceLine,
  problemLines,
  storageLine,
  syncProgress,
} from "./format.js";
import { icon } from "./icons.js";
import {
  choiceLabelId,
  checkGatewayURL,
  configGroups,
  formatFieldValue,
  MODEL_SUGGESTIONS,
  parseFieldValue,
} from "./prefs-model.js";

let datalistSeq = 0;

/** Text with `code` spans (commands, paths) as <code> elements. */
function withCode(h, text) {
  return String(text)
    .split("`")
    .map((part, k) => (k % 2 ? h("code", {}, [part]) : part))
    .filter((part) => part !== "");
}

export function mountPreferences({ doc, root, env }) {
  const l10n = env.l10n || createLocalization({ resources: {} });
  const h = createH(doc, l10n);
  const { t } = l10n;
  const now = env.now || (() => Date.now());
  const client = () => env.getClient();
  const describe = (err) =>
    describeError(err || {}, { baseURL: env.getGatewayURL?.(), tokenPath: env.tokenPath, t });
  const errorText = (err) => err?.message || describe(err);
  let syncAbort = null;
  let alive = true;

  // ---------------------------------------------------------------- building blocks

  const status = (cls = "") =>
    h("div", { class: `zc-pref-status ${cls}`.trim(), role: "status", "aria-live": "polite" });
  function setStatus(el, kind, text, { spinner = false } = {}) {
    el.setAttribute("data-kind", kind || "");
    fill(
      h,
      el,
      text
        ? [
            spinner
              ? h("span", { class: "zc-spinner" })
              : kind === "ok"
                ? icon(doc, "check", { size: 14 })
                : kind === "error"
                  ? icon(doc, "alert", { size: 14 })
                  : null,
            h("span", {}, [text]),
          ]
        : [],
    );
  }

  /** A group of settings; `titleId` and `introId` are Fluent ids. */
  function group(id, titleId, introId, children) {
    return h("section", { class: "zc-prefs-group", id: `zocrates-prefs-${id}`, "data-group": id }, [
      h("h2", { l10n: titleId }),
      introId ? h("p", { class: "zc-prefs-intro", l10n: introId }) : null,
      ...children,
    ]);
  }

  // ---------------------------------------------------------------- connection

  const urlInput = h("input", {
    type: "url",
    id: "zocrates-pref-gateway-url",
    class: "zc-pref-input",
    spellcheck: "false",
    props: { value: env.getGatewayURL?.() || "" },
  });
  const connStatus = status("zc-conn-status");
  async function testConnection() {
    setStatus(connStatus, "busy", t("zocrates-pref-testing"), { spinner: true });
    try {
      const c = client();
      await c.health();
      const sessions = await c.listSessions();
      setStatus(
        connStatus,
        "ok",
        t("zocrates-pref-connected", { url: c.baseURL, count: sessions.length }),
      );
      return true;
    } catch (err) {
      setStatus(connStatus, "error", errorText(err));
      return false;
    }
  }
  function saveURL() {
    const check = checkGatewayURL(urlInput.value);
    if (!check.ok) {
      setStatus(connStatus, "error", t(check.error));
      return;
    }
    env.setGatewayURL?.(check.url);
    urlInput.value = check.url;
    refreshAll();
  }
  urlInput.addEventListener("change", saveURL);
  urlInput.addEventListener("keydown", (e) => {
    if (e.key === "Enter") {
      e.preventDefault();
      saveURL();
    }
  });
  const connection = group("connection", "zocrates-pref-connection", null, [
    h("div", { class: "zc-field zc-field-wide" }, [
      h("label", {
        for: "zocrates-pref-gateway-url",
        class: "zc-field-label",
        l10n: "zocrates-pref-gateway-url",
      }),
      h("div", { class: "zc-field-control zc-inline" }, [
        urlInput,
        h("button", {
          type: "button",
          class: "zc-btn",
          id: "zocrates-pref-test-connection",
          l10n: "zocrates-pref-test-connection",
          on: { click: () => testConnection() },
        }),
      ]),
      h(
        "div",
        { class: "zc-field-help" },
        withCode(h, t("zocrates-pref-gateway-help", { path: env.tokenPath || DEFAULT_TOKEN_PATH })),
      ),
    ]),
    connStatus,
  ]);

  // ---------------------------------------------------------------- library

  const libraryLine = h("p", { class: "zc-pref-line", id: "zocrates-library-status" });
  const problemsList = h("ul", {
    class: "zc-pref-problems zc-muted",
    id: "zocrates-library-problems",
    hidden: true,
  });
  const syncStatus = status("zc-sync-status");
  const syncBtn = h(
    "button",
    {
      type: "button",
      class: "zc-btn zc-btn-accent",
      id: "zocrates-sync",
      on: { click: () => sync(false) },
    },
    [icon(doc, "refresh", { size: 14 }), h("span", { l10n: "zocrates-pref-sync" })],
  );
  const fullBtn = h("button", {
    type: "button",
    class: "zc-btn",
    id: "zocrates-sync-full",
    l10n: "zocrates-pref-sync-full",
    on: { click: () => sync(true) },
  });
  const cancelBtn = h("button", {
    type: "button",
    class: "zc-btn",
    id: "zocrates-sync-cancel",
    hidden: true,
    l10n: "zocrates-pref-sync-stop",
    on: { click: () => syncAbort?.abort() },
  });

  /** A labelled progress bar: the keyword phase, then the embedding phase. */
  function progressBar(id, labelId) {
    const fillEl = h("div", { class: "zc-progress-fill" });
    const bar = h(
      "div",
      {
        class: "zc-progress",
        role: "progressbar",
        "aria-valuemin": "0",
        "aria-valuemax": "100",
        l10n: labelId,
        hidden: true,
      },
      [fillEl],
    );
    const label = h("div", { class: "zc-progress-label" });
    const detail = h("div", { class: "zc-progress-detail zc-muted" });
    const wrap = h("div", { class: "zc-progress-wrap", id }, [label, bar, detail]);
    return {
      wrap,
      show(p) {
        bar.hidden = !!p.hidden;
        bar.toggleAttribute("data-indeterminate", p.percent === null);
        if (p.percent !== null) {
          bar.setAttribute("aria-valuenow", String(p.percent));
          fillEl.style.width = `${p.percent}%`;
        } else bar.removeAttribute("aria-valuenow");
        fill(h, label, p.label ? [p.label] : []);
        fill(h, detail, p.detail ? [p.detail] : []);
        return p;
      },
    };
  }
  const keywordBar = progressBar("zocrates-progress-keyword", "zocrates-pref-progress-keyword");
  const embeddingBar = progressBar(
    "zocrates-progress-embedding",
    "zocrates-pref-progress-embedding",
  );

  function showProgress(data) {
    const p = keywordBar.show(syncProgress(data, l10n));
    if (data.embedding) embeddingBar.show(embeddingProgress(data.embedding, l10n));
    return p;
  }

  async function sync(full) {
    if (syncAbort) return;
    syncAbort = new (env.AbortController || globalThis.AbortController)();
    syncBtn.disabled = true;
    fullBtn.disabled = true;
    cancelBtn.hidden = false;
    setStatus(syncStatus, "", "");
    showProgress({ phase: "scanning" });
    let last = null;
    let lastData = null;
    try {
      // The stream goes on through the embedding phase; "Stop" then only stops watching.
      const stream = await client().librarySync(
        { full, followEmbedding: true },
        { signal: syncAbort.signal },
      );
      for await (const ev of stream) {
        if (!alive) break;
        if (ev.event === "progress" || ev.event === "done") {
          last = showProgress(ev.data);
          lastData = ev.data;
          if (ev.data?.phase === "searchable")
            setStatus(syncStatus, "ok", t("zocrates-pref-sync-searchable-status"));
        }
        if (ev.event === "error") {
          setStatus(syncStatus, "error", ev.data?.display || describe(ev.data));
          break;
        }
      }
      if (last?.done) setStatus(syncStatus, "ok", lastData?.message || last.label);
    } catch (err) {
      const embedding = lastData && ["searchable", "embedding"].includes(lastData.phase);
      if (isAbortError(err) && embedding)
        setStatus(syncStatus, "", t("zocrates-pref-sync-stopped-watching"));
      else if (isAbortError(err)) setStatus(syncStatus, "", t("zocrates-pref-sync-stopped"));
      else setStatus(syncStatus, "error", errorText(err));
    } finally {
      syncAbort = null;
      syncBtn.disabled = false;
      fullBtn.disabled = false;
      cancelBtn.hidden = true;
      refreshLibrary();
    }
  }

  const library = group("library", "zocrates-pref-library", "zocrates-pref-library-intro", [
    libraryLine,
    problemsList,
    h("div", { class: "zc-pref-actions" }, [syncBtn, fullBtn, cancelBtn]),
    keywordBar.wrap,
    embeddingBar.wrap,
    syncStatus,
  ]);

  async function refreshLibrary() {
    try {
      const s = await client().libraryStatus();
      fill(h, libraryLine, [libraryStatusLine(s, now(), l10n)]);
      libraryLine.removeAttribute("data-kind");
      const problems = problemLines(s, l10n);
      fill(
        h,
        problemsList,
        problems.map((line) => h("li", {}, [line])),
      );
      problemsList.hidden = problems.length === 0;
      if (!syncAbort && s.embedding_phase?.chunks_pending)
        embeddingBar.show(embeddingProgress(s.embedding_phase, l10n));
    } catch (err) {
      fill(h, libraryLine, [errorText(err)]);
      libraryLine.setAttribute("data-kind", "error");
    }
  }

  // ---------------------------------------------------------------- config form

  const configHost = h("div", { class: "zc-config" });
  const configStatus = status("zc-config-status");
  const storageStats = h("p", { class: "zc-pref-line", id: "zocrates-storage-stats" });
  const cleanStatus = status("zc-clean-status");
  const cleanBtn = h(
    "button",
    {
      type: "button",
      class: "zc-btn zc-btn-accent",
      id: "zocrates-pref-clean-up",
      on: { click: () => cleanUp() },
    },
    [icon(doc, "trash", { size: 14 }), h("span", { l10n: "zocrates-pref-clean-up" })],
  );

  async function saveField(field, input, fieldStatus) {
    let value;
    try {
      value = parseFieldValue(field.kind, field.kind === "bool" ? input.checked : input.value);
    } catch (err) {
      // parseFieldValue's RangeError names the sentence by its Fluent id
      setStatus(fieldStatus, "error", t(err.message));
      input.setAttribute("aria-invalid", "true");
      return;
    }
    setStatus(fieldStatus, "busy", t("zocrates-pref-saving"), { spinner: true });
    try {
      const config = await client().putConfig({ [field.key]: value });
      field.value = config[field.key];
      if (field.kind !== "bool") input.value = formatFieldValue(field.kind, field.value);
      input.removeAttribute("aria-invalid");
      setStatus(fieldStatus, "ok", t("zocrates-pref-saved"));
    } catch (err) {
      input.setAttribute("aria-invalid", "true");
      setStatus(fieldStatus, "error", err?.serverMessage || errorText(err));
    }
  }

  function fieldNode(field) {
    const id = `zocrates-config-${field.key}`;
    const fieldStatus = status("zc-field-status");
    let input;
    let datalist = null;
    if (field.kind === "bool") {
      input = h("input", { type: "checkbox", id, props: { checked: !!field.value } });
      input.addEventListener("change", () => saveField(field, input, fieldStatus));
    } else if (field.kind === "choice") {
      // A known key's values are Fluent messages; a newer gateway's show as they are.
      input = h(
        "select",
        { id, class: "zc-pref-input" },
        field.choices.map((value) => {
          const labelId = choiceLabelId(field.key, value);
          const selected = value === field.value ? { selected: "" } : {};
          return h("option", { value, l10n: labelId, ...selected }, labelId ? [] : [value]);
        }),
      );
      input.addEventListener("change", () => saveField(field, input, fieldStatus));
    } else {
      const attrs = {
        id,
        class: "zc-pref-input",
        spellcheck: "false",
        props: { value: formatFieldValue(field.kind, field.value) },
      };
      if (field.kind === "int" || field.kind === "int-nullable")
        Object.assign(attrs, { type: "number", min: "0", step: "1", inputmode: "numeric" });
      else if (field.kind === "float")
        Object.assign(attrs, { type: "number", step: "0.05", min: "0", max: "1" });
      else attrs.type = "text";
      if (field.kind === "model") {
        const listId = `zocrates-models-${++datalistSeq}`;
        attrs.list = listId;
        datalist = h(
          "datalist",
          { id: listId },
          MODEL_SUGGESTIONS.map((m) => h("option", { value: m })),
        );
      }
      if (
        field.defaultValue !== undefined &&
        field.defaultValue !== null &&
        field.defaultValue !== ""
      )
        attrs.placeholder = t("zocrates-pref-default", { value: String(field.defaultValue) });
      input = h("input", attrs);
      input.addEventListener("change", () => saveField(field, input, fieldStatus));
      input.addEventListener("keydown", (e) => {
        if (e.key === "Enter") {
          e.preventDefault();
          saveField(field, input, fieldStatus);
        }
      });
    }
    // A known key's label and help are Fluent messages; a newer gateway's key shows its name
    // and the gateway's description.
    const label = (tag, attrs) =>
      h(tag, { ...attrs, l10n: field.labelId }, field.labelId ? [] : [field.label]);
    const description =
      field.helpId || field.description
        ? h(
            "div",
            { class: "zc-field-help", id: `${id}-help`, l10n: field.helpId },
            field.helpId ? [] : [field.description],
          )
        : null;
    if (description) input.setAttribute("aria-describedby", `${id}-help`);
    if (field.kind === "bool") {
      return h("div", { class: "zc-field zc-field-check", "data-key": field.key }, [
        h("label", { class: "zc-check", for: id }, [input, label("span", {})]),
        description,
        fieldStatus,
      ]);
    }
    return h("div", { class: "zc-field", "data-key": field.key }, [
      label("label", { for: id, class: "zc-field-label" }),
      h("div", { class: "zc-field-control" }, [input, datalist, fieldStatus]),
      description,
    ]);
  }

  async function refreshStorage() {
    try {
      const s = await client().storageStats();
      fill(h, storageStats, [storageLine(s, l10n)]);
      storageStats.removeAttribute("data-kind");
      return s;
    } catch (err) {
      fill(h, storageStats, [errorText(err)]);
      storageStats.setAttribute("data-kind", "error");
      return null;
    }
  }

  async function cleanUp() {
    cleanBtn.disabled = true;
    cleanBtn.setAttribute("aria-busy", "true");
    setStatus(cleanStatus, "busy", t("zocrates-pref-cleaning"), { spinner: true });
    try {
      const report = await client().maintenance();
      setStatus(cleanStatus, "ok", maintenanceLine(report, l10n));
      cleanStatus.setAttribute("data-deleted", String(report?.deleted ?? 0));
    } catch (err) {
      setStatus(cleanStatus, "error", errorText(err));
    } finally {
      cleanBtn.disabled = false;
      cleanBtn.removeAttribute("aria-busy");
      await refreshStorage();
    }
  }

  async function refreshConfig() {
    setStatus(configStatus, "busy", t("zocrates-pref-loading"), { spinner: true });
    let body;
    try {
      body = await client().getConfig();
    } catch (err) {
      clear(configHost);
      setStatus(configStatus, "error", errorText(err));
      return;
    }
    setStatus(configStatus, "", "");
    const groups = configGroups(body);
    fill(
      h,
      configHost,
      groups.map((g) => {
        const children = g.fields.map(fieldNode);
        if (g.id === "storage") {
          children.unshift(
            h("div", { class: "zc-storage-line" }, [icon(doc, "book", { size: 14 }), storageStats]),
          );
          children.push(h("div", { class: "zc-pref-actions" }, [cleanBtn]), cleanStatus);
        }
        return group(g.id, g.titleId, g.introId, children);
      }),
    );
    if (body.path)
      configHost.appendChild(
        h(
          "p",
          { class: "zc-muted zc-config-path" },
          withCode(h, t("zocrates-pref-saved-in", { path: body.path })),
        ),
      );
    refreshStorage();
  }

  function refreshAll() {
    refreshLibrary();
    refreshConfig();
    testConnection();
  }

  const page = h("div", { class: "zocrates-prefs", lang: l10n.locale }, [
    connection,
    library,
    configStatus,
    configHost,
  ]);
  clear(root);
  root.appendChild(page);
  refreshAll();

  return {
    element: page,
    refresh: refreshAll,
    sync,
    cleanUp,
    destroy() {
      alive = false;
      syncAbort?.abort();
      clear(root);
    },
  };
}
