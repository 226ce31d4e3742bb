/**
 * The settings pane's form of zocrates_config.json (GET and PUT /config): one field per
 * setting, grouped (prefs-model.js configGroups), saved on Enter or leaving the field with
 * "Saved" or the validation message next to it; and in "Chat Sessions & Storage" the database
 * size and chat count (GET /sessions/storage_stats) with Clean Up Now (POST
 * /sessions/maintenance). The role model fields offer the model server's models and a Test
 * model button (prefs-local-models.js).
 */
import { clear, fill } from "./dom.js";
import { maintenanceLine, storageLine } from "./format.js";
import { icon } from "./icons.js";
import { createLocalModels } from "./prefs-local-models.js";
import {
  API_BASE_KEY,
  choiceLabelId,
  configGroups,
  formatFieldValue,
  MODEL_KEYS,
  parseFieldValue,
} from "./prefs-model.js";
import { withCode } from "./prefs-parts.js";

let datalistSeq = 0;

/**
 * @param {object} ctx prefs-view.js's context: doc, h, t, l10n, env, client, errorText,
 *   status, setStatus, group, isAlive
 * @returns {{elements: Element[], refresh: () => Promise<void>, cleanUp: () => Promise<void>,
 *   localModels: object}} localModels: prefs-local-models.js's, for the view's destroy
 */
export function createConfigSection(ctx) {
  const { doc, h, t, l10n, client, errorText, status, setStatus, group } = ctx;

  const localModels = createLocalModels(ctx);
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
        datalist = h("datalist", { id: listId });
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
    // the model server's models and the Test model button (prefs-local-models.js)
    let testButton = null;
    let below = null;
    if (field.key === API_BASE_KEY && field.kind === "text") below = localModels.attachBase(input);
    else if (MODEL_KEYS.has(field.key) && field.kind === "model")
      ({ button: testButton, result: below } = localModels.attachModel(field, input, datalist));
    if (field.kind === "bool") {
      return h("div", { class: "zc-field zc-field-check", "data-key": field.key }, [
        h("label", { class: "zc-check", for: id }, [input, label("span", {})]),
        description,
        fieldStatus,
      ]);
    }
    return h("div", { class: "zc-field", "data-key": field.key }, [
      label("label", { for: id, class: "zc-field-label" }),
      // the button last: "Saving…" appearing when the field is left does not move it away
      // from under the pointer that clicks it
      h("div", { class: "zc-field-control" }, [input, datalist, fieldStatus, testButton]),
      description,
      below,
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
    localModels.reset();
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
    localModels.refresh();
  }

  return {
    elements: [configStatus, configHost],
    refresh: refreshConfig,
    cleanUp,
    localModels,
  };
}
