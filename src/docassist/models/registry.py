"""Backends by name: `DOCASSIST_MODEL=rules` (default), later `ollama:…`, `openai:…`, `replay`.

A backend supplies a selector (proposes the action as JSON text) and an answerer (writes an
answer from retrieved chunks). Registration is a plain function so new backends plug in.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from docassist.core.answering import ExtractiveAnswerer
from docassist.core.errors import ConfigurationError
from docassist.core.ports import Answerer, SelectorModel
from docassist.core.rules import RulesSelector


@dataclass(frozen=True)
class Backend:
    name: str
    selector: SelectorModel
    answerer: Answerer


BackendFactory = Callable[[str], Backend]
_FACTORIES: dict[str, BackendFactory] = {}


def register(name: str, factory: BackendFactory) -> None:
    """Make `name` (the part before `:` in DOCASSIST_MODEL) resolve to `factory(model)`."""
    _FACTORIES[name] = factory


def get_backend(spec: str) -> Backend:
    """`rules`, or `<backend>:<model>`; an unknown backend is a clear ConfigurationError."""
    name, _, model = spec.strip().partition(":")
    factory = _FACTORIES.get(name)
    if factory is None:
        known = ", ".join(sorted(_FACTORIES))
        raise ConfigurationError(f"unknown model backend {name!r} (available: {known})")
    return factory(model)


def _rules(_model: str) -> Backend:
    return Backend(name="rules", selector=RulesSelector(), answerer=ExtractiveAnswerer())


register("rules", _rules)
