"""Backends by name, as plugins register them.

`DOCASSIST_MODEL` (selection), `DOCASSIST_ANSWER_MODEL` (answers) and `DOCASSIST_EMBEDDER`
each name a backend independently: `rules`, `ollama:<model>`, `openai:<model>`,
`replay:<file>` (and for embeddings also the local `use` / `e5`). One registry holds them
all: a chat-model backend is one `register(name, factory)` call, any other kind one
`register_backend(Backend(...))`, and the built-ins (at the end of this module) register
exactly that way — `rules` included.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import httpx

from docassist.core.errors import ConfigurationError
from docassist.core.examples import BankExamples
from docassist.core.extractive import ExtractiveAnswerer
from docassist.core.learned import LearnedSelector
from docassist.core.ports import NULL_OBSERVER, Answerer, Embedder, Observer, SelectorModel
from docassist.models.adapters import ModelAnswerer, ModelEmbedder, ModelSelector
from docassist.models.base import DEFAULT_TIMEOUT_SECONDS, ChatModel, RetryPolicy, new_client
from docassist.models.embedders import EMBEDDER_NAMES, get_embedder
from docassist.models.gate import GatedChatModel, ModelGate
from docassist.models.observed import ObservedChatModel
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
    observer: Observer = field(default=NULL_OBSERVER, repr=False, compare=False)
    """Told of every model call and retry (metrics, in `docassist serve`)."""
    gate: ModelGate | None = field(default=None, repr=False, compare=False)
    """This process's limit on model requests at once (models/gate.py); None: no limit."""


ChatModelFactory = Callable[[str, ModelConfig, httpx.Client], ChatModel]
SelectorFactory = Callable[[str, ModelConfig, str], SelectorModel]
"""(model, config, embedder name) → a selector; the embedder is the one retrieval uses."""
AnswererFactory = Callable[[str, ModelConfig, str], Answerer]
EmbedderFactory = Callable[[str, ModelConfig], Embedder]


@dataclass(frozen=True)
class Backend:
    """One entry of the registry: what a backend can be (selector, answerer, embedder).

    A chat-model backend (`register(name, factory)`) can be all three; `rules` selects and
    answers without a model; `use` and `e5` only embed. The built-ins register through
    `register_backend` exactly as a third-party backend would."""

    name: str
    selector: SelectorFactory | None = None
    answerer: AnswererFactory | None = None
    embedder: EmbedderFactory | None = None
    chat: ChatModelFactory | None = None
    needs_model: bool = True
    """Named `<backend>:<model>` (True) or by its name alone (`rules`, `use`)."""


_BACKENDS: dict[str, Backend] = {}


def register_backend(backend: Backend) -> None:
    _BACKENDS[backend.name] = backend


def backends() -> dict[str, Backend]:
    """Every registered backend by name (a copy)."""
    return dict(_BACKENDS)


def register(name: str, factory: ChatModelFactory) -> None:
    """Make `<name>:<model>` resolve to `factory(model, config, client)`, usable as selector,
    answerer and embedder."""
    register_backend(Backend(
        name=name, chat=factory,
        selector=lambda model, config, _: ModelSelector(chat_model(f"{name}:{model}", config),
                                                        BankExamples(_selector_embedder)),
        answerer=lambda model, config, _: ModelAnswerer(chat_model(f"{name}:{model}", config)),
        embedder=lambda model, config: ModelEmbedder(chat_model(f"{name}:{model}", config))))


def _chat_backends() -> list[str]:
    return sorted(name for name, backend in _BACKENDS.items() if backend.chat is not None)


def backend_names() -> list[str]:
    """What DOCASSIST_MODEL may name."""
    return [RULES, *_chat_backends()]


def _local_embedders() -> list[str]:
    return [name for name, backend in _BACKENDS.items()
            if backend.embedder is not None and not backend.needs_model]


def chat_model(spec: str, config: ModelConfig, client: httpx.Client | None = None
               ) -> ChatModel:
    name, _, model = spec.strip().partition(":")
    factory = _BACKENDS[name].chat if name in _BACKENDS else None
    if factory is None:
        raise ConfigurationError(
            f"unknown model backend {name!r} (available: {', '.join(backend_names())})")
    if not model:
        raise ConfigurationError(f"model backend {name!r} needs a model: {name}:<model>")
    built = factory(model, config, client or new_client(config.timeout_seconds))
    if config.record_path is not None and name != "replay":
        built = ReplayModel(config.record_path, inner=built)
    if config.observer is not NULL_OBSERVER:
        built = ObservedChatModel(built, config.observer)
    if config.gate is not None:  # outside the timing: waiting here is not the model's latency
        built = GatedChatModel(built, config.gate)
    return built


def _backend_for(spec: str) -> tuple[Backend | None, str]:
    name, _, model = spec.strip().partition(":")
    backend = _BACKENDS.get(name)
    if backend is not None and not backend.needs_model and model:
        return None, model  # `rules:x` names nothing
    return backend, model


def get_selector(spec: str, config: ModelConfig, embedder: str = "none") -> SelectorModel:
    backend, model = _backend_for(spec)
    if backend is None or backend.selector is None:
        chat_model(spec, config)  # raises the error that lists the backends
        raise AssertionError("unreachable")
    return backend.selector(model, config, embedder)


def get_answerer(spec: str, config: ModelConfig, embedder: str = "none") -> Answerer:
    backend, model = _backend_for(spec)
    if backend is None or backend.answerer is None:
        chat_model(spec, config)
        raise AssertionError("unreachable")
    return backend.answerer(model, config, embedder)


def get_model_embedder(spec: str, config: ModelConfig) -> Embedder:
    """A local embedder (`use`, `e5`) or one served by a backend (`ollama:<model>`…)."""
    backend, model = _backend_for(spec)
    if backend is None or backend.embedder is None:
        raise ConfigurationError(f"unknown embedder {spec!r} (available: "
                                 f"{', '.join(embedder_choices())})")
    return backend.embedder(model, config)


def embedder_choices() -> list[str]:
    """What DOCASSIST_EMBEDDER may name: the local embedders, `none`, `<backend>:<model>`."""
    return [*_local_embedders(), "none",
            *(f"{name}:<{'file' if name == 'replay' else 'model'}>" for name in _chat_backends())]


def _local(embedder: str) -> Embedder | None:
    return get_embedder(embedder) if embedder in EMBEDDER_NAMES else None


def _local_embedder(name: str) -> EmbedderFactory:
    def build(model: str, config: ModelConfig) -> Embedder:
        return get_embedder(name)
    return build


def _selector_embedder() -> Embedder:
    """The embedder the learned selector was trained with and a model's worked examples are
    found by: USE, whatever DOCASSIST_EMBEDDER names for retrieval."""
    return get_embedder("use")


def _rules_selector(model: str, config: ModelConfig, embedder: str) -> SelectorModel:
    """The model-free default: exact rules and the classifier learned from the bank
    (`core/learned.py`); it reads messages with USE, the embedder it was trained with."""
    return LearnedSelector(_selector_embedder)


def _rules_answerer(model: str, config: ModelConfig, embedder: str) -> Answerer:
    return ExtractiveAnswerer(_local(embedder))


def _ollama(model: str, config: ModelConfig, client: httpx.Client) -> ChatModel:
    return OllamaModel(model, client, base_url=config.ollama_url,
                       policy=RetryPolicy(on_retry=config.observer.model_retried))


def _openai(model: str, config: ModelConfig, client: httpx.Client) -> ChatModel:
    return OpenAIModel(model, client, base_url=config.openai_base_url,
                       api_key=config.openai_api_key,
                       azure_api_version=config.azure_api_version,
                       policy=RetryPolicy(on_retry=config.observer.model_retried))


def _replay(model: str, config: ModelConfig, client: httpx.Client) -> ChatModel:
    path = Path(model)
    if not path.is_file():
        raise ConfigurationError(f"replay file {path} does not exist")
    return ReplayModel(path)


# The built-ins, registered as any third-party backend would be.
register_backend(Backend(RULES, selector=_rules_selector, answerer=_rules_answerer,
                         needs_model=False))
for _name in EMBEDDER_NAMES:
    register_backend(Backend(_name, embedder=_local_embedder(_name), needs_model=False))
register("ollama", _ollama)
register("openai", _openai)
register("replay", _replay)
