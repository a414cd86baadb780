"""Model backends behind one small protocol, chosen by name from a registry."""

from docassist.models.registry import (
    ModelConfig,
    backend_names,
    chat_model,
    get_answerer,
    get_model_embedder,
    get_selector,
    register,
)

__all__ = [
    "ModelConfig",
    "backend_names",
    "chat_model",
    "get_answerer",
    "get_model_embedder",
    "get_selector",
    "register",
]
