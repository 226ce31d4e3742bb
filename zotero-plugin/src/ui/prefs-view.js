/**
 * The preferences pane (Zotero > Settings > Zocrates, and the harness): the gateway address
 * with a connection test, library indexing with a progress bar (POST /library/sync streams
 * `progress` events), the model / deep-research / compaction settings of zocrates_config.json
 * (GET and PUT /config, saved field by field, validation messages next to the field), and
 * "Chat Sessions & Storage": database size and chat count (GET /sessions/storage_stats),
 * retention settings and Clean Up Now (POST /sessions/maintenance) with live feedback.
 *
 * env: {getClient(), getGatewayURL(), setGatewayURL(url), tokenPath?, now?(), log?(msg),
 *       AbortController? (the window's; Zotero's plugin sandbox has none)}
 */
import { describeError, isAbortError } from "../errors.js";
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
  checkGatewayURL,
  configGroups,
  formatFieldValue,
  MODEL_SUGGESTIONS,
  parseFieldValue,
} from "./prefs-model.js";

let datalistSeq = 0;

export function mountPreferences({ doc, root, env }) {
  const h = createH(doc);
  const now = env.now || (() => Date.now());
  const client = () => env.getClient();
  const errorText = (err) => err?.message || describeError(err || {});
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

  function group(id, title, intro, children) {
    return h("section", { class: "zc-prefs-group", id: `zocrates-prefs-${id}`, "data-group": id }, [
      h("h2", {}, [title]),
      intro ? h("p", { class: "zc-prefs-intro" }, [intro]) : null,
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
    setStatus(connStatus, "busy", "Testing the connection…", { spinner: true });
    try {
      const c = client();
      await c.health();
      const sessions = await c.listSessions();
      setStatus(
        connStatus,
        "ok",
        `Connected: Zocrates answers at ${c.baseURL} and accepts the token (${sessions.length} chat${sessions.length === 1 ? "" : "s"}).`,
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
      setStatus(connStatus, "error", check.message);
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
  const connection = group("connection", "Connection", "", [
    h("div", { class: "zc-field zc-field-wide" }, [
      h("label", { for: "zocrates-pref-gateway-url", class: "zc-field-label" }, [
        "Gateway address",
      ]),
      h("div", { class: "zc-field-control zc-inline" }, [
        urlInput,
        h(
          "button",
          {
            type: "button",
            class: "zc-btn",
            id: "zocrates-pref-test-connection",
            on: { click: () => testConnection() },
          },
          ["Test connection"],
        ),
      ]),
      h("div", { class: "zc-field-help" }, [
        "Where ",
        h("code", {}, ["make run"]),
        " serves Zocrates (http://127.0.0.1:8765 by default). The token is read from ",
        h("code", {}, [env.tokenPath || "<Zotero data dir>/zocrates-data/gateway.token"]),
        ".",
      ]),
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
    [icon(doc, "refresh", { size: 14 }), h("span", {}, ["Index new and changed papers"])],
  );
  const fullBtn = h(
    "button",
    {
      type: "button",
      class: "zc-btn",
      id: "zocrates-sync-full",
      title: "Re-read every PDF (takes minutes on a large library)",
      on: { click: () => sync(true) },
    },
    ["Re-index everything"],
  );
  const cancelBtn = h(
    "button",
    {
      type: "button",
      class: "zc-btn",
      id: "zocrates-sync-cancel",
      hidden: true,
      on: { click: () => syncAbort?.abort() },
    },
    ["Stop"],
  );

  /** A labelled progress bar: the keyword phase, then the embedding phase. */
  function progressBar(id, ariaLabel) {
    const fillEl = h("div", { class: "zc-progress-fill" });
    const bar = h(
      "div",
      {
        class: "zc-progress",
        role: "progressbar",
        "aria-valuemin": "0",
        "aria-valuemax": "100",
        "aria-label": ariaLabel,
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
  const keywordBar = progressBar("zocrates-progress-keyword", "Library indexing");
  const embeddingBar = progressBar("zocrates-progress-embedding", "Embedding passages");

  function showProgress(data) {
    const p = keywordBar.show(syncProgress(data));
    if (data.embedding) embeddingBar.show(embeddingProgress(data.embedding));
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
            setStatus(
              syncStatus,
              "ok",
              "Every paper is searchable by keyword; embeddings follow in the background.",
            );
        }
        if (ev.event === "error") {
          setStatus(syncStatus, "error", ev.data?.display || describeError(ev.data || {}));
          break;
        }
      }
      if (last?.done) setStatus(syncStatus, "ok", lastData?.message || last.label);
    } catch (err) {
      const embedding = lastData && ["searchable", "embedding"].includes(lastData.phase);
      if (isAbortError(err) && embedding)
        setStatus(syncStatus, "", "Stopped watching; the embeddings go on in the background.");
      else if (isAbortError(err))
        setStatus(syncStatus, "", "Indexing stopped; what was indexed is kept.");
      else setStatus(syncStatus, "error", errorText(err));
    } finally {
      syncAbort = null;
      syncBtn.disabled = false;
      fullBtn.disabled = false;
      cancelBtn.hidden = true;
      refreshLibrary();
    }
  }

  const library = group(
    "library",
    "Library index",
    "Zocrates reads the PDFs of your Zotero library into a local search index. Indexing again only reads what changed.",
    [
      libraryLine,
      problemsList,
      h("div", { class: "zc-pref-actions" }, [syncBtn, fullBtn, cancelBtn]),
      keywordBar.wrap,
      embeddingBar.wrap,
      syncStatus,
    ],
  );

  async function refreshLibrary() {
    try {
      const s = await client().libraryStatus();
      fill(h, libraryLine, [libraryStatusLine(s, now())]);
      libraryLine.removeAttribute("data-kind");
      const problems = problemLines(s);
      fill(
        h,
        problemsList,
        problems.map((line) => h("li", {}, [line])),
      );
      problemsList.hidden = problems.length === 0;
      if (!syncAbort && s.embedding_phase?.chunks_pending)
        embeddingBar.show(embeddingProgress(s.embedding_phase));
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
    [icon(doc, "trash", { size: 14 }), h("span", {}, ["Clean Up Now"])],
  );

  async function saveField(field, input, fieldStatus) {
    let value;
    try {
      value = parseFieldValue(field.kind, field.kind === "bool" ? input.checked : input.value);
    } catch (err) {
      setStatus(fieldStatus, "error", err.message);
      input.setAttribute("aria-invalid", "true");
      return;
    }
    setStatus(fieldStatus, "busy", "Saving…", { spinner: true });
    try {
      const config = await client().putConfig({ [field.key]: value });
      field.value = config[field.key];
      if (field.kind !== "bool") input.value = formatFieldValue(field.kind, field.value);
      input.removeAttribute("aria-invalid");
      setStatus(fieldStatus, "ok", "Saved");
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
        attrs.placeholder = `default ${field.defaultValue}`;
      input = h("input", attrs);
      input.addEventListener("change", () => saveField(field, input, fieldStatus));
      input.addEventListener("keydown", (e) => {
        if (e.key === "Enter") {
          e.preventDefault();
          saveField(field, input, fieldStatus);
        }
      });
    }
    const description = field.description
      ? h("div", { class: "zc-field-help", id: `${id}-help` }, [field.description])
      : null;
    if (description) input.setAttribute("aria-describedby", `${id}-help`);
    if (field.kind === "bool") {
      return h("div", { class: "zc-field zc-field-check", "data-key": field.key }, [
        h("label", { class: "zc-check", for: id }, [input, h("span", {}, [field.label])]),
        description,
        fieldStatus,
      ]);
    }
    return h("div", { class: "zc-field", "data-key": field.key }, [
      h("label", { for: id, class: "zc-field-label" }, [field.label]),
      h("div", { class: "zc-field-control" }, [input, datalist, fieldStatus]),
      description,
    ]);
  }

  async function refreshStorage() {
    try {
      const s = await client().storageStats();
      fill(h, storageStats, [storageLine(s)]);
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
    setStatus(
      cleanStatus,
      "busy",
      "Cleaning up: applying the retention rules, then compacting the database if it is worth it…",
      { spinner: true },
    );
    try {
      const report = await client().maintenance();
      setStatus(cleanStatus, "ok", maintenanceLine(report));
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
    setStatus(configStatus, "busy", "Loading settings…", { spinner: true });
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
        return group(g.id, g.title, g.intro, children);
      }),
    );
    if (body.path)
      configHost.appendChild(
        h("p", { class: "zc-muted zc-config-path" }, ["Saved in ", h("code", {}, [body.path])]),
      );
    refreshStorage();
  }

  function refreshAll() {
    refreshLibrary();
    refreshConfig();
    testConnection();
  }

  const page = h("div", { class: "zocrates-prefs" }, [
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
