"""The terminal adapter: a Rich REPL where one session is one thread."""

from docassist.bot.terminal.chat import ChatSession, render_result

__all__ = ["ChatSession", "render_result"]
