"""The plugin's wire fixtures (zotero-plugin/test/golden/wire.json) are what the agent and the
gateway send today: scripts/wire_golden.py writes them from that code, and the plugin's Node
test reads them. A change to the wire that is not carried to the file fails here; carried to
the file, it fails the plugin's test if the plugin does not follow."""

from __future__ import annotations

import importlib.util
import json
import pathlib
import subprocess
import sys
from types import ModuleType

ROOT = pathlib.Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "scripts" / "wire_golden.py"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("wire_golden", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


async def test_the_golden_file_is_what_the_code_sends_today() -> None:
    golden = _script()
    written = golden.GOLDEN.read_text(encoding="utf-8")
    assert written == golden.render(await golden.build()), (
        "zotero-plugin/test/golden/wire.json is stale: run `make wire-golden` and check that "
        "the plugin's tests (cd zotero-plugin && npm test) still pass"
    )
    streams = {s["name"]: s for s in json.loads(written)["streams"]}
    assert set(streams) == {
        "chat_paused",
        "resume_completed",
        "chat_direct_answer",
        "chat_agent_lost",
    }
    kinds = [f.split("\n", 1)[0] for f in streams["chat_paused"]["frames"]]
    assert kinds[-2:] == ["event: request_input", "event: done"]


def test_check_fails_on_a_stale_file(tmp_path: pathlib.Path) -> None:
    golden = _script()
    stale = tmp_path / "wire.json"
    stale.write_text(
        golden.GOLDEN.read_text(encoding="utf-8").replace("BOBYQA", "Nelder-Mead", 1),
        encoding="utf-8",
    )
    check = [sys.executable, str(SCRIPT), "--check", "--out", str(stale)]
    failed = subprocess.run(check, capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "is stale" in failed.stdout and "-" in failed.stdout and "Nelder-Mead" in failed.stdout
    written = subprocess.run(
        [sys.executable, str(SCRIPT), "--out", str(stale)], capture_output=True, text=True,
        timeout=120, cwd=ROOT,
    )  # fmt: skip
    assert written.returncode == 0, written.stderr
    assert stale.read_text(encoding="utf-8") == golden.GOLDEN.read_text(encoding="utf-8")
    again = subprocess.run(check, capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert again.returncode == 0, again.stdout + again.stderr
