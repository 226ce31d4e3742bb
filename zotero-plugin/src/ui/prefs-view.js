/**
 * The preferences pane (Zotero > Settings > Zocrates, and the harness): the gateway address
 * with a connection test, library indexing with a progress bar (POST /library/sync streams
 * `progress` events), the model / deep-research / compaction settings of zocrates_config.json
 * (GET and PUT /config, saved field by field, validation messages next to the field; the
 * model server's models offered in the role fields and a Test model button), and
 * "Chat Sessions & Storage": database size and chat count (GET /sessions/storage_stats),
 * retention settings and Clean Up Now (POST /sessions/maintenance) with live feedback.
 *
 * Its strings are Fluent messages zocrates-pref-* (preferences.ftl, formatted by the plugin's
 * own localization); the gateway's errors come worded by describeError (addon.ftl).
 *
 * The sections: prefs-library.js (the index and its progress), prefs-config.js (the settings
 * form, storage and Clean Up Now) with prefs-local-models.js (GET /models/local, POST
 * /models/test); the connection is here; prefs-parts.js holds what they share.
 *
 * env: {getClient(), getGatewayURL(), setGatewayURL(url), tokenPath?, now?(), log?(msg),
 *       AbortController? (the window's; Zotero's plugin sandbox has none),
 *       l10n? (l10n.js; ids are shown without)}
 */
import { DEFAULT_TOKEN_PATH, describeError } from "../errors.js";
import { createLocalization } from "../l10n.js";
import { clear, createH } from "./dom.js";
import { createConfigSection } from "./prefs-config.js";
import { createLibrarySection } from "./prefs-library.js";
import { checkGatewayURL } from "./prefs-model.js";
import { createPrefsParts, withCode } from "./prefs-parts.js";

export function mountPreferences({ doc, root, env }) {
  const l10n = env.l10n || createLocalization({ resources: {} });
  const h = createH(doc, l10n);
  const { t } = l10n;
  const now = env.now || (() => Date.now());
  const client = () => env.getClient();
  const describe = (err) =>
    describeError(err || {}, { baseURL: env.getGatewayURL?.(), tokenPath: env.tokenPath, t });
  const errorText = (err) => err?.message || describe(err);
  let alive = true;
  const { status, setStatus, group } = createPrefsParts({ doc, h });
  // what the sections share
  const ctx = { doc, h, t, l10n, env, client, now, describe, errorText, status, setStatus, group };
  ctx.isAlive = () => alive;

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

  const library = createLibrarySection(ctx);
  const config = createConfigSection(ctx);

  function refreshAll() {
    library.refresh();
    config.refresh();
    testConnection();
  }

  const page = h("div", { class: "zocrates-prefs", lang: l10n.locale }, [
    connection,
    library.element,
    ...config.elements,
  ]);
  clear(root);
  root.appendChild(page);
  refreshAll();

  return {
    element: page,
    refresh: refreshAll,
    sync: library.sync,
    cleanUp: config.cleanUp,
    destroy() {
      alive = false;
      library.destroy();
      config.localModels.reset();
      clear(root);
    },
  };
}
