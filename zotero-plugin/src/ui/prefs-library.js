/**
 * The settings pane's library index: papers, pages and passages indexed (GET /library/status),
 * what went wrong per PDF, "Index new and changed papers" / "Re-index everything" with two
 * progress bars fed by POST /library/sync's `progress` events (the keyword phase, then the
 * embedding phase), and Stop.
 */
import { isAbortError } from "../errors.js";
import { fill } from "./dom.js";
import { embeddingProgress, libraryStatusLine, problemLines, syncProgress } from "./format.js";
import { icon } from "./icons.js";

/**
 * @param {object} ctx prefs-view.js's context: doc, h, t, l10n, env, client, now, describe,
 *   errorText, status, setStatus, group, isAlive
 * @returns {{element: Element, refresh: () => Promise<void>, sync: (full: boolean) =>
 *   Promise<void>, destroy: () => void}}
 */
export function createLibrarySection(ctx) {
  const { doc, h, t, l10n, env, client, now, describe, errorText } = ctx;
  const { status, setStatus, group, isAlive } = ctx;
  let syncAbort = null;

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
        if (!isAlive()) break;
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

  return {
    element: library,
    refresh: refreshLibrary,
    sync,
    destroy: () => syncAbort?.abort(),
  };
}
