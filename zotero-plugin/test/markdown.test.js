import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { citationIndex, citedSourcesFromText, parseMarker } from "../src/citations.js";
import {
  CITATION_CLASS,
  UNVERIFIED_CLASS,
  citationAttrs,
  parseMarkdown,
  renderMarkdown,
  safeHref,
  TAGS,
  textContent,
} from "../src/markdown.js";
import { ANSWER, CITATIONS } from "./fixtures.js";

/** Compact view of a tree: ["tag", attrs?, ...children] with strings for text. */
function view(nodes) {
  return nodes.map((n) => {
    if (n.type === "text") return n.text;
    if (n.type === "citation") return ["cite", { n: n.n, key: n.itemKey, page: n.page }, n.text];
    const out = [n.tag];
    if (Object.keys(n.attrs).length) out.push(n.attrs);
    out.push(...view(n.children));
    return out;
  });
}
const md = (text, options) => view(parseMarkdown(text, options));

/** Every node of a rendered tree (through the default h). */
function* walk(nodes) {
  for (const n of nodes) {
    if (typeof n === "string") continue;
    yield n;
    yield* walk(n.children);
  }
}

const ALLOWED_ATTRS = new Set([
  "href",
  "class",
  "start",
  "role",
  "tabindex",
  "title",
  "data-n",
  "data-item-key",
  "data-page",
]);

/** The invariants that keep rendering safe, checked on any output. */
function assertSafe(text, citations = CITATIONS) {
  const rendered = renderMarkdown(text, { citations });
  for (const node of walk(rendered)) {
    assert.ok(TAGS.includes(node.tag), `tag ${node.tag} is allowed`);
    for (const [k, v] of Object.entries(node.attrs)) {
      assert.ok(ALLOWED_ATTRS.has(k), `attribute ${k} is allowed`);
      assert.equal(typeof v, "string");
      if (k === "href") assert.match(v, /^(https?:\/\/[^\s]+|zotero:[^\s]+)$/);
      if (k === "class") assert.match(v, /^[A-Za-z0-9_ +-]+$/);
    }
  }
  return rendered;
}

describe("blocks", () => {
  test("paragraphs and line breaks", () => {
    assert.deepEqual(md("one\ntwo\n\nthree"), [
      ["p", "one", ["br"], "two"],
      ["p", "three"],
    ]);
  });

  test("headings", () => {
    assert.deepEqual(md("# Title\n## Sub ##\n###### six\n####### seven"), [
      ["h1", "Title"],
      ["h2", "Sub"],
      ["h6", "six"],
      ["p", "####### seven"],
    ]);
  });

  test("bullet, numbered and nested lists", () => {
    assert.deepEqual(md("- a\n- b\n  - b1\n  - b2\n- c"), [
      ["ul", ["li", "a"], ["li", "b", ["ul", ["li", "b1"], ["li", "b2"]]], ["li", "c"]],
    ]);
    assert.deepEqual(md("3. three\n4. four"), [
      ["ol", { start: "3" }, ["li", "three"], ["li", "four"]],
    ]);
    assert.deepEqual(md("1) x\n2) y"), [["ol", ["li", "x"], ["li", "y"]]]);
  });

  test("loose lists keep paragraphs; a different bullet starts a new list", () => {
    assert.deepEqual(md("- a\n\n- b"), [["ul", ["li", ["p", "a"]], ["li", ["p", "b"]]]]);
    assert.deepEqual(md("- a\n+ b"), [
      ["ul", ["li", "a"]],
      ["ul", ["li", "b"]],
    ]);
  });

  test("a list item continues on a lazy line", () => {
    assert.deepEqual(md("- first line\nsecond line"), [
      ["ul", ["li", "first line", ["br"], "second line"]],
    ]);
  });

  test("fenced code blocks keep their text verbatim (also unclosed while streaming)", () => {
    assert.deepEqual(md("```r\nlmer(y ~ x + (1|g))\n# not a heading\n```"), [
      ["pre", ["code", { class: "language-r" }, "lmer(y ~ x + (1|g))\n# not a heading"]],
    ]);
    assert.deepEqual(md("~~~\n**not bold**"), [["pre", ["code", "**not bold**"]]]);
    assert.deepEqual(md('```r" onclick="x\ncode\n```'), [
      ["pre", ["code", { class: "language-r" }, "code"]],
    ]);
  });

  test("block quotes, rules and tables", () => {
    assert.deepEqual(md("> quoted *text*\n> more"), [
      ["blockquote", ["p", "quoted ", ["em", "text"], ["br"], "more"]],
    ]);
    assert.deepEqual(md("a\n\n---\n\nb"), [["p", "a"], ["hr"], ["p", "b"]]);
    assert.deepEqual(md("| Paper | Year |\n|---|:-:|\n| lme4 | 2015 |\n| brms \\| Stan | 2017 |"), [
      [
        "table",
        ["thead", ["tr", ["th", "Paper"], ["th", "Year"]]],
        [
          "tbody",
          ["tr", ["td", "lme4"], ["td", "2015"]],
          ["tr", ["td", "brms | Stan"], ["td", "2017"]],
        ],
      ],
    ]);
  });
});

describe("inline", () => {
  test("bold, italic, both, strikethrough, code", () => {
    assert.deepEqual(md("**b** *i* __B__ _I_ ***bi*** ~~d~~ `c *x*`"), [
      [
        "p",
        ["strong", "b"],
        " ",
        ["em", "i"],
        " ",
        ["strong", "B"],
        " ",
        ["em", "I"],
        " ",
        ["strong", ["em", "bi"]],
        " ",
        ["del", "d"],
        " ",
        ["code", "c *x*"],
      ],
    ]);
  });

  test("nested emphasis and things that are not emphasis", () => {
    assert.deepEqual(md("**bold *and italic* here**"), [
      ["p", ["strong", "bold ", ["em", "and italic"], " here"]],
    ]);
    assert.deepEqual(md("2 * 3 * 4 and snake_case_name and ** x"), [
      ["p", "2 * 3 * 4 and snake_case_name and ** x"],
    ]);
    assert.deepEqual(md("**unclosed bold"), [["p", "**unclosed bold"]]);
    assert.deepEqual(md("\\*escaped\\*"), [["p", "*escaped*"]]);
  });

  test("links: http, https and zotero only", () => {
    assert.deepEqual(md("[lme4](https://cran.r-project.org/package=lme4)"), [
      ["p", ["a", { href: "https://cran.r-project.org/package=lme4" }, "lme4"]],
    ]);
    assert.deepEqual(md("[item](zotero://select/library/items/ABCD2345)"), [
      ["p", ["a", { href: "zotero://select/library/items/ABCD2345" }, "item"]],
    ]);
    assert.deepEqual(md("see https://example.org/a_(b). and <http://x.org/>"), [
      [
        "p",
        "see ",
        ["a", { href: "https://example.org/a_(b)" }, "https://example.org/a_(b)"],
        ". and ",
        ["a", { href: "http://x.org/" }, "http://x.org/"],
      ],
    ]);
    assert.deepEqual(md("[file](file:///etc/passwd) [ftp](ftp://x.org)"), [
      ["p", "[file](file:///etc/passwd) [ftp](ftp://x.org)"],
    ]);
  });

  test("safeHref", () => {
    assert.equal(safeHref("https://a.org/x?y=1#z"), "https://a.org/x?y=1#z");
    assert.equal(safeHref(" HTTP://A.org "), "http://a.org/");
    for (const bad of [
      "javascript:alert(1)",
      "JaVaScRiPt:alert(1)",
      "java\nscript:alert(1)",
      "data:text/html,<script>",
      "vbscript:x",
      "//evil.org",
      "/relative",
      'https://a.org/"onmouseover=x',
      "",
      null,
    ]) {
      assert.equal(safeHref(bad), null, String(bad));
    }
  });
});

describe("citations", () => {
  test("a citation of the user's own highlight or note says so and names it", () => {
    const highlight = citationAttrs({
      n: 2,
      itemKey: "ABCD2345",
      attachmentKey: "PDF23456",
      page: 24,
      title: "lme4",
      origin: "highlight",
      sourceKey: "ANNO2345",
    });
    assert.equal(highlight["data-origin"], "highlight");
    assert.equal(highlight["data-source-key"], "ANNO2345");
    assert.equal(highlight.title, "Your highlight in lme4, p. 24");
    const note = citationAttrs({
      n: 3,
      itemKey: "ABCD2345",
      page: null,
      title: "lme4",
      origin: "note",
      sourceKey: "NOTE2345",
    });
    assert.equal(note.title, "Your note in lme4");
    assert.equal(note["data-page"], undefined);
    // An origin without a key (or an unknown one) is the paper's text.
    const plain = citationAttrs({ n: 1, itemKey: "ABCD2345", page: 2, title: "t", origin: "x" });
    assert.equal(plain["data-origin"], undefined);
  });

  test("a verified citation carries its quote; an unverified one is marked and says why", () => {
    const citations = [
      {
        n: 1,
        item_key: "ABCD2345",
        title: "lme4",
        page: 24,
        quote: "BOBYQA is the default.",
        verified: true,
      },
      {
        n: 2,
        item_key: "EFGH2345",
        title: "brms",
        page: 3,
        quote: "Stan samples it.",
        verified: false,
        found_on_page: 4,
      },
      { n: 3, item_key: "JKLM2345", title: "glmnet", page: 5, quote: "Paths.", verified: false },
    ];
    const links = renderMarkdown("A [1, p. 24] B [2, p. 3] C [3, p. 5]", {
      citations,
    })[0].children.filter((c) => typeof c !== "string");
    const [one, two, three] = links.map((l) => l.attrs);
    assert.equal(one.class, CITATION_CLASS);
    assert.equal(one["data-verified"], "true");
    assert.equal(one["data-quote"], "BOBYQA is the default.");
    assert.equal(two.class, `${CITATION_CLASS} ${UNVERIFIED_CLASS}`);
    assert.equal(two["data-page"], "4", "opens where the quote is");
    assert.match(two.title, /the quote is on p\. 4/);
    assert.match(three.title, /not found on this page/);
    assert.equal(three["data-page"], "5");
    // A reloaded chat (no check on record) is neither verified nor flagged.
    const plain = citationAttrs({ n: 1, itemKey: "ABCD2345", page: 2, title: "t" });
    assert.equal(plain.class, CITATION_CLASS);
    assert.equal(plain["data-verified"], undefined);
  });

  test("two pages of one evidence block keep their own checks, and its PDF", () => {
    const citations = [
      { n: 1, item_key: "ABCD2345", attachment_key: "SUPP2345", page: 3, quote: "Three." },
      { n: 1, item_key: "ABCD2345", attachment_key: "SUPP2345", page: 4, quote: "Four." },
    ];
    citations[0].verified = true;
    citations[1].verified = false;
    const links = renderMarkdown("A [1, p. 3] B [1, p. 4]", { citations })[0].children.filter(
      (c) => typeof c !== "string",
    );
    const [three, four] = links.map((l) => l.attrs);
    assert.equal(three["data-quote"], "Three.");
    assert.equal(three["data-verified"], "true");
    assert.equal(four["data-quote"], "Four.");
    assert.equal(four["data-verified"], "false");
    assert.equal(three["data-attachment-key"], "SUPP2345");
    assert.equal(four["data-attachment-key"], "SUPP2345");
  });

  test("markers become citation nodes with item key and page", () => {
    assert.deepEqual(
      md("Bobyqa first [1, p. 3], Stan [2, p. 7] and [2].", { citations: CITATIONS }),
      [
        [
          "p",
          "Bobyqa first ",
          ["cite", { n: 1, key: "ABCD2345", page: 3 }, "[1, p. 3]"],
          ", Stan ",
          ["cite", { n: 2, key: "BRMS7890", page: 7 }, "[2, p. 7]"],
          " and ",
          ["cite", { n: 2, key: "BRMS7890", page: 5 }, "[2]"],
          ".",
        ],
      ],
    );
  });

  test("page ranges and several references in one bracket", () => {
    assert.deepEqual(md("[1, pp. 3-5; 2, p. 9; 7, p. 1]", { citations: CITATIONS }), [
      [
        "p",
        "[",
        ["cite", { n: 1, key: "ABCD2345", page: 3 }, "1, pp. 3-5"],
        "; ",
        ["cite", { n: 2, key: "BRMS7890", page: 9 }, "2, p. 9"],
        "; ",
        "7, p. 1",
        "]",
      ],
    ]);
  });

  test("an unknown n stays text, and so do non-citation brackets", () => {
    assert.deepEqual(md("[9, p. 2] [see above] [1](https://x.org)", { citations: CITATIONS }), [
      ["p", "[9, p. 2] [see above] ", ["a", { href: "https://x.org/" }, "1"]],
    ]);
    assert.deepEqual(md("[1, p. 3]"), [["p", "[1, p. 3]"]], "no citations known: text");
  });

  test("citations are rebuilt from # Cited Sources when done.citations is absent", () => {
    const tree = parseMarkdown(ANSWER);
    const cites = [...walkCitations(tree)];
    assert.deepEqual(
      cites.map((c) => [c.n, c.itemKey, c.page]),
      [
        [1, "ABCD2345", 3],
        [2, "BRMS7890", 5],
        // the "[n]" that open the Cited Sources lines link too
        [1, "ABCD2345", 3],
        [2, "BRMS7890", 5],
      ],
    );
  });

  test("rendered citations carry the data the pane needs", () => {
    const [p] = renderMarkdown("See [1, p. 4].", { citations: CITATIONS });
    const a = p.children[1];
    assert.equal(a.tag, "a");
    assert.deepEqual(a.attrs, {
      class: CITATION_CLASS,
      role: "link",
      tabindex: "0",
      "data-n": "1",
      "data-item-key": "ABCD2345",
      "data-page": "4",
      title: "Fitting Linear Mixed-Effects Models Using lme4, p. 4",
    });
    assert.deepEqual(a.children, ["[1, p. 4]"]);
  });

  test("parseMarker, citedSourcesFromText, citationIndex", () => {
    assert.deepEqual(parseMarker("3, p. 12"), [
      { n: 3, page: 12, pageEnd: null, text: "3, p. 12" },
    ]);
    assert.deepEqual(parseMarker("3, pp. 12\u201314"), [
      { n: 3, page: 12, pageEnd: 14, text: "3, pp. 12\u201314" },
    ]);
    assert.equal(parseMarker("see 3"), null);
    assert.equal(parseMarker("1234"), null);
    const text =
      "Body [1].\n\n## Cited Sources\n- [1] Bates (2015). *lme4*. Item key: `ABCD2345`, pp. 3-4.\n" +
      "[2] Bürkner (2017), brms, item BRMS7890\n[3] No key here.\n\n# Next section\n[4] Item ZZZZ9999, p. 1.";
    assert.deepEqual(citedSourcesFromText(text), [
      {
        n: 1,
        item_key: "ABCD2345",
        title: "Bates (2015). lme4. Item key: ABCD2345, pp. 3-4.",
        page: 3,
      },
      { n: 2, item_key: "BRMS7890", title: "Bürkner (2017), brms, item BRMS7890", page: null },
    ]);
    const index = citationIndex(
      [{ n: 2, item_key: "DONE2222", title: "from done", page: 8 }],
      text,
    );
    assert.equal(index.get(1).item_key, "ABCD2345");
    assert.equal(index.get(2).item_key, "DONE2222", "done.citations win over the parsed section");
    assert.equal(index.has(4), false);
  });

  test("a paper cited as several passages is one source line, and each number resolves", () => {
    const text =
      'Body "a" [1, p. 10] "b" [2, p. 9] "c" [3, p. 4].\n\n# Cited Sources\n' +
      "[1], [2] Hyndman (2008). Automatic forecasting. Item FCST2345, pp. 9, 10.\n" +
      "[3] Doe (2020). Other. Item OTHR2345, p. 4.";
    assert.deepEqual(
      citedSourcesFromText(text).map((c) => [c.n, c.item_key, c.page]),
      [
        [1, "FCST2345", null],
        [2, "FCST2345", null],
        [3, "OTHR2345", 4],
      ],
    );
    // Reloaded without the done event, the body's markers keep their own pages.
    const cites = [...walkCitations(parseMarkdown(text))].map((c) => [c.n, c.itemKey, c.page]);
    assert.deepEqual(cites.slice(0, 3), [
      [1, "FCST2345", 10],
      [2, "FCST2345", 9],
      [3, "OTHR2345", 4],
    ]);
    const oneNumber = "# Cited Sources\n[4], [5] Doe (2020). Same page. Item SAME2345, p. 7.";
    assert.deepEqual(
      citedSourcesFromText(oneNumber).map((c) => [c.n, c.page]),
      [
        [4, 7],
        [5, 7],
      ],
    );
  });
});

function* walkCitations(nodes) {
  for (const n of nodes) {
    if (n.type === "citation") yield n;
    if (n.children) yield* walkCitations(n.children);
  }
}

describe("injection attempts come out as text", () => {
  const attacks = [
    "<script>alert(1)</script>",
    '<img src=x onerror="alert(1)">',
    '<a href="javascript:alert(1)">x</a>',
    "[click](javascript:alert(1))",
    "[click](JAVASCRIPT:alert(1))",
    "[click]( javascript:alert(1) )",
    "[click](javascript&colon;alert(1))",
    "[x](data:text/html;base64,PHNjcmlwdD4=)",
    "<javascript:alert(1)>",
    '[x](https://ok.org "title" onclick="y")',
    "![img](https://x.org/a.png)",
    "<iframe src=https://evil.org></iframe>",
    "**<b>bold</b>**",
    "`<script>`",
    "```html\n<script>alert(1)</script>\n```",
    "<style>body{display:none}</style>",
    "&lt;script&gt;",
    "[1, p. 3]<script>",
    "- <svg onload=alert(1)>",
    "> <math><mi xlink:href=javascript:alert(1)>",
    "| <b> | x |\n|---|---|\n| <i> | y |",
  ];

  for (const attack of attacks) {
    test(JSON.stringify(attack), () => {
      const rendered = assertSafe(attack);
      // the text is still all there for the reader: nothing was silently swallowed,
      // except Markdown syntax itself
      const shown = textContent(parseMarkdown(attack, { citations: CITATIONS }));
      for (const word of ["script", "onerror", "javascript", "iframe", "onload", "style"]) {
        if (attack.toLowerCase().includes(word)) {
          assert.ok(shown.toLowerCase().includes(word), `${word} shown as text`);
        }
      }
      assert.ok(rendered.length >= 1);
    });
  }

  test("HTML is never turned into elements", () => {
    assert.deepEqual(md("<script>alert(1)</script>"), [["p", "<script>alert(1)</script>"]]);
    assert.deepEqual(md('<img src=x onerror="alert(1)">'), [
      ["p", '<img src=x onerror="alert(1)">'],
    ]);
    assert.deepEqual(md("[click](javascript:alert(1))"), [["p", "[click](javascript:alert(1))"]]);
    assert.deepEqual(md("**<b>x</b>**"), [["p", ["strong", "<b>x</b>"]]]);
  });

  test("an injected h only ever sees allowed tags, and text as plain strings", () => {
    const seen = [];
    const h = (tag, attrs, children) => {
      seen.push(tag);
      for (const c of children)
        assert.ok(typeof c === "string" || (c && c.el), "children are strings or h's results");
      return { el: tag };
    };
    renderMarkdown(attacks.join("\n\n") + "\n\n" + ANSWER, { citations: CITATIONS, h });
    for (const tag of seen) assert.ok(TAGS.includes(tag), tag);
    assert.ok(!seen.includes("script") && !seen.includes("img") && !seen.includes("iframe"));
  });

  test("random byte soup never breaks the invariants", () => {
    let seed = 42;
    const rand = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
    const alphabet = [
      "<",
      ">",
      "[",
      "]",
      "(",
      ")",
      "*",
      "_",
      "`",
      "~",
      "#",
      "-",
      "|",
      "\n",
      " ",
      "a",
      "1",
      ":",
      "/",
      "\\",
      '"',
      "javascript:",
      "http://x.y",
      "zotero://z",
      "1, p. 3",
      "script",
      "!",
    ];
    for (let k = 0; k < 300; k++) {
      let s = "";
      const len = 1 + Math.floor(rand() * 60);
      for (let i = 0; i < len; i++) s += alphabet[Math.floor(rand() * alphabet.length)];
      assertSafe(s);
    }
  });

  test("NUL and CRLF input", () => {
    assert.deepEqual(md("a\r\nb\u0000"), [["p", "a", ["br"], "b\ufffd"]]);
  });
});
