"""The plugin and the library reader against a real Zotero (8, 9 or 10): issue 28.

Opt-in: runs when ``ZOTERO_BIN`` names a Zotero 8, 9 or 10 executable (``zotero`` of an
installation); skipped with one line otherwise (CI has no Zotero). ``make test-zotero
ZOTERO_BIN=...`` runs it alone. What one run does, on a fresh profile and data directory:

1. Zotero starts with the test-only driver add-on (tests/real_zotero/driver) and builds a
   library through Zotero's own API: papers with their real PDFs imported as stored
   attachments, a linked file, a collection tree, a trashed item and a trashed collection, a
   group library, the highlights, comments and notes of the own-reading issue
   (bench/data/own_reading.jsonl). Zotero's console of this run, without the plugin, is the
   baseline.
2. The project's stack starts on that data directory (`zocrates run`), Zotero starts again and
   the plugin is installed from its built .xpi through Zotero's add-on manager, as Tools >
   Plugins > Install Plugin From File does; then Zotero is quit and started once more with the
   plugin installed.
3. While that Zotero runs (and holds its database lock): the library reader and `zocrates
   index` read the zotero.sqlite Zotero wrote, compared with what Zotero's own API shows; the
   pane in the library and in a reader tab; the scope from the item tree and from the
   collection tree (several collections at once in Zotero 10); a question answered, a
   citation opening the reader at its page, the answer saved as a child note whose links
   open the PDF pages; the settings pane loaded and a setting saved; the plugin disabled,
   enabled, and removed, leaving nothing behind.
4. Zotero quits; its console, at start-up, during use and at shutdown, holds no error or
   warning that names the plugin (in its text or source; in the last run, as the driver's
   console listener saw it, with its stack), nor a sourceless error ("uncaught exception")
   that the run without the plugin did not have.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import os
import pathlib
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from services.library.zotero import LibrarySnapshot, read_library
from tests.support import zotero_fixture as zf
from tests.support.ports import free_base_port
from tests.support.processes import ROOT, zocrates_run
from tests.support.zotero_app import (
    PLUGIN_ID,
    PLUGIN_MARKS,
    ZOTERO_BIN_ENV,
    Problem,
    ZoteroApp,
    console_problems,
)

BINARY = os.environ.get(ZOTERO_BIN_ENV, "")
ZOCRATES = pathlib.Path(sys.executable).parent / "zocrates"
PLUGIN_DIR = ROOT / "zotero-plugin"
OWN_READING = ROOT / "bench" / "data" / "own_reading.jsonl"

if not BINARY:
    pytest.skip(
        f"{ZOTERO_BIN_ENV} is not set: the real-Zotero suite needs a Zotero 8, 9 or 10 "
        "executable (zotero-plugin/README.md, 'A real Zotero')",
        allow_module_level=True,
    )
pytestmark = pytest.mark.timeout(1800)

# The user library: file -> (collections, how it is attached)
PAPERS = {
    "forecast__JSS2008.pdf": (("Forecasting",), "stored"),
    "zoo__zoo.pdf": (("Forecasting",), "stored"),
    "lme4__lmer.pdf": (("Mixed models",), "stored"),
    "ordinal__clm_article.pdf": (("Mixed models",), "stored"),
    "brms__brms_overview.pdf": (("Bayesian",), "stored"),
    "sandwich__sandwich.pdf": (("Econometrics",), "stored"),
    "mvtnorm__MVT_Rnews.pdf": ((), "linked"),
    "party__party.pdf": (("Old drafts",), "trashed"),
}
GROUP_PAPERS = ("lmtest__lmtest-intro.pdf",)
COLLECTIONS = (
    ("Forecasting", None),
    ("Mixed models", None),
    ("Bayesian", "Mixed models"),
    ("Econometrics", None),
    ("Old drafts", None),
)
TRASHED_COLLECTION = "Old drafts"
GROUP = "Reading group"
# A question about a paper (a citation to click) and one about the user's own comment.
PAPER_QUESTION = "How does auto.arima choose the seasonal differencing order D?"
COMMENT_QUESTION = "What did I comment about the seasonal differencing test in the forecast paper?"


def _papers_dir() -> pathlib.Path:
    return zf.default_papers_dir()


@functools.cache
def _manifest() -> dict[str, zf.Paper]:
    """The 38 papers' manifest by file name, read once."""
    return {p.file: p for p in zf.read_manifest()}


def _title(file: str) -> str:
    return _manifest()[file].title


def _own_reading() -> list[dict[str, Any]]:
    return [json.loads(line) for line in OWN_READING.read_text().splitlines() if line.strip()]


def library_spec() -> dict[str, Any]:
    """What the driver builds with Zotero's API (library.js createLibrary)."""
    manifest = _manifest()
    papers_dir = _papers_dir()

    def paper(file: str, collections: tuple[str, ...] = (), how: str = "stored") -> dict[str, Any]:
        entry = manifest[file]
        return {
            "file": str(papers_dir / file),
            "title": entry.title,
            "creators": [
                [part.strip() for part in [*c.split(",", 1), ""][:2]] for c in entry.creators
            ],
            "date": str(entry.year),
            "collections": list(collections),
            "linked": how == "linked",
            "trashed": how == "trashed",
        }

    annotations, notes = [], []
    for entry in _own_reading():
        title = manifest[entry["file"]].title if entry.get("file") else None
        if entry["kind"] in ("highlight", "comment"):
            annotations.append(
                {
                    "paper": title,
                    "type": "highlight" if entry["kind"] == "highlight" else "note",
                    "text": entry.get("text", ""),
                    "comment": entry["comment"],
                    "pageIndex": entry["page"] - 1,
                    "rects": [[90.0, 400.0, 520.0, 440.0]],
                }
            )
        else:
            notes.append(
                {"paper": title, "html": entry["html"], "collection": entry.get("collection")}
            )
    return {
        "collections": [{"name": n, "parent": p} for n, p in COLLECTIONS],
        "papers": [paper(f, c, how) for f, (c, how) in PAPERS.items()],
        "group": {"name": GROUP, "papers": [paper(f) for f in GROUP_PAPERS]},
        "annotations": annotations,
        "notes": notes,
        "trashedCollection": TRASHED_COLLECTION,
    }


def build_plugin() -> pathlib.Path:
    """`npm run build` of the plugin: zotero-plugin/build/zocrates.xpi."""
    if not (PLUGIN_DIR / "node_modules" / "esbuild").exists():
        pytest.fail("The plugin's node modules are missing: run `make plugin-deps`.", pytrace=False)
    run = subprocess.run(
        ["npm", "run", "build"], cwd=PLUGIN_DIR, capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    xpi = PLUGIN_DIR / "build" / "zocrates.xpi"
    assert xpi.exists()
    return xpi


@dataclasses.dataclass
class World:
    tmp: pathlib.Path
    data_dir: pathlib.Path
    profile: pathlib.Path
    zotero: ZoteroApp
    version: str
    created: dict[str, Any]
    view: dict[str, Any]
    baseline: list[Problem]
    runs: list[ZoteroApp]
    gateway: str
    env: dict[str, str]
    installed: dict[str, Any]

    @property
    def major(self) -> int:
        return int(self.version.split(".")[0])

    def api(self, method: str, path: str, **kwargs: Any) -> Any:
        token = (self.data_dir / "zocrates-data" / "gateway.token").read_text().strip()
        response = httpx.request(
            method, f"{self.gateway}{path}", headers={"Authorization": f"Bearer {token}"},
            timeout=120, **kwargs,
        )  # fmt: skip
        response.raise_for_status()
        return response.json()

    def paper(self, file: str) -> dict[str, Any]:
        """The item Zotero made for a paper of the manifest: key, id, attachmentKey, ..."""
        return dict(self.created["papers"][_title(file)])

    def key(self, file: str) -> str:
        return str(self.paper(file)["key"])


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    tmp = tmp_path_factory.mktemp("real-zotero")
    xpi = build_plugin()
    data_dir, profile = tmp / "Zotero", tmp / "profile"
    base = free_base_port()
    prefs = {"extensions.zocrates.gatewayURL": f"http://127.0.0.1:{base}"}
    runs: list[ZoteroApp] = []

    def zotero(n: int) -> ZoteroApp:
        app = ZoteroApp(BINARY, profile=profile, data_dir=data_dir, log=tmp / f"zotero-{n}.log",
                        prefs=prefs)  # fmt: skip
        runs.append(app)
        return app

    # 1. Zotero with the driver alone: the library, through Zotero's API; the baseline console.
    first = zotero(1)
    hello = first.start()
    try:
        created = first.call("createLibrary", spec=library_spec(), timeout=600)
        view = first.call("libraryView")
        # what a user does without the plugin too: a PDF in the reader, Zotero's settings
        forecast = created["papers"][_title("forecast__JSS2008.pdf")]
        first.call("openReader", key=forecast["attachmentKey"], pageIndex=3)
        first.call("closeReaders")
        first.call("openSettings")
        assert len(created["papers"]) == len(PAPERS), created
    finally:
        first.quit()
    baseline = console_problems(first.output())

    env = {**os.environ, "ZOCRATES_PORT": str(base), "ZOCRATES_ZOTERO_DIR": str(data_dir)}
    for key in list(env):
        if key.endswith("_API_KEY"):
            del env[key]
    with contextlib.ExitStack() as stack:
        stack.enter_context(zocrates_run(env, log=tmp / "stack.log"))
        # 2. The plugin installed from its .xpi in a running Zotero, then a restart with it.
        second = zotero(2)
        second.start()
        try:
            installed = second.call("installAddon", path=str(xpi))
            second.call("waitPane")
        finally:
            second.quit()
        third = zotero(3)
        third.start()
        stack.callback(third.kill)
        world = World(
            tmp=tmp, data_dir=data_dir, profile=profile, zotero=third, version=hello["version"],
            created=created, view=view, baseline=baseline, runs=runs,
            gateway=f"http://127.0.0.1:{base}", env=env, installed=installed,
        )  # fmt: skip
        yield world


def _zotero_view(world: World) -> dict[tuple[int, str], dict[str, Any]]:
    return {
        (lib["libraryID"], item["key"]): {**item, "libraryID": lib["libraryID"]}
        for lib in world.view["libraries"]
        for item in lib["items"]
    }


def _trashed(items: dict[tuple[int, str], dict[str, Any]]) -> set[tuple[int, str]]:
    """Items in the trash, and the children of trashed items (Zotero hides them too)."""
    out = {k for k, v in items.items() if v["deleted"]}
    for k, v in items.items():
        if v["parentKey"] and (k[0], v["parentKey"]) in out:
            out.add(k)
    return out


def test_the_plugin_installs_and_starts(world: World) -> None:
    print(f"\nZotero {world.version} ({BINARY}); plugin {world.installed}")
    assert world.major in (8, 9, 10), world.version
    assert world.installed["id"] == PLUGIN_ID and world.installed["active"], world.installed
    state = world.zotero.call("waitPane")
    assert state["plugin"] and state["container"] and state["open"], state
    assert state["rightOfDeck"] and state["width"] >= 250, state
    assert state["menuItem"] and state["menuItem"]["label"] == "Zocrates Pane", state
    assert state["stylesheet"], state
    # The plugin registered this data directory with the gateway at start-up.
    status = world.api("GET", "/library/status")
    assert pathlib.Path(status["zotero_data_dir"]) == world.data_dir, status


def test_the_reader_reads_the_database_zotero_holds(world: World) -> None:
    """zotero.sqlite as Zotero wrote it, read while Zotero runs (and holds its lock)."""
    view = _zotero_view(world)
    db = world.data_dir / "zotero.sqlite"
    assert db.exists()
    print(f"journal mode {world.view['journalMode']}; files: "
          f"{sorted(p.name for p in world.data_dir.glob('zotero.sqlite*'))}")  # fmt: skip
    # Zotero holds its database: a plain SQLite reader is refused while it runs ...
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        plain = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=0.2)
        try:
            plain.execute("SELECT COUNT(*) FROM items").fetchone()
        finally:
            plain.close()
    # ... and the library reader reads it all the same
    snapshot: LibrarySnapshot = read_library(world.data_dir)
    trashed = _trashed(view)
    regular = {
        k: v for k, v in view.items()
        if k not in trashed and v["itemType"] not in ("attachment", "note", "annotation")
    }  # fmt: skip
    read = {(i.library_id, i.key): i for i in snapshot.items}
    assert len(regular) == len(PAPERS) - 1 + len(GROUP_PAPERS), regular  # one is trashed
    # every regular item Zotero shows, none of the trashed ones; standalone notes as items too
    assert {k for k, i in read.items() if i.item_type != "note"} == set(regular)
    standalone = {
        k for k, v in view.items()
        if v["itemType"] == "note" and not v["parentKey"] and k not in trashed
    }  # fmt: skip
    assert {k for k, i in read.items() if i.item_type == "note"} == standalone
    for k, item in regular.items():
        got = read[k]
        assert got.title == item["title"], (got.title, item["title"])
        assert set(got.collection_keys) == set(item["collections"]), (k, got.collection_keys)
        pdfs = {
            v["key"]: v for kk, v in view.items()
            if v["parentKey"] == k[1] and kk[0] == k[0] and v["itemType"] == "attachment"
        }  # fmt: skip
        assert {a.key for a in got.attachments} == set(pdfs), (k, got.attachments)
        for a in got.attachments:
            assert a.link_mode == pdfs[a.key]["linkMode"]
            assert a.path is not None and str(a.path) == pdfs[a.key]["path"], (a.path, pdfs[a.key])
            assert a.path.exists()
    # the group library is read, under its name
    group = world.created["group"]
    group_items = [i for i in snapshot.items if i.library_id == group["libraryID"]]
    assert group_items and {i.library_name for i in group_items} == {GROUP}
    # collections as Zotero shows them, the trashed one out
    zotero_collections = {
        c["key"]: c for lib in world.view["libraries"] for c in lib["collections"]
    }
    trashed_collection = world.created["collections"][TRASHED_COLLECTION]
    assert zotero_collections[trashed_collection]["deleted"], zotero_collections[trashed_collection]
    live = {k for k, c in zotero_collections.items() if not c["deleted"]}
    assert trashed_collection not in live
    assert {c.key for c in snapshot.collections} == live
    for c in snapshot.collections:
        assert c.name == zotero_collections[c.key]["name"]
        assert c.parent_key == zotero_collections[c.key]["parentKey"]
    # the own reading, as Zotero wrote it
    own = _own_reading()
    texts = {a.comment for a in snapshot.annotations}
    for entry in own:
        if entry["kind"] in ("highlight", "comment"):
            assert entry["comment"] in texts, entry["id"]
    note_texts = " ".join(n.text for n in snapshot.notes)
    for entry in own:
        if entry["kind"] in ("note", "standalone"):
            assert entry["gold"] in note_texts, entry["id"]


def test_zocrates_index_while_zotero_runs(world: World) -> None:
    index = subprocess.run(
        [str(ZOCRATES), "index"], cwd=ROOT, env=world.env, capture_output=True, text=True,
        timeout=900,
    )  # fmt: skip
    assert index.returncode == 0, index.stdout[-3000:] + index.stderr[-3000:]
    status = world.api("GET", "/library/status")
    view = _zotero_view(world)
    trashed = _trashed(view)
    live = [v for k, v in view.items() if k not in trashed]
    # regular items and standalone notes (a note can be cited like a paper)
    expected_items = [
        v for v in live
        if v["itemType"] not in ("attachment", "note", "annotation")
        or (v["itemType"] == "note" and not v["parentKey"])
    ]  # fmt: skip
    expected_pdfs = [v for v in live if v["itemType"] == "attachment"]
    assert status["items"] == len(expected_items), (status, len(expected_items))
    assert status["attachments"] == len(expected_pdfs), status
    assert status["attachment_states"].get("indexed") == len(expected_pdfs), status
    own = _own_reading()
    passages = status["passages"]
    assert passages["note"] == sum(e["kind"] in ("note", "standalone") for e in own), passages
    assert passages["highlight"] == sum(e["kind"] == "highlight" for e in own), passages
    assert passages["comment"] == sum(e["kind"] == "comment" for e in own), passages
    # A collection search finds only that collection's papers (with its sub-collection's).
    mixed = world.created["collections"]["Mixed models"]
    hits = world.api(
        "GET", "/library/search", params={"q": "random effects model", "collection": mixed, "k": 20}
    )
    keys = {h["item_key"] for h in hits["results"]}
    inside = {world.key(f) for f, (c, _) in PAPERS.items() if {"Mixed models", "Bayesian"} & set(c)}
    assert keys and keys <= inside, (keys, inside)


def test_the_pane_in_the_library_and_in_a_reader_tab(world: World) -> None:
    z = world.zotero
    files = ("lme4__lmer.pdf", "ordinal__clm_article.pdf")
    selected = z.call("selectItems", keys=[world.key(f) for f in files])
    assert len(selected) == 2
    state = z.call("paneState")
    assert state["scopeMode"] == "items", state
    for f in files:  # the scope names the selected papers
        assert _title(f)[:30] in state["scopeDetail"], state
    forecast = world.paper("forecast__JSS2008.pdf")
    reader = z.call("openReader", key=forecast["attachmentKey"], pageIndex=4)
    assert reader["itemKey"] == forecast["attachmentKey"] and reader["pageIndex"] == 4, reader
    state = z.call("paneState")
    assert state["tab"] == "reader" and state["open"] and state["width"] >= 250, state
    assert state["scopeMode"] == "items", state
    assert "forecast" in state["scopeDetail"].lower() or "Automatic" in state["scopeDetail"], state
    z.call("closeReaders")
    # View > Zocrates Pane hides and shows it
    hidden = z.call("toggleFromMenu")
    assert not hidden["open"] and hidden["menuItem"]["checked"] == "false", hidden
    shown = z.call("toggleFromMenu")
    assert shown["open"] and shown["menuItem"]["checked"] == "true", shown


def test_scope_from_the_collection_tree(world: World) -> None:
    z = world.zotero
    collections = world.created["collections"]
    one = z.call("selectCollections", keys=[collections["Mixed models"]])
    assert one == [collections["Mixed models"]]
    state = z.call("setScope", mode="collection")
    assert "Mixed models" in state["scopeDetail"], state
    if world.major >= 10:
        keys = [collections["Forecasting"], collections["Econometrics"]]
        both = z.call("selectCollections", keys=keys)
        assert sorted(both) == sorted(keys), both
        z.call("setScope", mode="collection")
        # forecast and zoo, sandwich (Econometrics' standalone note is not a paper)
        state = z.call("waitScope", includes=["Forecasting, Econometrics", "3 papers"])
        answer = z.call("ask", question="How are seasonal ARIMA models selected?")
        assert answer["status"] == "completed", answer
        session = world.api("GET", f"/sessions/{state['sessionId']}")["session"]
        context = [m for m in session["messages"] if m["role"] == "user"][-1]["context"]
        papers = {world.key(f) for f in ("forecast__JSS2008.pdf", "zoo__zoo.pdf",
                                         "sandwich__sandwich.pdf")}  # fmt: skip
        assert context["active_mode"] == "items", context
        assert {i["item_key"] for i in context["active_context_items"]} == papers, context
        cited = {c["itemKey"] for c in answer["citations"]}
        assert cited and cited <= papers, answer


def test_a_question_a_citation_and_a_note(world: World) -> None:
    z = world.zotero
    z.call("selectItems", keys=[world.key("forecast__JSS2008.pdf")])
    z.call("setScope", mode="library")
    answer = z.call("ask", question=PAPER_QUESTION)
    assert answer["status"] == "completed", answer
    forecast = world.key("forecast__JSS2008.pdf")
    cited = [c for c in answer["citations"] if c["itemKey"] == forecast and c["page"]]
    assert cited, answer
    opened = z.call("clickCitation", itemKey=forecast)
    assert opened["reader"]["parentKey"] == forecast, opened
    assert opened["reader"]["pageIndex"] == int(opened["citation"]["page"]) - 1, opened
    z.call("closeReaders")
    note = z.call("saveNote")
    assert note["isNote"] and note["parentKey"] == forecast, note
    assert note["links"], note
    for link in note["links"]:  # every link of the note opens its PDF at its page
        reader = z.call("openLink", url=link)
        page = int(link.split("page=")[1].split("&")[0])
        key = link.split("/items/")[1].split("?")[0]
        assert reader["itemKey"] == key and reader["pageIndex"] == page - 1, (reader, link)
    z.call("closeReaders")
    # the user's own comment, quoted from the highlight Zotero wrote
    comment = z.call("ask", question=COMMENT_QUESTION)
    gold = next(e for e in _own_reading() if e["question"] == COMMENT_QUESTION)["gold"]
    assert comment["status"] == "completed" and gold[:60] in comment["text"], comment


def test_preferences_load_and_save(world: World) -> None:
    z = world.zotero
    opened = z.call("openPrefs")
    assert opened["fields"], opened
    # the fragment's own lines, in English (a missing message would show its id)
    assert opened["heading"] == "Zocrates" and "zocrates-" not in opened["intro"], opened
    assert len(opened["intro"]) > 20, opened
    # every setting of zocrates_config.json has its field
    before = world.api("GET", "/config")["config"]
    assert set(opened["fields"]) >= {"max_retrieval_tools", "session_retention_days"}, opened
    new = int(before["max_retrieval_tools"]) + 1
    saved = z.call("setPref", key="max_retrieval_tools", value=new)
    assert saved["kind"] == "ok", saved
    assert world.api("GET", "/config")["config"]["max_retrieval_tools"] == new
    refused = z.call("setPref", key="max_retrieval_tools", value=-3)
    assert refused["kind"] == "error", refused
    assert world.api("GET", "/config")["config"]["max_retrieval_tools"] == new
    z.call("closePrefs")
    # a second opening shows what was saved
    z.call("openPrefs")
    assert z.call("fieldValue", key="max_retrieval_tools") == str(new)
    z.call("closePrefs")


def test_disable_enable_and_remove_leave_nothing(world: World) -> None:
    z = world.zotero
    disabled = z.call("setAddon", action="disable")
    assert disabled and not disabled["active"], disabled
    forecast = world.paper("forecast__JSS2008.pdf")
    assert z.call("exerciseObservers", attachmentKey=forecast["attachmentKey"]) == []
    enabled = z.call("setAddon", action="enable")
    assert enabled["active"], enabled
    assert z.call("waitPane")["container"]
    removed = z.call("setAddon", action="uninstall")
    assert removed is None, removed
    assert z.call("exerciseObservers", attachmentKey=forecast["attachmentKey"]) == []


def test_no_plugin_error_in_zoteros_console(world: World) -> None:
    """Last: quit Zotero, then read every run's console from start-up to shutdown."""
    # What the driver's console listener saw in this run, with sources and stacks
    messages = world.zotero.call("console")
    mine = [m for m in messages if any(mark in json.dumps(m) for mark in PLUGIN_MARKS)]
    assert not mine, mine
    code = world.zotero.quit()
    baseline = {p.key for p in world.baseline}
    report = []
    for n, run in enumerate(world.runs, 1):
        problems = console_problems(run.output())
        # the plugin's: named in the line, or a sourceless error the run without it did not
        # have (other lines name their source; Zotero's and Gecko's own come and go with timing)
        ours = [
            p.line for p in problems
            if p.from_plugin or (p.unattributed and p.key not in baseline)
        ]  # fmt: skip
        report.append((n, len(problems), ours))
    print(f"\nZotero {world.version}: baseline (no plugin) {len(world.baseline)} console "
          f"problem(s); runs: {[(n, total) for n, total, _ in report]}")  # fmt: skip
    for p in world.baseline:
        print(f"  baseline: {p.line[:300]}")
    assert code == 0, f"Zotero exited with {code}"
    for n, _total, ours in report:
        assert not ours, f"run {n} ({world.runs[n - 1].log}): " + "\n".join(ours)
