/**
 * The settings form's help with a model server (model_api_base, a local llama.cpp, vLLM,
 * LM Studio or Ollama server): each role's model field offers the models that server lists
 * (GET /models/local, in the field's <datalist>; looked up when the form opens and when the
 * base URL is changed or left), with a line under the base URL saying what was found or the
 * server's message; and next to each role's model field a Test model button: the gateway asks
 * that model, through the base URL in the form, for a short reply (POST /models/test), and
 * one line under the field shows the reply, its seconds, tokens per second, the context size
 * and whether the model calls tools, or the message of what failed.
 *
 * prefs-config.js builds the fields and hands them over (attachBase, attachModel) each time
 * it builds the form; nothing here throws into it.
 */
import { isAbortError } from "../errors.js";
import { fill } from "./dom.js";
import { canTestModel, isMissingRoute, modelOptions, modelTestParts } from "./prefs-model.js";

/**
 * @param {object} ctx prefs-view.js's context: h, t, env, client, errorText, status,
 *   setStatus, isAlive
 */
export function createLocalModels(ctx) {
  const { h, t, env, client, errorText, status, setStatus, isAlive } = ctx;
  const Abort = env?.AbortController || globalThis.AbortController;
  const controller = () => (Abort ? new Abort() : null);

  let baseInput = null;
  let baseStatus = null;
  let lists = []; // the role fields' <datalist>s
  let serverModels = []; // what the server at `listedBase` lists
  let listedBase = ""; // the base URL `serverModels` came from ("" when none)
  let listing = null; // {base, abort, promise} of the lookup under way
  let failed = false; // the last lookup failed (leaving the field looks again)
  const tests = new Set(); // the AbortControllers of the model tests under way

  /** The model server's base URL as the form has it now ("" without one). */
  const currentBase = () => (baseInput ? String(baseInput.value || "").trim() : "");

  /** The words for a failure of the /models routes: the gateway's, or what to do. */
  const failure = (err) =>
    isMissingRoute(err) ? t("zocrates-pref-models-unsupported") : errorText(err);

  function fillList(datalist) {
    fill(
      h,
      datalist,
      modelOptions(serverModels).map(({ value, label }) =>
        h("option", { value, label: label ? t(...label) : null }),
      ),
    );
  }

  function showModels(base, models) {
    serverModels = models;
    listedBase = base;
    for (const list of lists) fillList(list);
  }

  /** Ask the gateway what the server at the form's base URL lists (never throws). */
  async function refresh({ force = true } = {}) {
    const base = currentBase();
    if (!base) {
      listing?.abort?.abort();
      listing = null;
      failed = false;
      if (listedBase || serverModels.length) showModels("", []);
      if (baseStatus) setStatus(baseStatus, "", "");
      return;
    }
    if (listing && listing.base === base) return listing.promise;
    if (!force && !failed && base === listedBase) return;
    listing?.abort?.abort();
    const abort = controller();
    const mine = { base, abort };
    listing = mine;
    if (baseStatus)
      setStatus(baseStatus, "busy", t("zocrates-pref-local-models-loading"), { spinner: true });
    mine.promise = (async () => {
      try {
        const body = await client().localModels(base, { signal: abort?.signal });
        if (listing !== mine || !isAlive()) return;
        const models = Array.isArray(body?.models) ? body.models : [];
        failed = false;
        showModels(base, models);
        const kind = String(body?.server || "");
        const server = ["openai", "ollama"].includes(kind)
          ? t(`zocrates-pref-local-server-${kind}`)
          : kind || t("zocrates-pref-local-server-openai");
        if (baseStatus)
          setStatus(
            baseStatus,
            models.length ? "ok" : "",
            t("zocrates-pref-local-models-found", { count: models.length, server }),
          );
      } catch (err) {
        if (isAbortError(err) || listing !== mine || !isAlive()) return;
        failed = true;
        showModels("", []);
        if (baseStatus) setStatus(baseStatus, "error", failure(err));
      } finally {
        if (listing === mine) listing = null;
      }
    })();
    return mine.promise;
  }

  /** The form was built again: forget the fields of the one before. */
  function reset() {
    listing?.abort?.abort();
    listing = null;
    for (const abort of tests) abort.abort();
    tests.clear();
    baseInput = null;
    baseStatus = null;
    lists = [];
  }

  /** The base URL's field: its lookups, and the line under it (returned, to place). */
  function attachBase(input) {
    baseInput = input;
    baseStatus = status("zc-local-models-status");
    baseStatus.id = "zocrates-local-models-status";
    input.addEventListener("change", () => refresh());
    input.addEventListener("blur", () => refresh({ force: false }));
    input.addEventListener("keydown", (e) => {
      if (e.key === "Enter") refresh();
    });
    return baseStatus;
  }

  /**
   * A role's model field: its suggestions, and a Test model button with its result line.
   * @returns {{button: Element, result: Element}} to place next to and under the field
   */
  function attachModel(field, input, datalist) {
    if (datalist) {
      lists.push(datalist);
      fillList(datalist);
    }
    const result = status("zc-model-test-status");
    result.id = `zocrates-model-test-${field.key}`;
    let running = null;
    const button = h("button", {
      type: "button",
      class: "zc-btn zc-btn-small zc-model-test",
      id: `zocrates-model-test-button-${field.key}`,
      "aria-describedby": result.id,
      l10n: "zocrates-pref-model-test",
      on: { click: () => test() },
    });
    const update = () => {
      button.disabled = !!running || !canTestModel(input.value);
    };
    input.addEventListener("input", update);
    input.addEventListener("change", update);
    update();

    async function test() {
      const model = String(input.value || "").trim();
      if (running || !canTestModel(model)) return;
      const abort = controller();
      running = abort || {};
      if (abort) tests.add(abort);
      update();
      button.setAttribute("aria-busy", "true");
      setStatus(result, "busy", t("zocrates-pref-model-testing", { model }), { spinner: true });
      try {
        const body = await client().testModel(model, currentBase(), { signal: abort?.signal });
        if (!isAlive()) return;
        const line = modelTestParts(body)
          .map((part) => t(...part))
          .join(" · ");
        setStatus(result, "ok", line);
        result.setAttribute("data-tool-calling", String(body?.tool_calling ?? "unknown"));
      } catch (err) {
        if (isAbortError(err) || !isAlive()) return;
        setStatus(result, "error", failure(err));
        result.removeAttribute("data-tool-calling");
      } finally {
        tests.delete(abort);
        running = null;
        button.removeAttribute("aria-busy");
        update();
      }
    }

    return { button, result };
  }

  return {
    attachBase,
    attachModel,
    refresh,
    reset,
    /** What the lookups found (for tests): the base URL and its models. */
    get listed() {
      return { base: listedBase, models: serverModels };
    },
  };
}
