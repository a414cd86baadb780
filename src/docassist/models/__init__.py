"""Model backends behind one small protocol, chosen by name from a registry."""

from docassist.models.registry import Backend, get_backend, register

__all__ = ["Backend", "get_backend", "register"]
