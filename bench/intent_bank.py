"""Rebuild `src/docassist/core/intent_examples.jsonl`, the bank of labelled messages the
`rules+nearest` selector compares with: the dev set and the `tune` split of the held-out set
only (the `test` split is what the README reports on, so it never enters the bank).

    python bench/intent_bank.py
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from docassist.core import intents
from docassist.core.nearest import bank_digest
from docassist.models.embedders import get_embedder

REPO = Path(__file__).resolve().parents[1]
SOURCES = (REPO / "samples" / "decisions_dev.jsonl",
           REPO / "samples" / "public" / "decisions_heldout.jsonl")
BANK = REPO / "src" / "docassist" / "core" / "intent_examples.jsonl"
KIND_INTENT = {
    "procedure": "procedure", "off_topic_question": "procedure", "followup": "procedure",
    "ambiguous_followup": "procedure", "sources": "sources", "metadata": "metadata",
    "metadata_missing_id": "metadata", "rejected_action": "action", "injection": "injection",
    "no_tool": "no_tool",
}


def intent_of(case: dict) -> str | None:
    """The intent a labelled case stands for; None for validation cases."""
    expected, message = case["expected"], case["message"]
    if not isinstance(message, str) or expected["status"] in ("empty_message",
                                                              "invalid_message"):
        return None
    if "kind" in case:
        return KIND_INTENT.get(case["kind"])
    if expected["status"] == "rejected":
        return "action"
    if expected["status"] == "no_suitable_tool":
        return "no_tool"
    if expected.get("action") == "show_last_sources" or (
            expected["status"] == "clarification_needed" and intents.is_sources_request(message)):
        return "sources"
    if expected.get("action") == "get_document_metadata" or (
            expected["status"] == "clarification_needed"
            and (intents.is_metadata_request(message) or intents.document_id_tokens(message))):
        return "metadata"
    return "procedure"


def main() -> None:
    rows = []
    for path in SOURCES:
        for line in path.read_text(encoding="utf-8").splitlines():
            case = json.loads(line)
            if case.get("split", "tune") != "tune":
                continue
            intent = intent_of(case)
            if intent is not None:
                rows.append({"id": case["id"], "intent": intent, "text": case["message"]})
    BANK.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows),
                    encoding="utf-8")
    # Shipped vectors for the default embedder, so a process need not embed the bank.
    vectors = get_embedder("use").embed_passages([row["text"] for row in rows])
    cache = BANK.with_name("intent_examples.use.npy")
    np.save(cache, vectors.astype(np.float16), allow_pickle=False)
    cache.with_suffix(".sha256").write_text(bank_digest([row["text"] for row in rows]) + "\n")
    print(f"{len(rows)} examples -> {BANK.relative_to(REPO)} (+ {cache.name})")


if __name__ == "__main__":
    main()
