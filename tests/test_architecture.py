"""House rules that code review alone would let slip."""

from __future__ import annotations

import ast
import re
import string
from pathlib import Path

import pytest

from docassist.core import i18n

SRC = Path(__file__).resolve().parents[1] / "src" / "docassist"
FORBIDDEN_IN_CORE = ("docassist.storage", "docassist.bot", "docassist.models", "docassist.cli",
                     "sqlite3", "sqlite_utils", "httpx", "slack_bolt", "slack_sdk", "aiohttp",
                     "typer", "rich", "microsoft_agents")


def imports_of(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


@pytest.mark.parametrize("path", sorted((SRC / "core").glob("*.py")), ids=lambda p: p.name)
def test_core_imports_no_platform_storage_or_http(path: Path) -> None:
    bad = {name for name in imports_of(path)
           if any(name == f or name.startswith(f + ".") for f in FORBIDDEN_IN_CORE)}
    assert bad == set()


def test_sql_is_written_only_in_storage() -> None:
    sql = re.compile(r"\b(?:SELECT|INSERT|UPDATE|DELETE)\s+(?:\*|INTO|FROM|\w+\s+SET)\b")
    offenders = [path.relative_to(SRC) for path in SRC.rglob("*.py")
                 if "storage" not in path.parts and sql.search(path.read_text(encoding="utf-8"))]
    assert offenders == []


def test_every_text_exists_in_every_language_with_the_same_placeholders() -> None:
    formatter = string.Formatter()
    for key in i18n.text_keys():
        fields = {}
        for language in i18n.LANGUAGES:
            template = i18n.template(key, language)
            fields[language] = {name for _, name, _, _ in formatter.parse(template) if name}
            assert i18n.text(key, language, **dict.fromkeys(fields[language], "x"))
        assert len({frozenset(names) for names in fields.values()}) == 1, key


@pytest.mark.parametrize(("text", "language"), [
    ("Jak sprawdzić stan usługi?", "pl"), ("jak zrobic kopie zapasowa bazy danych", "pl"),
    ("How do I check the status?", "en"), ("DOC-TLS", "en")])
def test_reply_language_follows_the_user(text: str, language: str) -> None:
    assert i18n.detect_language(text, "en") == language


@pytest.mark.parametrize(("adapter", "foreign"), [
    ("slack", ("microsoft_agents", "aiohttp", "docassist.bot.teams")),
    ("teams", ("slack_bolt", "slack_sdk", "docassist.bot.slack"))])
def test_platform_adapters_do_not_lean_on_each_other(adapter: str,
                                                     foreign: tuple[str, ...]) -> None:
    used = set().union(*(imports_of(path) for path in (SRC / "bot" / adapter).glob("*.py")))
    assert {name for name in used if name.startswith(foreign)} == set()
