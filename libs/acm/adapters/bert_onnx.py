"""A BERT encoder (sentence-transformers layout) written as an ONNX graph from its weights, so ONNX Runtime can
run a model that a package ships as safetensors only: no torch, no exporter, no download.

The graph takes `input_ids` and `attention_mask` (batch, tokens), both int64, and returns `pooled`
(batch, hidden): the token states averaged over the real tokens (mean pooling, unnormalised). Padding is
masked out of attention and of the mean, so a text embeds the same alone or in a padded batch.

The weight matrices stay out of the serialised graph (external-data placeholders): they are handed to ONNX
Runtime as arrays (`SessionOptions.add_external_initializers`), so loading never holds the ~90 MB of weights
in protobuf and serialised copies as well, which would triple the start-up peak of memory.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

F32 = npt.NDArray[np.float32]
OPSET = 17  # LayerNormalization is a standard op from 17 on
MASKED = -1e4  # added to the attention scores of padding: exp() of it is 0 in float32
EXTERNAL_MIN_ELEMENTS = 4096  # float constants this large are weights, kept out of the graph


@dataclass(frozen=True, slots=True)
class BertModel:
    graph: bytes  # the serialised ONNX model, its weights as external-data placeholders
    weights: dict[str, F32]  # the placeholders' arrays, by name, for add_external_initializers


class _Graph:
    """Nodes and constants of a graph being written; every intermediate gets a fresh name."""

    def __init__(self) -> None:
        from onnx import NodeProto, TensorProto

        self.nodes: list[NodeProto] = []
        self.constants: list[TensorProto] = []
        self.external: dict[str, F32] = {}
        self._n = 0

    def _name(self, prefix: str) -> str:
        self._n += 1
        return f"{prefix}{self._n}"

    def const(self, value: npt.ArrayLike, dtype: type = np.float32) -> str:
        from onnx import TensorProto, numpy_helper

        name = self._name("c")
        array: npt.NDArray[Any] = np.asarray(value, dtype=dtype)
        if array.dtype != np.float32 or array.size < EXTERNAL_MIN_ELEMENTS:
            self.constants.append(numpy_helper.from_array(array, name))
            return name
        placeholder = TensorProto(name=name, data_type=TensorProto.FLOAT, dims=list(array.shape))
        placeholder.data_location = TensorProto.EXTERNAL
        for key, text in (("location", "weights"), ("offset", "0"), ("length", str(array.nbytes))):
            entry = placeholder.external_data.add()
            entry.key, entry.value = key, text
        self.constants.append(placeholder)
        self.external[name] = np.ascontiguousarray(array)
        return name

    def ints(self, *values: int) -> str:
        return self.const(list(values), np.int64)

    def op(self, op_type: str, *inputs: str, **attrs: Any) -> str:
        from onnx import helper

        out = self._name("t")
        self.nodes.append(helper.make_node(op_type, list(inputs), [out], **attrs))
        return out


def bert_mean_pooled_model(weights: Mapping[str, F32], layers: int, heads: int) -> BertModel:
    """The ONNX model of a BERT encoder with mean pooling, from a sentence-transformers state dict
    (`embeddings.*`, `encoder.layer.<i>.*`). Weights are transposed once to (in, out)."""
    from onnx import TensorProto, helper

    g = _Graph()
    word = weights["embeddings.word_embeddings.weight"]
    hidden = int(word.shape[1])
    head_dim = hidden // heads

    def layer_norm(x: str, prefix: str) -> str:
        return g.op(
            "LayerNormalization",
            x,
            g.const(weights[prefix + "LayerNorm.weight"]),
            g.const(weights[prefix + "LayerNorm.bias"]),
            axis=-1,
            epsilon=1e-12,
        )

    def dense(x: str, prefix: str, scale: float = 1.0) -> str:
        w = weights[prefix + "weight"].T * np.float32(scale)
        product = g.op("MatMul", x, g.const(np.ascontiguousarray(w)))
        return g.op("Add", product, g.const(weights[prefix + "bias"] * scale))

    ids, mask = "input_ids", "attention_mask"
    length = g.op("Gather", g.op("Shape", ids), g.const(1, np.int64))
    positions = g.op("Range", g.const(0, np.int64), length, g.const(1, np.int64))
    position = g.op("Gather", g.const(weights["embeddings.position_embeddings.weight"]), positions)
    x = g.op("Add", g.op("Gather", g.const(word), ids), position)
    x = g.op("Add", x, g.const(weights["embeddings.token_type_embeddings.weight"][0]))
    x = layer_norm(x, "embeddings.")
    real = g.op("Cast", mask, to=TensorProto.FLOAT)
    # (batch, 1, 1, tokens): 0 for a real token, MASKED for padding, broadcast over heads and queries.
    padding = g.op("Unsqueeze", g.op("Mul", g.op("Sub", g.const(1.0), real), g.const(MASKED)), g.ints(1, 2))
    split_heads = g.ints(0, 0, heads, head_dim)
    join_heads = g.ints(0, 0, hidden)
    for i in range(layers):
        p = f"encoder.layer.{i}."

        def heads_of(t: str) -> str:  # (batch, tokens, hidden) -> (batch, head, tokens, head_dim)
            return g.op("Transpose", g.op("Reshape", t, split_heads), perm=[0, 2, 1, 3])

        # attention's 1/sqrt(head_dim) folded into the query projection
        q = heads_of(dense(x, p + "attention.self.query.", 1.0 / math.sqrt(head_dim)))
        k = g.op("Transpose", g.op("Reshape", dense(x, p + "attention.self.key."), split_heads), perm=[0, 2, 3, 1])
        v = heads_of(dense(x, p + "attention.self.value."))
        attention = g.op("Softmax", g.op("Add", g.op("MatMul", q, k), padding), axis=-1)
        context = g.op("Reshape", g.op("Transpose", g.op("MatMul", attention, v), perm=[0, 2, 1, 3]), join_heads)
        x = layer_norm(g.op("Add", dense(context, p + "attention.output.dense."), x), p + "attention.output.")
        h = dense(x, p + "intermediate.dense.")
        # exact (erf) GELU, as the model was trained: h * (1 + erf(h / sqrt 2)) / 2
        erf = g.op("Erf", g.op("Mul", h, g.const(1.0 / math.sqrt(2.0))))
        h = g.op("Mul", g.op("Mul", h, g.op("Add", erf, g.const(1.0))), g.const(0.5))
        x = layer_norm(g.op("Add", dense(h, p + "output.dense."), x), p + "output.")
    summed = g.op("ReduceSum", g.op("Mul", x, g.op("Unsqueeze", real, g.ints(2))), g.ints(1), keepdims=0)
    g.nodes.append(helper.make_node("Div", [summed, g.op("ReduceSum", real, g.ints(1), keepdims=1)], ["pooled"]))
    graph = helper.make_graph(
        g.nodes,
        "bert_mean_pooled",
        [
            helper.make_tensor_value_info(ids, TensorProto.INT64, ["batch", "tokens"]),
            helper.make_tensor_value_info(mask, TensorProto.INT64, ["batch", "tokens"]),
        ],
        [helper.make_tensor_value_info("pooled", TensorProto.FLOAT, ["batch", hidden])],
        g.constants,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="acm")
    model.ir_version = 9  # readable by every onnxruntime since 1.15
    # Not onnx.checker: ONNX Runtime validates the graph as it loads it, and the checker costs 0.2 s a start.
    return BertModel(bytes(model.SerializeToString()), g.external)
