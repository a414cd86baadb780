"""A model selector's worked examples: the bank messages nearest to the current one, in its
prompt, and in the tool catalog version."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np

from docassist.core.examples import EXAMPLES_PATH, EXAMPLES_SHOWN, BankExamples, examples_digest
from docassist.core.selection import (
    SelectionRequest,
    StateSummary,
    build_prompt,
    propose_action,
    selector_catalog_version,
    tool_catalog_version,
)
from docassist.core.tools import default_registry
from docassist.models.embedders import get_embedder
from docassist_testkit.fakes.model_server import proposal
from tests.helpers import ScriptedSelector

BANK = Path(__file__).resolve().parents[2] / "samples" / "bank" / "decisions_bank.jsonl"


def use() -> BankExamples:
    return BankExamples(lambda: get_embedder("use"))


def request(text: str) -> SelectionRequest:
    return SelectionRequest(message=text, standalone_question=text, history=[],
                            state_summary=StateSummary(has_last_sources=True),
                            tool_specs=default_registry().specs(), language="en")


def test_the_shipped_examples_are_the_bank_and_nothing_else() -> None:
    bank = [json.loads(line) for line in BANK.read_text(encoding="utf-8").splitlines()]
    shipped = [json.loads(line) for line in EXAMPLES_PATH.read_text(encoding="utf-8")
               .splitlines()]
    assert [(e["message"], e["kind"]) for e in shipped] == [(b["message"], b["kind"])
                                                            for b in bank]
    digest = EXAMPLES_PATH.with_suffix(".use.sha256").read_text().split()[0]
    assert digest == examples_digest(EXAMPLES_PATH.read_text(encoding="utf-8"))
    vectors = np.load(EXAMPLES_PATH.with_suffix(".use.npy"), allow_pickle=False)
    assert vectors.shape == (len(bank), 512)


def test_the_nearest_examples_are_the_most_similar_messages() -> None:
    found = use().nearest(request("which document did you take that answer from?"))
    assert len(found) == EXAMPLES_SHOWN
    assert sum(e.kind in ("sources", "sources_without_answer") for e in found) >= 4
    thanks = use().nearest(request("thanks, that helped a lot!"))
    assert sum(e.kind == "smalltalk" for e in thanks) >= 4


def test_vectors_made_from_other_examples_are_not_used(tmp_path: Path) -> None:
    """Three examples beside stale vectors of the whole bank: embedded again, so the nearest
    example is still the right one."""
    lines = EXAMPLES_PATH.read_text(encoding="utf-8").splitlines()
    smalltalk = next(line for line in lines if json.loads(line)["kind"] == "smalltalk")
    sources = next(line for line in lines if json.loads(line)["kind"] == "sources")
    rejected = next(line for line in lines if json.loads(line)["kind"] == "rejected_action")
    path = tmp_path / EXAMPLES_PATH.name
    path.write_text("\n".join([rejected, sources, smalltalk]) + "\n", encoding="utf-8")
    shutil.copy(EXAMPLES_PATH.with_suffix(".use.npy"), path.with_suffix(".use.npy"))
    shutil.copy(EXAMPLES_PATH.with_suffix(".use.sha256"), path.with_suffix(".use.sha256"))
    examples = BankExamples(lambda: get_embedder("use"), path, shown=1)
    [nearest] = examples.nearest(request(json.loads(smalltalk)["message"]))
    assert nearest.kind == "smalltalk"
    assert examples.version != use().version


def test_a_prompt_carries_the_nearest_examples_and_the_version_follows_them() -> None:
    specs = default_registry().specs()
    selector = ScriptedSelector(proposal("tool_call", "show_last_sources"))
    selector.examples = use()
    asked = request("where did you get that from?")
    selection = propose_action(asked, selector)
    [seen] = selector.requests
    assert seen.examples == use().nearest(asked)
    assert selection.prompt == build_prompt(seen)
    data = json.loads(selection.prompt.split("\nDATA:\n", 1)[1])
    assert [e["message"] for e in data["labelled_examples"]] == [e.message for e in seen.examples]
    # Without examples the prompt is as before (no key), and so is the version.
    assert "labelled_examples" not in build_prompt(asked)
    plain = ScriptedSelector()
    assert selector_catalog_version(specs, plain) == tool_catalog_version(specs)
    assert selector_catalog_version(specs, selector) != tool_catalog_version(specs)
    assert selector_catalog_version(specs, selector) == tool_catalog_version(
        specs, use().version)
