"""The trial scripts (scripts/answer_trials.py, scripts/reading_trials.py) are run by hand,
stops apart, against train_ranker.py's names and classes. A rename or a changed seam there
must fail here, not silently in the next trial: stop 67's kept-scorer change left
reading_trials' reader override uncalled, so `--reader-input` would have changed nothing."""

from __future__ import annotations

import ast
import inspect

import pytest

from tests.helpers import SCRIPTS, script

TRIALS = ("answer_trials", "reading_trials")


@pytest.mark.parametrize("name", TRIALS)
def test_a_trial_script_reads_only_names_train_ranker_has(name: str) -> None:
    ranker = script("train_ranker")
    tree = ast.parse((SCRIPTS / f"{name}.py").read_text(encoding="utf-8"))
    used = {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name) and node.value.id == "tr"}
    assert used, "it reads train_ranker"
    assert sorted(attribute for attribute in used if not hasattr(ranker, attribute)) == []


@pytest.mark.parametrize("name", TRIALS)
def test_a_trial_scripts_overrides_replace_methods_its_base_has(name: str) -> None:
    """A method a trial class defines over a train_ranker class must be one the base has,
    with the same parameters: otherwise nothing calls it."""
    script("train_ranker")
    module = script(name)  # its imports of docassist's names resolve, too
    assert callable(module.main)
    trial_classes = [cls for _, cls in inspect.getmembers(module, inspect.isclass)
                     if cls.__module__ == name and cls.__bases__[0].__module__ == "train_ranker"]
    for cls in trial_classes:
        base = cls.__bases__[0]
        for method, function in vars(cls).items():
            if not inspect.isfunction(function) or method == "__init__":
                continue
            assert hasattr(base, method), f"{cls.__name__}.{method}: {base.__name__} has none"
            ours = list(inspect.signature(function).parameters)
            theirs = list(inspect.signature(getattr(base, method)).parameters)
            assert ours == theirs, f"{cls.__name__}.{method}{ours} against {theirs}"
    if name == "reading_trials":
        assert {cls.__name__ for cls in trial_classes} == {"TrialReader", "TrialJudge"}
