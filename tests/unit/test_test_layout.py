"""pytest imports each test file by its basename (rootdir mode, no packages under tests/),
so two test files with one name in different folders stop the whole run at collection:
CI failed exactly so once (tests/unit/common/test_models.py beside
tests/unit/reranker/test_models.py). Every test file's name is unique."""

from __future__ import annotations

import collections
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_every_test_file_has_a_unique_basename() -> None:
    by_name: dict[str, list[str]] = collections.defaultdict(list)
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        by_name[path.name].append(str(path.relative_to(ROOT)))
    clashes = {name: paths for name, paths in by_name.items() if len(paths) > 1}
    assert not clashes, f"rename one of each: {clashes}"
