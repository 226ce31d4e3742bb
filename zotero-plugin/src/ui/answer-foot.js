/**
 * The foot of a finished answer: Copy as Markdown, Copy as text and Save as note (notes.js
 * through the environment's copyAnswer / saveNote, in the pane's words), and, for a remote
 * model's turn, what it cost ("12,345 tokens in · 678 out · ≈ $0.0042", from done.usage).
 */
import { clear, fill } from "./dom.js";
import { formatCost } from "./format.js";
import { icon } from "./icons.js";

/** @param {object} ctx the view's context (view.js) */
export function createAnswerFoot(ctx) {
  const { doc, h, env } = ctx;

  /** "12,345 tokens in · 678 out · ≈ $0.0042": a remote model's turn; nothing offline. */
  function usageLine(usage) {
    const input = Number(usage.input_tokens) || 0;
    const output = Number(usage.output_tokens) || 0;
    if (!input && !output) return null;
    const cost = Number(usage.cost_usd);
    const known = usage.cost_usd != null && Number.isFinite(cost);
    const models = usage.model || ""; // the models as configured, joined by ", "
    return h("span", {
      class: "zc-usage",
      "data-cost-known": String(known),
      l10n: known
        ? ["zocrates-answer-usage-cost", { input, output, cost: formatCost(cost) }]
        : ["zocrates-answer-usage", { input, output }],
      title: models ? h.t("zocrates-answer-usage-line", { model: models }) : null,
    });
  }

  function footButton(cls, id, iconName, onClick) {
    return h(
      "button",
      { type: "button", class: `zc-link-btn ${cls}`, l10n: `${id}-button`, on: { click: onClick } },
      [icon(doc, iconName, { size: 13 }), h("span", { class: "zc-foot-label", l10n: id })],
    );
  }

  /** A short confirmation in place of a button's label, then the label again. */
  function flash(button, id, args) {
    const label = button.querySelector(".zc-foot-label");
    const original = label.getAttribute("data-zc-l10n");
    h.localize(label, args ? [id, args] : id);
    button.setAttribute("data-done", "true");
    (env.setTimeout || setTimeout)(() => {
      h.localize(label, original);
      button.removeAttribute("data-done");
    }, 2000);
  }

  /** The words a saved or copied answer uses, in the pane's language (notes.js labels). */
  function noteLabels() {
    return {
      sources: h.t("zocrates-note-sources"),
      quoteOnPage: (page) => h.t("zocrates-note-quote-on-page", { page }),
      quoteNotFound: h.t("zocrates-note-quote-not-found"),
    };
  }

  function render(p, m, { streaming, body, question }) {
    const show = !streaming && !!body.trim() && m.status !== "paused";
    const key = show
      ? `${body.length}|${(m.citations || []).length}|${JSON.stringify(m.usage || null)}`
      : null;
    p.foot.hidden = !show;
    if (key === p.footKey) return;
    p.footKey = key;
    if (!show) {
      clear(p.foot);
      return;
    }
    const answer = { question, answer: body, citations: m.citations || [] };
    const copy = (as) => async (e) => {
      const button = e.currentTarget;
      try {
        await env.copyAnswer({ ...answer, as, labels: noteLabels() });
        flash(button, "zocrates-answer-copied");
      } catch (err) {
        env.log?.(`copy: ${err?.message || err}`);
      }
    };
    const save = async (e) => {
      const button = e.currentTarget;
      button.disabled = true;
      try {
        await env.saveNote({ ...answer, labels: noteLabels() });
        flash(button, "zocrates-answer-saved-note");
      } catch (err) {
        if (err?.code === "library_read_only")
          flash(button, "zocrates-answer-save-read-only", { library: err.library || "" });
        else flash(button, "zocrates-answer-save-failed", { message: String(err?.message || err) });
      } finally {
        button.disabled = false;
      }
    };
    fill(h, p.foot, [
      env.copyAnswer
        ? [
            footButton(
              "zc-copy-markdown",
              "zocrates-answer-copy-markdown",
              "copy",
              copy("markdown"),
            ),
            footButton("zc-copy-text", "zocrates-answer-copy-text", "copy", copy("text")),
          ]
        : null,
      env.saveNote ? footButton("zc-save-note", "zocrates-answer-save-note", "note", save) : null,
      h("span", { class: "zc-spacer" }),
      m.usage ? usageLine(m.usage) : null,
    ]);
  }

  return { render };
}
