"""Backends by name, as plugins register them.

`DOCASSIST_MODEL` (selection), `DOCASSIST_ANSWER_MODEL` (answers) and `DOCASSIST_EMBEDDER`
each name a backend independently: `rules`, `ollama:<model>`, `openai:<model>`,
`replay:<file>` (and for embeddings also the local `use` / `e5`). A new backend is one
`register(name, factory)` call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import httpx

from docassist.core.answering import ExtractiveAnswerer
from docassist.core.errors import ConfigurationError
from docassist.core.nearest import NearestExamples
from docassist.core.ports import Answerer, Embedder, SelectorModel
from docassist.core.rules import RulesSelector
from docassist.models.adapters import ModelAnswerer, ModelEmbedder, ModelSelector
from docassist.models.base import DEFAULT_TIMEOUT_SECONDS, ChatModel, new_client
from docassist.models.embedders import EMBEDDER_NAMES, get_embedder
from docassist.models.ollama import DEFAULT_OLLAMA_URL, OllamaModel
from docassist.models.openai import DEFAULT_OPENAI_URL, OpenAIModel
from docassist.models.replay import ReplayModel

RULES: Final = "rules"


@dataclass(frozen=True)
class ModelConfig:
    """Where the model servers are. The API key comes from the environment only."""

    ollama_url: str = DEFAULT_OLLAMA_URL
    openai_base_url: str = DEFAULT_OPENAI_URL
    openai_api_key: str | None = field(default=None, repr=False)
    azure_api_version: str | None = None
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
    record_path: Path | None = None
    """Record every model call of this process into a replay file."""


ChatModelFactory = Callable[[str, ModelConfig, httpx.Client], ChatModel]
_FACTORIES: dict[str, ChatModelFactory] = {}


def register(name: str, factory: ChatModelFactory) -> None:
    """Make `<name>:<model>` resolve to `factory(model, config, client)`."""
    _FACTORIES[name] = factory


def backend_names() -> list[str]:
    return [RULES, *sorted(_FACTORIES)]


def chat_model(spec: str, config: ModelConfig, client: httpx.Client | None = None
               ) -> ChatModel:
    name, _, model = spec.strip().partition(":")
    factory = _FACTORIES.get(name)
    if factory is None:
        raise ConfigurationError(
            f"unknown model backend {name!r} (available: {', '.join(backend_names())})")
    if not model:
        raise ConfigurationError(f"model backend {name!r} needs a model: {name}:<model>")
    built = factory(model, config, client or new_client(config.timeout_seconds))
    if config.record_path is not None and name != "replay":
        return ReplayModel(config.record_path, inner=built)
    return built


def get_selector(spec: str, config: ModelConfig, embedder: str = "none") -> SelectorModel:
    """With a local embedder (`use`, `e5`), the rules also consult the nearest labelled
    examples (`core/nearest.py`): measured better on the held-out set, see README."""
    if spec.strip() == RULES:
        if embedder in EMBEDDER_NAMES:
            return RulesSelector(NearestExamples(get_embedder(embedder)))
        return RulesSelector()
    return ModelSelector(chat_model(spec, config))


def get_answerer(spec: str, config: ModelConfig, embedder: str = "none") -> Answerer:
    if spec.strip() == RULES:
        return ExtractiveAnswerer(get_embedder(embedder) if embedder in EMBEDDER_NAMES else None)
    return ModelAnswerer(chat_model(spec, config))


def get_model_embedder(spec: str, config: ModelConfig) -> Embedder:
    """A local embedder (`use`, `e5`) or one served by a backend (`ollama:<model>`…)."""
    if spec in EMBEDDER_NAMES:
        return get_embedder(spec)
    if spec.strip().partition(":")[0] not in _FACTORIES:
        raise ConfigurationError(f"unknown embedder {spec!r} (available: "
                                 f"{', '.join(embedder_choices())})")
    return ModelEmbedder(chat_model(spec, config))


def embedder_choices() -> list[str]:
    """What DOCASSIST_EMBEDDER may name: the local embedders, `none`, `<backend>:<model>`."""
    return [*EMBEDDER_NAMES, "none", *(f"{name}:<{'file' if name == 'replay' else 'model'}>"
                                       for name in sorted(_FACTORIES))]


def _ollama(model: str, config: ModelConfig, client: httpx.Client) -> ChatModel:
    return OllamaModel(model, client, base_url=config.ollama_url)


def _openai(model: str, config: ModelConfig, client: httpx.Client) -> ChatModel:
    return OpenAIModel(model, client, base_url=config.openai_base_url,
                       api_key=config.openai_api_key,
                       azure_api_version=config.azure_api_version)


def _replay(model: str, config: ModelConfig, client: httpx.Client) -> ChatModel:
    path = Path(model)
    if not path.is_file():
        raise ConfigurationError(f"replay file {path} does not exist")
    return ReplayModel(path)


register("ollama", _ollama)
register("openai", _openai)
register("replay", _replay)
