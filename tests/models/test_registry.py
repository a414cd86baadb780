"""One registry for every backend; the built-ins register like a third-party one would."""

from __future__ import annotations

import pytest

from docassist.core.errors import ConfigurationError
from docassist.core.extractive import ExtractiveAnswerer
from docassist.core.learned import LearnedSelector
from docassist.models import ModelConfig, get_answerer, get_model_embedder, get_selector
from docassist.models.registry import backends


def test_every_builtin_is_an_entry_of_the_one_registry() -> None:
    entries = backends()
    abilities = {name: (entry.selector is not None, entry.answerer is not None,
                        entry.embedder is not None, entry.needs_model)
                 for name, entry in entries.items()}
    assert abilities["rules"] == (True, True, False, False)
    assert abilities["use"] == abilities["e5"] == (False, False, True, False)
    for chat in ("ollama", "openai", "replay"):
        assert abilities[chat] == (True, True, True, True)


def test_rules_resolves_through_the_registry_and_names_no_model() -> None:
    config = ModelConfig()
    assert isinstance(get_selector("rules", config), LearnedSelector)
    assert isinstance(get_answerer(" rules ", config), ExtractiveAnswerer)
    with pytest.raises(ConfigurationError, match="unknown model backend 'rules'"):
        get_selector("rules:v2", config)
    with pytest.raises(ConfigurationError, match="unknown embedder 'rules'"):
        get_model_embedder("rules", config)
    with pytest.raises(ConfigurationError, match="unknown model backend 'use'"):
        get_selector("use", config)
