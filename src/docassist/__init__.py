"""DocAssist: a document assistant for chat that answers from cited chunks."""

__version__ = "0.1.0"
