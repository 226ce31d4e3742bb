/**
 * The deep-research checkpoint card (`.hitl-checkpoint-card`), built with DOM methods from
 * card.js's model: why the search paused, how much of its budget it used, what it covered
 * (each paper and page opens in the reader), what it did not find, an optional guidance field,
 * and the two choices with what each one costs. "Discard this turn" rewinds the paused turn.
 */
import { buildCardModel, englishT, GUIDANCE_MAX } from "../card.js";
import { cardCosts, cardMeters, parseCovered, parsePaper, truncate } from "./format.js";
import { icon } from "./icons.js";

let cardSeq = 0;

/** A card string: the Fluent message zocrates-card-<key>, else card.js's English. */
function cardText(h, key, args) {
  const id = `zocrates-card-${key}`;
  const text = h.t(id, args);
  return text === id ? englishT(key, args) : text;
}

/**
 * @param {Function} h dom.js h
 * @param {Document} doc
 * @param {object} checkpoint a bubble's checkpoint (messages.js)
 * @param {{guidance?: string, onGuidance?, onGrant, onSynthesize, onDiscard, onOpen, isMac?}} handlers
 */
export function renderCheckpointCard(h, doc, checkpoint, handlers = {}) {
  // The card's strings are Fluent messages zocrates-card-* when h has a localization.
  const t = h.l10n ? (key, args) => cardText(h, key, args) : englishT;
  const model = buildCardModel(checkpoint, { t });
  const costs = cardCosts(model, t);
  const id = `zc-card-${++cardSeq}`;
  const covered = parseCovered(model.coveredSummary);
  const guidance = h("textarea", {
    id: `${id}-guidance`,
    class: "zc-guidance",
    rows: "2",
    maxlength: String(GUIDANCE_MAX),
    placeholder: model.guidance.placeholder,
    "aria-describedby": `${id}-guidance-hint`,
    props: { value: handlers.guidance || "" },
    on: {
      input: (e) => handlers.onGuidance?.(e.target.value),
      keydown: (e) => {
        if (e.key === "Enter" && (e.ctrlKey || e.metaKey) && !model.primary.disabled) {
          e.preventDefault();
          choose("extend_budget");
        }
      },
    },
  });

  const buttons = [];
  function choose(action) {
    for (const b of buttons) b.disabled = true;
    card.classList.add("zc-card-answered");
    const text = guidance.value || "";
    if (action === "extend_budget") handlers.onGrant?.(text);
    else handlers.onSynthesize?.(text);
  }

  const grant = h(
    "button",
    {
      type: "button",
      class: "zc-choice zc-choice-primary",
      "data-action": model.primary.action,
      disabled: model.primary.disabled,
      "aria-describedby": `${id}-grant-cost`,
      on: { click: () => choose("extend_budget") },
    },
    [
      h("span", { class: "zc-choice-label" }, [
        icon(doc, "search"),
        h("span", {}, [model.primary.label]),
      ]),
      h("span", { class: "zc-choice-cost", id: `${id}-grant-cost` }, [costs.grant]),
    ],
  );
  const synth = h(
    "button",
    {
      type: "button",
      class: "zc-choice zc-choice-secondary",
      "data-action": model.secondary.action,
      "aria-describedby": `${id}-synth-cost`,
      on: { click: () => choose("synthesize") },
    },
    [
      h("span", { class: "zc-choice-label" }, [
        icon(doc, "sparkle"),
        h("span", {}, [model.secondary.label]),
      ]),
      h("span", { class: "zc-choice-cost", id: `${id}-synth-cost` }, [costs.synthesize]),
    ],
  );
  buttons.push(grant, synth);

  const meters = cardMeters(model, t).map((m) =>
    h("div", { class: "zc-meter", "data-meter": m.id }, [
      h("div", { class: "zc-meter-text" }, [
        h("span", {}, [m.label]),
        h("span", { class: "zc-meter-value" }, [t("meter-value", { used: m.used, of: m.of })]),
      ]),
      h("div", { class: "zc-meter-track", role: "presentation" }, [
        h("div", { class: "zc-meter-fill", style: { width: `${Math.round(m.fraction * 100)}%` } }),
      ]),
    ]),
  );

  const openLink = (itemKey, page, label) =>
    itemKey
      ? h(
          "a",
          {
            class: "zc-paper-link",
            role: "link",
            tabindex: "0",
            href: "#",
            "data-item-key": itemKey,
            "data-page": page ? String(page) : null,
            title: page ? t("open-page", { page }) : t("open"),
            on: {
              click: (e) => {
                e.preventDefault();
                handlers.onOpen?.({ itemKey, page });
              },
            },
          },
          [label],
        )
      : label;

  const coveredList = covered.length
    ? h(
        "ul",
        { class: "zc-covered" },
        covered.map((c) =>
          h("li", {}, [
            c.itemKey
              ? h("div", { class: "zc-covered-source" }, [
                  openLink(c.itemKey, c.page, truncate(c.title, 90)),
                  c.page
                    ? h("span", { class: "zc-covered-page" }, [t("page", { page: c.page })])
                    : null,
                ])
              : null,
            c.text ? h("div", { class: "zc-covered-quote" }, [truncate(c.text, 180)]) : null,
          ]),
        ),
      )
    : h("p", { class: "zc-muted" }, [t("nothing-found")]);

  const papers = model.papers.map(parsePaper);
  const card = h(
    "section",
    {
      class: "hitl-checkpoint-card",
      role: "group",
      "aria-labelledby": `${id}-title`,
      "data-interrupt-id": model.interruptId,
      "data-extension": String(model.extensionNumber),
    },
    [
      h("div", { class: "zc-card-head" }, [
        h("span", { class: "badge" }, [
          icon(doc, "flag", { size: 12 }),
          h("span", {}, [model.badge]),
        ]),
      ]),
      h("h3", { class: "zc-card-title", id: `${id}-title` }, [t("title")]),
      h("p", { class: "zc-card-trigger" }, [model.triggerText, " ", t("choose-prompt")]),
      h("div", { class: "zc-meters" }, [
        ...meters,
        h("div", { class: "zc-meter zc-meter-count" }, [
          h("div", { class: "zc-meter-text" }, [
            h("span", {}, [t("passages-found")]),
            h("span", { class: "zc-meter-value" }, [
              t("meter-count", { count: model.stats.evidenceCount }),
            ]),
          ]),
          papers.length
            ? h("div", { class: "zc-meter-sub" }, [t("from-papers", { count: papers.length })])
            : null,
        ]),
      ]),
      model.gaps.length
        ? h("div", { class: "zc-card-section zc-gaps-section" }, [
            h("h4", {}, [icon(doc, "alert", { size: 14 }), h("span", {}, [model.gapsHeading])]),
            h(
              "ul",
              { class: "gaps" },
              model.gaps.map((g) => h("li", {}, [g])),
            ),
          ])
        : null,
      h(
        "details",
        { class: "zc-card-section zc-covered-section", props: { open: covered.length <= 3 } },
        [
          h("summary", {}, [
            h("h4", {}, [
              icon(doc, "check", { size: 14 }),
              h("span", {}, [model.coveredHeading]),
              h("span", { class: "zc-count" }, [String(covered.length)]),
            ]),
          ]),
          coveredList,
        ],
      ),
      h("label", { class: "zc-guidance-label", for: `${id}-guidance` }, [
        `${t("guidance-label")} `,
        h("span", { class: "zc-muted" }, [t("guidance-optional")]),
      ]),
      guidance,
      h("div", { class: "zc-guidance-hint zc-muted", id: `${id}-guidance-hint` }, [
        model.primary.disabled
          ? t("guidance-kept")
          : t("guidance-shortcut", { shortcut: `${handlers.isMac ? "⌘" : "Ctrl"}+Enter` }),
      ]),
      h("div", { class: "actions" }, [grant, synth]),
      h("div", { class: "zc-card-foot" }, [
        h(
          "button",
          {
            type: "button",
            class: "zc-link-btn zc-discard",
            on: { click: () => handlers.onDiscard?.() },
            title: t("discard-title"),
          },
          [icon(doc, "rewind", { size: 14 }), h("span", {}, [t("discard")])],
        ),
      ]),
    ],
  );
  card.zcGuidance = guidance;
  return card;
}
