"""The model's graph made to compute in int8: built once from the shipped file, kept in the user's cache.

The shipped `model.onnx` holds int8 weights with a scale per output column, but turns each back into
float32 inside the graph (`Cast` then `Mul`), so onnxruntime multiplies in float32 and holds the
float32 copies as it runs. onnxruntime's own dynamic quantization rewrites every `MatMul` as
`MatMulInteger` on int8 weights, with each batch's activations quantized to uint8 as it runs, and
every `Gather` of the embedding tables on int8 rows. The weights are folded to float32 first and then
quantized per column again, symmetrically, which gives back the shipped int8 values and scales.

Run as `python -m hippod.embed.requantize SOURCE TARGET` by minilm_model.py, in a process of its own:
the `onnx` package and the float32 graph it loads (about 100 MB) are then never in the daemon.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

# Bumped when the rewrite changes, so a cache built by an older one is not used.
VERSION = 1


def fold_weights(source: Path, target: Path) -> None:
    """Write `source` with every `Cast(int8) * scale` of two initializers replaced by its float32 value."""
    import numpy as np
    import onnx
    from onnx import numpy_helper

    model = onnx.load(str(source))
    graph = model.graph
    initial = {init.name: init for init in graph.initializer}
    casts = {
        node.output[0]: node.input[0]
        for node in graph.node
        if node.op_type == "Cast" and node.input[0] in initial
    }
    folded: dict[str, onnx.TensorProto] = {}
    drop: set[int] = set()
    for position, node in enumerate(graph.node):
        if node.op_type != "Mul" or node.input[0] not in casts or node.input[1] not in initial:
            continue
        weights = numpy_helper.to_array(initial[casts[node.input[0]]]).astype(np.float32)
        scale = numpy_helper.to_array(initial[node.input[1]]).astype(np.float32)
        folded[node.output[0]] = numpy_helper.from_array(weights * scale, node.output[0])
        drop.add(position)
    used = {name for i, n in enumerate(graph.node) if i not in drop for name in n.input}
    kept_nodes = [
        n
        for i, n in enumerate(graph.node)
        if i not in drop and not (n.op_type == "Cast" and n.output[0] in casts and n.output[0] not in used)
    ]
    used = {name for n in kept_nodes for name in n.input}
    kept_inits = [init for init in graph.initializer if init.name in used]
    del graph.node[:]
    graph.node.extend(kept_nodes)
    del graph.initializer[:]
    graph.initializer.extend(kept_inits + list(folded.values()))
    onnx.save(model, str(target))


def build(source: Path, target: Path) -> None:
    """Write the int8-computing graph of `source` to `target` (atomically: a reader never sees half)."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as scratch:
        folded = Path(scratch, "folded.onnx")
        fold_weights(source, folded)
        out = Path(scratch, "int8.onnx")
        quantize_dynamic(
            str(folded),
            str(out),
            per_channel=True,
            weight_type=QuantType.QInt8,
            op_types_to_quantize=["MatMul", "Gather"],
        )
        # On disk before it takes the name: a crash must not leave a cut-short graph under it.
        with open(out, "rb+") as written:
            os.fsync(written.fileno())
        os.replace(out, target)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python -m hippod.embed.requantize SOURCE TARGET", file=sys.stderr)
        return 2
    build(Path(argv[0]), Path(argv[1]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
