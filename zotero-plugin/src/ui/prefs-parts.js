/**
 * The settings pane's building blocks (prefs-view.js and its sections): a status line (busy,
 * ok, error, with its icon), a group of settings under its title, and text whose `code` spans
 * become <code> elements.
 */
import { fill } from "./dom.js";
import { icon } from "./icons.js";

/** Text with `code` spans (commands, paths) as <code> elements. */
export function withCode(h, text) {
  return String(text)
    .split("`")
    .map((part, k) => (k % 2 ? h("code", {}, [part]) : part))
    .filter((part) => part !== "");
}

/**
 * @param {{doc: Document, h: Function}} ctx
 * @returns {{status: (cls?: string) => Element, setStatus: Function, group: Function}}
 */
export function createPrefsParts({ doc, h }) {
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

  return { status, setStatus, group };
}
