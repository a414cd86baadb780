"""What a larger reader would cost on this machine: the shipped reader (ms-marco-MiniLM-L-12-v2,
INT8 ONNX) beside encoders of the shapes of the larger cross-encoders we could ship, built here
with random weights, quantized the same way and timed the same way (onnxruntime, the reader's
two threads, one pair a run).

    pip install onnx   # with onnxruntime, which DocAssist already needs
    .venv/bin/python bench/reader_sizes.py [--rounds 5] [--pairs 20] [--json]

Random weights cost what trained ones do: the same matrices are multiplied. A synthetic encoder
of the shipped reader's own shape is timed too, so the page shows how far this stand-in is from
a real export. The vocabulary is cut to 30,522 rows in every stand-in (looking a row up costs
nothing); the model files' sizes below are counted from each model's real shape. Writes
docs/benchmarks/reader-sizes.md (one block, replaced each run).
"""

from __future__ import annotations

import argparse
import math
import os
import re
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from figures import print_figures

from docassist.evaluation.pages import commit, write_block
from docassist.storage.judge import JUDGED_PAGES
from docassist.storage.reader import MODEL_FOLDER, READ_PASSAGES, READ_TOKENS, READER_THREADS

REPO = Path(__file__).resolve().parent.parent
PAGE = REPO / "docs" / "benchmarks" / "reader-sizes.md"
BUDGET_PAGE = REPO / "docs" / "benchmarks" / "handbooks.md"
BUDGET_SECONDS = 20 * 60
QUESTIONS = 80
"""The time budget's questions (issue 40: index about 900 pages and answer 80 in 20 minutes)."""
STAND_IN_VOCABULARY = 30_522
LENGTHS = (128, READ_TOKENS)
HEADER = """# What a larger reader would cost

Written by `bench/reader_sizes.py`. The reader (a cross-encoder) is the one answer feature that
tells a right answer from a wrong one, and a stronger one is the lever left for issue 40's
answer goals ([Evaluation method](../evaluation-method.md)). This page says which sizes fit the
time budget on two cores, before anyone converts and publishes one.
"""


@dataclass(frozen=True)
class Shape:
    name: str
    layers: int
    width: int
    heads: int
    inner: int
    vocabulary: int
    positions: int = 514

    def parameters(self) -> int:
        layer = 4 * self.width * self.width + 2 * self.width * self.inner + 9 * self.width \
            + self.inner
        return (self.vocabulary + self.positions) * self.width + self.layers * layer + self.width


SHAPES = (
    Shape("stand-in of the shipped reader (MiniLM-L12-H384, English)", 12, 384, 12, 1536, 30_522),
    Shape("mmarco-mMiniLMv2-L12-H384 (multilingual, Apache-2.0)", 12, 384, 12, 1536, 250_002),
    Shape("bge-reranker-base (XLM-R base, English and Chinese, MIT)", 12, 768, 12, 3072, 250_002),
    Shape("bge-reranker-v2-m3 (XLM-R large, multilingual, Apache-2.0)", 24, 1024, 16, 4096,
          250_002, positions=8194),
)


class Graph:
    """ONNX nodes and random weights, added one by one."""

    def __init__(self) -> None:
        self.random = np.random.default_rng(0)
        self.nodes: list[Any] = []
        self.weights: list[Any] = []

    def constant(self, name: str, value: Any) -> str:
        from onnx import numpy_helper

        self.weights.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def matrix(self, name: str, rows: int, columns: int) -> str:
        values = self.random.standard_normal((rows, columns)) * 0.02
        return self.constant(name, values.astype(np.float32))

    def node(self, kind: str, inputs: list[str], output: str, **attributes: Any) -> str:
        from onnx import helper

        self.nodes.append(helper.make_node(kind, inputs, [output], **attributes))
        return output

    def dense(self, x: str, name: str, rows: int, columns: int) -> str:
        product = self.node("MatMul", [x, self.matrix(f"{name}.w", rows, columns)], f"{name}.mm")
        return self.node("Add", [product, self.constant(f"{name}.b", np.zeros(columns,
                                                                              np.float32))],
                         f"{name}.out")

    def norm(self, x: str, name: str, width: int) -> str:
        gamma = self.constant(f"{name}.g", np.ones(width, np.float32))
        beta = self.constant(f"{name}.beta", np.zeros(width, np.float32))
        return self.node("LayerNormalization", [x, gamma, beta], f"{name}.out", axis=-1,
                         epsilon=1e-5)


def embeddings(graph: Graph, shape: Shape) -> tuple[str, str]:
    """The token and position embeddings, normed, and the attention mask as an additive bias."""
    rows = min(shape.vocabulary, STAND_IN_VOCABULARY)
    words = graph.node("Gather", [graph.matrix("words", rows, shape.width), "input_ids"],
                       "embedded")
    length = graph.node("Slice", [graph.node("Shape", ["input_ids"], "shape"),
                                  graph.constant("one", np.array([1])),
                                  graph.constant("two", np.array([2]))], "length")
    positions = graph.node("Slice", [graph.matrix("positions", shape.positions, shape.width),
                                     graph.constant("zero", np.array([0])), length,
                                     graph.constant("axis0", np.array([0]))], "positioned")
    x = graph.norm(graph.node("Add", [words, positions], "summed"), "embeddings", shape.width)
    mask = graph.node("Cast", ["attention_mask"], "mask_float", to=1)  # FLOAT
    hidden = graph.node("Sub", [graph.constant("one_float", np.float32(1.0)), mask], "hidden")
    bias = graph.node("Mul", [hidden, graph.constant("minus", np.float32(-10000.0))], "flat")
    return x, graph.node("Unsqueeze", [bias, graph.constant("axes", np.array([1, 2]))], "bias")


def layer(graph: Graph, shape: Shape, x: str, bias: str, n: int) -> str:
    """One encoder layer: self-attention, then the feed-forward block, each with its norm."""
    width, size = shape.width, shape.width // shape.heads
    split = graph.constant(f"l{n}.split", np.array([0, -1, shape.heads, size]))

    def heads(name: str, perm: list[int]) -> str:
        projected = graph.node("Reshape", [graph.dense(x, f"l{n}.{name}", width, width), split],
                               f"l{n}.{name}.r")
        return graph.node("Transpose", [projected], f"l{n}.{name}.t", perm=perm)

    query, key, value = (heads("q", [0, 2, 1, 3]), heads("k", [0, 2, 3, 1]),
                         heads("v", [0, 2, 1, 3]))
    scale = graph.constant(f"l{n}.scale", np.float32(1.0 / math.sqrt(size)))
    scores = graph.node("Mul", [graph.node("MatMul", [query, key], f"l{n}.qk"), scale],
                        f"l{n}.scaled")
    attention = graph.node("Softmax", [graph.node("Add", [scores, bias], f"l{n}.masked")],
                           f"l{n}.p", axis=-1)
    context = graph.node("Transpose", [graph.node("MatMul", [attention, value], f"l{n}.ctx")],
                         f"l{n}.ctx.t", perm=[0, 2, 1, 3])
    context = graph.node("Reshape", [context, graph.constant(f"l{n}.joined", np.array(
        [0, -1, width]))], f"l{n}.ctx.r")
    x = graph.norm(graph.node("Add", [x, graph.dense(context, f"l{n}.o", width, width)],
                              f"l{n}.res1"), f"l{n}.ln1", width)
    inner = graph.dense(x, f"l{n}.up", width, shape.inner)
    erf = graph.node("Erf", [graph.node("Mul", [inner, graph.constant(
        f"l{n}.r2", np.float32(1 / math.sqrt(2)))], f"l{n}.scaled_up")], f"l{n}.erf")
    plus_one = graph.node("Add", [erf, graph.constant(f"l{n}.one", np.float32(1.0))],
                          f"l{n}.erf1")
    gelu = graph.node("Mul", [graph.node("Mul", [inner, plus_one], f"l{n}.g0"),
                              graph.constant(f"l{n}.half", np.float32(0.5))], f"l{n}.gelu")
    return graph.norm(graph.node("Add", [x, graph.dense(gelu, f"l{n}.down", shape.inner, width)],
                                 f"l{n}.res2"), f"l{n}.ln2", width)


def encoder(shape: Shape, path: Path) -> None:
    """A BERT-style encoder with a one-logit head, float32, written as ONNX."""
    import onnx
    from onnx import TensorProto, helper

    graph = Graph()
    x, bias = embeddings(graph, shape)
    for n in range(shape.layers):
        x = layer(graph, shape, x, bias, n)
    first = graph.node("Gather", [x, graph.constant("first", np.array(0))], "cls", axis=1)
    graph.node("MatMul", [first, graph.matrix("head", shape.width, 1)], "logits")
    model = helper.make_model(helper.make_graph(
        graph.nodes, "encoder",
        [helper.make_tensor_value_info(name, TensorProto.INT64, [1, "tokens"])
         for name in ("input_ids", "attention_mask")],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 1])], graph.weights),
        opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, str(path), save_as_external_data=True, location=path.name + ".data")


def quantized(shape: Shape, folder: Path) -> Path:
    """The stand-in, INT8 as the shipped reader is (weights quantized, activations per run)."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    plain, small = folder / "plain.onnx", folder / "int8.onnx"
    encoder(shape, plain)
    quantize_dynamic(str(plain), str(small), weight_type=QuantType.QInt8,
                     use_external_data_format=True)
    return small


def seconds_a_pair(model: Path, tokens: int, rounds: int, pairs: int) -> list[float]:
    """One pair a run, as storage/reader.py runs them: the median of `pairs` runs, per round."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = READER_THREADS
    options.inter_op_num_threads = 1
    session = onnxruntime.InferenceSession(str(model), options,
                                           providers=["CPUExecutionProvider"])
    wanted = {item.name for item in session.get_inputs()}
    random = np.random.default_rng(1)
    ids = random.integers(1000, 20_000, size=(1, tokens), dtype=np.int64)
    feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids),
             "token_type_ids": np.zeros_like(ids)}
    feeds = {name: value for name, value in feeds.items() if name in wanted}
    for _ in range(3):
        session.run(None, feeds)
    medians = []
    for _ in range(rounds):
        runs = []
        for _ in range(pairs):
            began = time.perf_counter()
            session.run(None, feeds)
            runs.append(time.perf_counter() - began)
        medians.append(statistics.median(runs))
    return medians


def budget_total() -> float:
    """The last `bench/handbooks.py` run's total seconds (index and 80 answers, the shipped
    reader's reading included)."""
    found = re.search(r"\| total seconds \| ([\d.]+) \|", BUDGET_PAGE.read_text(encoding="utf-8"))
    if found is None:
        raise SystemExit(f"no 'total seconds' row in {BUDGET_PAGE}: run bench/handbooks.py")
    return float(found.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--pairs", type=int, default=20)
    parser.add_argument("--json", action="store_true")
    arguments = parser.parse_args()
    read = QUESTIONS * JUDGED_PAGES * READ_PASSAGES
    models: list[tuple[str, int, Path]] = [
        ("the shipped reader (ms-marco-MiniLM-L-12-v2, fine-tuned)", SHAPES[0].parameters(),
         MODEL_FOLDER / "model.onnx")]
    timings: dict[str, dict[int, float]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        for n, shape in enumerate(SHAPES):
            folder = Path(scratch) / str(n)
            folder.mkdir()
            models.append((shape.name, shape.parameters(), quantized(shape, folder)))
        for name, _, model in models:
            timings[name] = {tokens: statistics.median(seconds_a_pair(
                model, tokens, arguments.rounds, arguments.pairs)) for tokens in LENGTHS}
    shipped = timings[models[0][0]][READ_TOKENS]
    rest = budget_total() - read * shipped
    figures: dict[str, Any] = {"cores": os.cpu_count(), "pairs_read_for_80_questions": read,
                               "budget_seconds": BUDGET_SECONDS,
                               "budget_run_without_reading_seconds": round(rest, 1)}
    lines = []
    for name, parameters, _ in models:
        at = timings[name]
        reading = read * at[READ_TOKENS]
        key = re.sub(r"\W+", "_", name.split(" (")[0]).strip("_").lower()
        figures[f"{key}_ms_a_pair_{READ_TOKENS}"] = round(1000 * at[READ_TOKENS], 1)
        figures[f"{key}_fits"] = rest + reading <= BUDGET_SECONDS
        lines.append(
            f"| {name} | {parameters / 1e6:.0f} M (~{parameters / 1e6:.0f} MB) | "
            + " | ".join(f"{1000 * at[tokens]:.1f}" for tokens in LENGTHS)
            + f" | {reading:.0f} | {rest + reading:.0f} | "
            + ("yes" if rest + reading <= BUDGET_SECONDS else "no") + " |")
    write_block(PAGE, "run", "\n".join([
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on commit "
        f"`{commit(own=[PAGE])}`, {figures['cores']} cores, onnxruntime on "
        f"{READER_THREADS} threads, one pair a run; the median over {arguments.rounds} rounds "
        f"of each round's median of {arguments.pairs} runs.", "",
        f"| model | parameters (INT8 file) | ms a pair, {LENGTHS[0]} tokens | "
        f"ms a pair, {LENGTHS[1]} tokens | reading {read} pairs, s | budget run, s | within "
        f"{BUDGET_SECONDS} s |",
        "|---|---|---|---|---|---|---|", *lines, "",
        f"{read} pairs: {QUESTIONS} questions × {JUDGED_PAGES} judged pages × {READ_PASSAGES} "
        f"passages, each at the {READ_TOKENS}-token cap (an upper bound: most pairs are "
        "shorter, and a question asked again is not read again). \"Budget run\" is the last "
        f"[time budget](handbooks.md) run's {budget_total():.0f} s with the shipped reader's "
        f"reading ({read} × its time here) replaced by this model's. That run and this one "
        "need not be on the same machine; compare the columns, not the last digit. An INT8 file "
        "holds about a byte a parameter (the shipped reader's: 34 MB); PyPI takes files of up "
        "to 100 MB unless a project is granted more."]),
        header=HEADER)
    print_figures(figures, arguments.json)


if __name__ == "__main__":
    main()
