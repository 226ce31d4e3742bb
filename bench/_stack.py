"""Shared by the benchmarks: the reranker as its own process (as deployed), a Zotero-shaped
copy of the 38 papers, and a Library over them."""

from __future__ import annotations

import contextlib
import os
import pathlib
import subprocess
import sys
import time
from collections.abc import Iterator

import httpx

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from services.common import ports
from services.library.library import Library, OcrSettings
from services.reranker.client import RerankerClient
from tests.support import zotero_fixture
from tests.support.ports import free_base_port


@contextlib.contextmanager
def reranker_process(**env: str) -> Iterator[str]:
    """``python -m services.reranker`` on free ports; yields its gRPC address once ready."""
    base = free_base_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "services.reranker"],
        env={**os.environ, "ZOCRATES_PORT": str(base), "ZOCRATES_LOG_LEVEL": "WARNING", **env},
        cwd=ROOT,
    )
    ready = f"http://127.0.0.1:{ports.admin_port(base, 'reranker')}/readyz"
    try:
        deadline = time.monotonic() + 120
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"reranker exited with {proc.returncode}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(ready, timeout=1).status_code == 200:
                    break
            if time.monotonic() > deadline:
                raise RuntimeError("reranker not ready after 120 s")
            time.sleep(0.2)
        yield f"127.0.0.1:{ports.service_port(base, 'reranker')}"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def zotero_copy(workdir: pathlib.Path) -> pathlib.Path:
    """The Zotero-shaped copy of the 38 papers under ``workdir`` (built once), none in the
    trash: the questions ask about every paper."""
    return zotero_fixture.every_paper_library(workdir / "Zotero")


async def open_library(
    index_dir: pathlib.Path,
    zotero_dir: pathlib.Path,
    reranker: RerankerClient,
    *,
    embed_in_background: bool = True,
    ocr: OcrSettings | None = None,
) -> Library:
    models = await reranker.models()
    library = Library(
        index_dir=index_dir,
        zotero_dir=zotero_dir,
        embedder=reranker,
        reranker=reranker,
        embedding_model=str(models["embedding_model"]),
        embed_in_background=embed_in_background,
        ocr=ocr,
    )
    await library.open()
    return library


def tree_rss(root: int) -> int:
    """Resident bytes of ``root`` and every process below it (one pass over /proc)."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in pathlib.Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            statm = (entry / "statm").read_text().split()
        except OSError:
            continue
        pid = int(entry.name)
        children.setdefault(int(stat[1]), []).append(pid)
        rss[pid] = int(statm[1]) * os.sysconf("SC_PAGE_SIZE")
    total, stack = 0, [root]
    while stack:
        pid = stack.pop()
        total += rss.get(pid, 0)
        stack.extend(children.get(pid, []))
    return total
