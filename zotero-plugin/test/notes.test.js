import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { parseHTML } from "linkedom";
import { citedSourcesFromText, withoutCitedSources } from "../src/citations.js";
import {
  DEFAULT_LABELS,
  NOTE_SCHEMA_VERSION,
  answerToMarkdown,
  answerToNoteHTML,
  answerToPlainText,
  citedItemKeys,
  linkResolver,
  mostCitedItemKey,
  openPdfURL,
  selectURL,
} from "../src/notes.js";
import { ANSWER, CITATIONS } from "./fixtures.js";

/** An answer as the synthesizer writes them: sections, lists, a table, code, its sources. */
const ANSWER_FULL = [
  "# How lme4 fits",
  "",
  'Lme4 fits with **bobyqa** first [1, p. 3], then falls back to *Nelder-Mead* [1, p. 7; 2, p. 5]. See <https://cran.r-project.org/package=lme4> and "quotes" & ampersands.',
  "",
  "## Steps",
  "",
  "1. Build the model `lFormula()` [1, p. 3]",
  "2. Optimise",
  "   - bobyqa",
  "   - Nelder-Mead [2]",
  "",
  "| Package | Optimizer |",
  "|---|---|",
  "| lme4 [1, p. 3] | bobyqa |",
  "| brms | <script>alert('x')</script> |",
  "",
  "```r",
  "lmer(y ~ x + (1 | g))",
  "# not a heading <b>",
  "```",
  "",
  "> A quoted remark [2, p. 6]",
  "",
  "---",
  "",
  "# Cited Sources",
  "[1] Bates et al. (2015). Fitting Linear Mixed-Effects Models Using lme4. Item ABCD2345, p. 3.",
  "[2] Bürkner (2017). brms: An R Package for Bayesian Multilevel Models. Item BRMS7890, p. 5.",
].join("\n");

const CHECKED = [
  {
    ...CITATIONS[0],
    quote: "Lme4 fits with **bobyqa** first.",
    verified: false,
    found_on_page: 4,
  },
  { ...CITATIONS[1], quote: "brms compiles a Stan model.", verified: true },
];

const TARGETS = new Map([
  ["ABCD2345", { key: "PDF23456", groupID: null, pdf: true }],
  ["BRMS7890", { key: "PDFB7890", groupID: null, pdf: true }],
]);

/** What the note editor keeps (zotero/note-editor src/core/schema), plus the container. */
const NOTE_TAGS = new Set([
  "div",
  "p",
  "h1",
  "h2",
  "h3",
  "h4",
  "h5",
  "h6",
  "ul",
  "ol",
  "li",
  "blockquote",
  "pre",
  "code",
  "strong",
  "em",
  "del",
  "a",
  "br",
  "hr",
  "table",
  "tbody",
  "tr",
  "th",
  "td",
]);

/** Parse a note's HTML, check it is one schema container of allowed elements, return it. */
function parseNote(html) {
  const { document } = parseHTML(`<!DOCTYPE html><html><head></head><body>${html}</body></html>`);
  const roots = [...document.body.children];
  assert.equal(roots.length, 1, "one container");
  const [root] = roots;
  assert.equal(root.tagName, "DIV");
  assert.equal(root.getAttribute("data-schema-version"), String(NOTE_SCHEMA_VERSION));
  for (const el of root.querySelectorAll("*")) {
    const tag = el.tagName.toLowerCase();
    assert.ok(NOTE_TAGS.has(tag), `<${tag}> is kept by the note editor`);
    for (const { name, value } of el.attributes) {
      if (tag === "a") assert.equal(name, "href");
      else if (tag === "ol") assert.equal(name, "start");
      else assert.fail(`<${tag} ${name}="${value}"> has no attributes in a note`);
    }
    if (tag === "a") assert.match(el.getAttribute("href"), /^(https?|zotero):\/\/\S+$/);
    // Containers whose schema content is blocks hold blocks (li may hold inline content).
    if (["blockquote", "td", "th"].includes(tag))
      for (const child of el.childNodes)
        if (child.nodeType === 3) assert.equal(child.textContent.trim(), "", `text in <${tag}>`);
  }
  return { document, root };
}

const links = (root) =>
  [...root.querySelectorAll("a")].map((a) => [a.textContent, a.getAttribute("href")]);

describe("openPdfURL and linkResolver", () => {
  test("the user's library and a group library; the page is 1-based and optional", () => {
    assert.equal(
      openPdfURL({ key: "PDF23456", page: 3 }),
      "zotero://open-pdf/library/items/PDF23456?page=3",
    );
    assert.equal(
      openPdfURL({ key: "PDF23456", page: 3, groupID: 4242 }),
      "zotero://open-pdf/groups/4242/items/PDF23456?page=3",
    );
    assert.equal(openPdfURL({ key: "PDF23456" }), "zotero://open-pdf/library/items/PDF23456");
    assert.equal(
      openPdfURL({ key: "PDF23456", page: 0 }),
      "zotero://open-pdf/library/items/PDF23456",
    );
  });

  test("malformed keys and group ids give no link", () => {
    assert.equal(openPdfURL({ key: "../../x" }), null);
    assert.equal(openPdfURL({ key: "pdf23456" }), null);
    assert.equal(openPdfURL({ key: "PDF23456", groupID: "1/../2" }), null);
    assert.equal(openPdfURL({ key: "PDF23456", groupID: 0 }), null);
  });

  test("linkResolver maps an item key to its attachment; not a PDF: no page", () => {
    const linkFor = linkResolver(
      new Map([
        ["ABCD2345", { key: "PDF23456", groupID: 7 }],
        ["EPUB2345", { key: "EPUBFILE", pdf: false }],
      ]),
    );
    assert.equal(
      linkFor({ item_key: "ABCD2345", page: 5 }),
      "zotero://open-pdf/groups/7/items/PDF23456?page=5",
    );
    assert.equal(
      linkFor({ item_key: "EPUB2345", page: 5 }),
      "zotero://open-pdf/library/items/EPUBFILE",
    );
    assert.equal(linkFor({ item_key: "NONE2345", page: 5 }), null);
  });

  test("linkResolver: a citation's attachment_key picks that PDF, an unknown one the best", () => {
    const linkFor = linkResolver(
      new Map([
        [
          "ABCD2345",
          { key: "PDF23456", attachments: new Map([["SUPP2345", { key: "SUPP2345" }]]) },
        ],
        // only the cited attachment was found (the item has no best attachment)
        ["BRMS7890", { attachments: new Map([["PDFB7890", { key: "PDFB7890", groupID: 3 }]]) }],
      ]),
    );
    const at = (item_key, attachment_key) => linkFor({ item_key, attachment_key, page: 2 });
    assert.equal(at("ABCD2345", "SUPP2345"), "zotero://open-pdf/library/items/SUPP2345?page=2");
    assert.equal(at("ABCD2345", "OTHER234"), "zotero://open-pdf/library/items/PDF23456?page=2");
    assert.equal(at("ABCD2345", ""), "zotero://open-pdf/library/items/PDF23456?page=2");
    assert.equal(at("BRMS7890", "PDFB7890"), "zotero://open-pdf/groups/3/items/PDFB7890?page=2");
    assert.equal(at("BRMS7890", ""), null);
  });

  test("what the user wrote links to itself: an annotation in its PDF, a note selected", () => {
    const linkFor = linkResolver(
      new Map([
        [
          "ABCD2345",
          {
            key: "PDF23456",
            groupID: 7,
            attachments: new Map([["PDF23456", { key: "PDF23456", groupID: 7 }]]),
          },
        ],
        ["NOPD2345", { groupID: null, attachments: new Map() }], // an item with notes only
      ]),
    );
    const highlight = {
      item_key: "ABCD2345",
      attachment_key: "PDF23456",
      page: 24,
      origin: "highlight",
      source_key: "ANNO2345",
    };
    assert.equal(
      linkFor(highlight),
      "zotero://open-pdf/groups/7/items/PDF23456?page=24&annotation=ANNO2345",
    );
    assert.equal(
      linkFor({ item_key: "ABCD2345", page: 0, origin: "note", source_key: "NOTE2345" }),
      "zotero://select/groups/7/items/NOTE2345",
    );
    assert.equal(
      linkFor({ item_key: "NOPD2345", page: 0, origin: "note", source_key: "NOTE6789" }),
      "zotero://select/library/items/NOTE6789",
    );
    assert.equal(selectURL({ key: "../x" }), null);
    // Through a note's outputs: the marker of a note passes its origin and key.
    const seen = [];
    answerToNoteHTML({
      answer: '"I should compare the optimizers." [2]',
      citations: [{ n: 2, item_key: "NOPD2345", page: 0, origin: "note", source_key: "NOTE6789" }],
      linkFor: (c) => {
        seen.push(c);
        return linkFor(c);
      },
    });
    assert.deepEqual(seen[0], {
      n: 2,
      item_key: "NOPD2345",
      attachment_key: "",
      page: null,
      origin: "note",
      source_key: "NOTE6789",
    });
  });

  test("each marker and source passes its attachment_key to linkFor", () => {
    const seen = [];
    answerToNoteHTML({
      answer: "A [1, p. 3].",
      citations: [{ n: 1, item_key: "ABCD2345", attachment_key: "SUPP2345", page: 3 }],
      linkFor: (c) => {
        seen.push(c);
        return `zotero://open-pdf/library/items/${c.attachment_key}?page=${c.page}`;
      },
    });
    assert.deepEqual(seen, [
      { n: 1, item_key: "ABCD2345", attachment_key: "SUPP2345", page: 3 },
      { n: 1, item_key: "ABCD2345", attachment_key: "SUPP2345", page: 3 },
    ]);
  });
});

describe("answerToNoteHTML", () => {
  const html = answerToNoteHTML({
    question: "How does lmer choose its optimizer?",
    answer: ANSWER_FULL,
    citations: CHECKED,
    linkFor: linkResolver(TARGETS),
  });
  const { root } = parseNote(html);

  test("the question is the heading; the answer's headings go one level down", () => {
    const headings = [...root.querySelectorAll("h1,h2,h3,h4,h5,h6")].map((h) => [
      h.tagName,
      h.textContent,
    ]);
    assert.deepEqual(headings, [
      ["H1", "How does lmer choose its optimizer?"],
      ["H2", "How lme4 fits"],
      ["H3", "Steps"],
      ["H2", "Sources"],
    ]);
    assert.equal(root.firstElementChild.tagName, "H1", "Zotero titles the note by its first line");
    assert.ok(!root.textContent.includes("Cited Sources"), "the answer's own list is replaced");
  });

  test("each marker opens the attachment at its page (the quote's page when it moved)", () => {
    const first = root.querySelector("p");
    assert.deepEqual(links(first), [
      // [1, p. 3]'s quote is on p. 4 (verified false, found_on_page 4)
      ["[1, p. 3]", "zotero://open-pdf/library/items/PDF23456?page=4"],
      // a marker naming another page of the same source opens that page
      ["1, p. 7", "zotero://open-pdf/library/items/PDF23456?page=7"],
      ["2, p. 5", "zotero://open-pdf/library/items/PDFB7890?page=5"],
      ["https://cran.r-project.org/package=lme4", "https://cran.r-project.org/package=lme4"],
    ]);
    assert.equal(
      first.textContent,
      'Lme4 fits with bobyqa first [1, p. 3], then falls back to Nelder-Mead [1, p. 7; 2, p. 5]. See https://cran.r-project.org/package=lme4 and "quotes" & ampersands.',
    );
    assert.equal(first.querySelector("strong").textContent, "bobyqa");
    assert.equal(first.querySelector("em").textContent, "Nelder-Mead");
  });

  test("lists, a table, code and a quote in the editor's shapes", () => {
    const ol = root.querySelector("ol");
    const items = [...ol.children];
    assert.equal(items.length, 2);
    assert.equal(items[0].querySelector("code").textContent, "lFormula()");
    assert.equal(items[0].firstElementChild.tagName, "CODE", "one paragraph: written without <p>");
    assert.deepEqual(
      [...items[1].children].map((c) => c.tagName),
      ["P", "UL"],
      "text beside a nested list is a paragraph",
    );
    assert.deepEqual(links(items[1].querySelector("ul")), [
      ["[2]", "zotero://open-pdf/library/items/PDFB7890?page=5"],
    ]);

    const table = root.querySelector("table");
    const rows = [...table.querySelectorAll("tr")].map((tr) =>
      [...tr.children].map((c) => [c.tagName, c.textContent]),
    );
    assert.deepEqual(rows, [
      [
        ["TH", "Package"],
        ["TH", "Optimizer"],
      ],
      [
        ["TD", "lme4 [1, p. 3]"],
        ["TD", "bobyqa"],
      ],
      [
        ["TD", "brms"],
        ["TD", "<script>alert('x')</script>"],
      ],
    ]);
    assert.equal(table.firstElementChild.tagName, "TBODY");
    assert.equal(table.querySelector("td").firstElementChild.tagName, "P", "cells hold blocks");

    const pre = root.querySelector("pre");
    assert.equal(pre.textContent, "lmer(y ~ x + (1 | g))\n# not a heading <b>");
    assert.equal(pre.children.length, 0, "a code block is a bare <pre>");
    assert.deepEqual(links(root.querySelector("blockquote")), [
      ["[2, p. 6]", "zotero://open-pdf/library/items/PDFB7890?page=6"],
    ]);
    assert.ok(root.querySelector("hr"));
  });

  test("the sources: the answer's own lines, linked, with the quote and its check", () => {
    const list = root.lastElementChild;
    assert.equal(list.tagName, "UL");
    const [one, two] = [...list.children];
    assert.equal(
      one.textContent,
      "[1] Bates et al. (2015). Fitting Linear Mixed-Effects Models Using lme4. Item ABCD2345, p. 3." +
        " \u201cLme4 fits with bobyqa first.\u201d (the quote is on p. 4)",
    );
    assert.equal(
      one.querySelector("a").getAttribute("href"),
      "zotero://open-pdf/library/items/PDF23456?page=4",
    );
    assert.equal(one.querySelector("em").textContent, "\u201cLme4 fits with bobyqa first.\u201d");
    assert.equal(
      two.textContent,
      "[2] Bürkner (2017). brms: An R Package for Bayesian Multilevel Models. Item BRMS7890, p. 5." +
        " \u201cbrms compiles a Stan model.\u201d",
    );
  });

  test("without the answer's list: title, key and page of the done event", () => {
    const { root: r } = parseNote(
      answerToNoteHTML({
        question: "q",
        answer: "Only [1].",
        citations: [{ n: 1, item_key: "ABCD2345", title: "lme4?", page: 3, verified: false }],
      }),
    );
    assert.equal(
      r.querySelector("ul li").textContent,
      "[1] lme4? Item ABCD2345, p. 3. (the quote was not found on the cited page)",
    );
    assert.equal(r.querySelectorAll("a").length, 0, "no resolver, no links");
  });

  test("everything is escaped: HTML in the question, the answer and the titles stays text", () => {
    const evil = '<script>alert("x")</script> <img src=x onerror="alert(1)"> \' " &amp;';
    const out = answerToNoteHTML({
      question: evil,
      title: `Title ${evil}`,
      answer: `${evil} [1, p. 2]\n\n[click](javascript:alert(1)) <a href="x">a</a>`,
      citations: [{ n: 1, item_key: "ABCD2345", title: evil, page: 2, quote: evil }],
      linkFor: () => 'zotero://open-pdf/library/items/PDF23456?page=2" onclick="alert(1)',
    });
    const { root: r, document } = parseNote(out);
    assert.equal(document.querySelectorAll("script, img").length, 0);
    assert.equal(r.querySelectorAll("a").length, 0, "an unsafe link target is dropped");
    assert.equal(r.querySelector("h1").textContent, `Title ${evil}`);
    assert.equal(r.querySelector("h2").textContent, evil);
    assert.ok(r.querySelector("p").textContent.startsWith(evil));
    assert.ok(r.textContent.includes("[click](javascript:alert(1))"));
    assert.ok(!out.includes("<script"));
    assert.ok(out.includes("&lt;script&gt;"));
  });

  test("a title puts the question one level under it; labels are the pane's words", () => {
    const { root: r } = parseNote(
      answerToNoteHTML({
        title: "lmer optimizers",
        question: "Which optimizer?\nAnd why?",
        answer: ANSWER,
        citations: CITATIONS,
        labels: { sources: "Quellen" },
      }),
    );
    const headings = [...r.querySelectorAll("h1,h2,h3")].map((h) => [h.tagName, h.innerHTML]);
    assert.deepEqual(headings, [
      ["H1", "lmer optimizers"],
      ["H2", "Which optimizer?<br>And why?"],
      ["H3", "Quellen"],
    ]);
    assert.equal(DEFAULT_LABELS.sources, "Sources");
  });

  test("a group library's links", () => {
    const out = answerToNoteHTML({
      question: "q",
      answer: ANSWER,
      citations: CITATIONS,
      linkFor: linkResolver(new Map([["BRMS7890", { key: "PDFB7890", groupID: 4242 }]])),
    });
    const { root: r } = parseNote(out);
    assert.deepEqual(links(r), [
      ["[2, p. 5]", "zotero://open-pdf/groups/4242/items/PDFB7890?page=5"],
      [
        "Bürkner (2017). brms. Item BRMS7890, p. 5.",
        "zotero://open-pdf/groups/4242/items/PDFB7890?page=5",
      ],
    ]);
    assert.equal(r.querySelector("p").textContent, "Lme4 fits with bobyqa first [1, p. 3].");
  });

  test("an empty answer still makes a valid note", () => {
    const { root: r } = parseNote(answerToNoteHTML({ question: "q" }));
    assert.equal(r.innerHTML.trim(), "<h1>q</h1>");
  });
});

describe("answerToMarkdown", () => {
  const md = answerToMarkdown({
    question: "How does lmer choose its optimizer?",
    answer: ANSWER_FULL,
    citations: CHECKED,
    linkFor: linkResolver(TARGETS),
  });

  test("the answer as written, markers kept, headings under the question's", () => {
    const lines = md.split("\n");
    assert.equal(lines[0], "# How does lmer choose its optimizer?");
    assert.ok(lines.includes("## How lme4 fits"));
    assert.ok(lines.includes("### Steps"));
    assert.ok(lines.includes("# not a heading <b>"), "code is left alone");
    assert.ok(md.includes("Lme4 fits with **bobyqa** first [1, p. 3], then falls back"));
    assert.ok(md.includes("| lme4 [1, p. 3] | bobyqa |"));
    assert.ok(!md.includes("Cited Sources"));
  });

  test("sources linked to the PDFs; they read back as citations", () => {
    const tail = md.slice(md.indexOf("## Sources"));
    assert.equal(
      tail,
      [
        "## Sources",
        "",
        "- [1] [Bates et al. (2015). Fitting Linear Mixed-Effects Models Using lme4. Item ABCD2345, p. 3.](zotero://open-pdf/library/items/PDF23456?page=4)" +
          " \u201cLme4 fits with **bobyqa** first.\u201d (the quote is on p. 4)",
        "- [2] [Bürkner (2017). brms: An R Package for Bayesian Multilevel Models. Item BRMS7890, p. 5.](zotero://open-pdf/library/items/PDFB7890?page=5)" +
          " \u201cbrms compiles a Stan model.\u201d",
      ].join("\n"),
    );
    assert.deepEqual(
      citedSourcesFromText(md).map((c) => [c.n, c.item_key, c.page]),
      [
        [1, "ABCD2345", 3],
        [2, "BRMS7890", 5],
      ],
    );
  });

  test("without a resolver, no links; special characters in titles are escaped", () => {
    const out = answerToMarkdown({
      answer: "A [1].",
      citations: [{ n: 1, item_key: "ABCD2345", title: "p_value [sic] *and* more", page: 2 }],
    });
    assert.equal(
      out,
      "A [1].\n\n# Sources\n\n- [1] p\\_value \\[sic\\] \\*and\\* more. Item ABCD2345, p. 2.",
    );
  });
  test("a paper's shared source line names each passage's own page when listed one by one", () => {
    const out = answerToMarkdown({
      answer:
        '"a" [1, p. 10] "b" [2, p. 9].\n\n# Cited Sources\n' +
        "[1], [2] Hyndman (2008). Forecasting. Item FCST2345, pp. 9, 10.",
      citations: [
        { n: 1, item_key: "FCST2345", title: "Forecasting", page: 10 },
        { n: 2, item_key: "FCST2345", title: "Forecasting", page: 9 },
      ],
    });
    const tail = out.slice(out.indexOf("# Sources"));
    assert.equal(
      tail,
      "# Sources\n\n- [1] Hyndman (2008). Forecasting. Item FCST2345, p. 10.\n" +
        "- [2] Hyndman (2008). Forecasting. Item FCST2345, p. 9.",
    );
  });
});

describe("answerToPlainText", () => {
  const text = answerToPlainText({
    question: "How does lmer choose its optimizer?",
    answer: ANSWER_FULL,
    citations: CHECKED,
  });

  test("no Markdown left; markers, lists, table, code readable", () => {
    assert.ok(!/\*\*|`|\]\(|^#/m.test(text), text);
    assert.ok(text.startsWith("How does lmer choose its optimizer?\n\nHow lme4 fits\n\n"));
    assert.ok(
      text.includes(
        "Lme4 fits with bobyqa first [1, p. 3], then falls back to Nelder-Mead [1, p. 7; 2, p. 5]." +
          " See https://cran.r-project.org/package=lme4 and",
      ),
    );
    assert.ok(
      text.includes(
        "1. Build the model lFormula() [1, p. 3]\n2. Optimise\n   \u2022 bobyqa\n   \u2022 Nelder-Mead [2]",
      ),
    );
    assert.ok(
      text.includes(
        "Package        | Optimizer\nlme4 [1, p. 3] | bobyqa\nbrms           | <script>alert('x')</script>",
      ),
    );
    assert.ok(text.includes("    lmer(y ~ x + (1 | g))\n    # not a heading <b>"));
    assert.ok(text.includes("> A quoted remark [2, p. 6]"));
  });

  test("the sources: title, key, page, quote", () => {
    assert.ok(
      text.endsWith(
        "Sources\n\n" +
          "[1] Bates et al. (2015). Fitting Linear Mixed-Effects Models Using lme4. Item ABCD2345, p. 3." +
          " \u201cLme4 fits with bobyqa first.\u201d (the quote is on p. 4)\n" +
          "[2] Bürkner (2017). brms: An R Package for Bayesian Multilevel Models. Item BRMS7890, p. 5." +
          " \u201cbrms compiles a Stan model.\u201d",
      ),
      text,
    );
  });

  test("links keep their target", () => {
    assert.equal(
      answerToPlainText({ answer: "See [the docs](https://example.org/docs)." }),
      "See the docs (https://example.org/docs).",
    );
  });
});

describe("mostCitedItemKey", () => {
  test("the item cited most often in the markers", () => {
    assert.equal(mostCitedItemKey(CHECKED, ANSWER_FULL), "ABCD2345"); // 1 x4, 2 x3
    assert.equal(
      mostCitedItemKey(CITATIONS, "[2, p. 5] and [1, p. 3]; again [2] and [1, p. 3; 2, p. 6]."),
      "BRMS7890",
    );
  });

  test("ties go to the first cited; the sources list is not counted", () => {
    assert.equal(mostCitedItemKey(CITATIONS, "[2] then [1]."), "BRMS7890");
    assert.equal(mostCitedItemKey(CITATIONS, ANSWER), "ABCD2345");
    assert.deepEqual(citedItemKeys(CITATIONS, ANSWER), ["ABCD2345", "BRMS7890"]);
  });

  test("no markers, or markers of unknown sources: null", () => {
    assert.equal(mostCitedItemKey(CITATIONS, "No citations here."), null);
    assert.equal(mostCitedItemKey([], "Unknown [7, p. 2]."), null);
    assert.equal(mostCitedItemKey(CITATIONS, "```\n[1, p. 3]\n```"), null, "code is not cited");
  });

  test("a reloaded chat: the sources come from the answer's own list", () => {
    assert.equal(
      mostCitedItemKey([], "x [2, p. 5] y [2].\n\n" + ANSWER.slice(ANSWER.indexOf("#"))),
      "BRMS7890",
    );
  });
});

describe("withoutCitedSources", () => {
  test("drops the section up to the next heading", () => {
    assert.equal(
      withoutCitedSources(ANSWER),
      "Lme4 fits with **bobyqa** first [1, p. 3].\n\nbrms compiles a Stan model [2, p. 5].",
    );
    assert.equal(
      withoutCitedSources("a\n\n## References\n[1] x. Item ABCD2345.\n\n## Next\nb"),
      "a\n\n## Next\nb",
    );
    assert.equal(withoutCitedSources("no list"), "no list");
  });
});
