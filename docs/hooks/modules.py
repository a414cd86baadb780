"""A MkDocs hook: `reference/modules.md`, the module map, generated from the code at build time.

Every module and package under src/docassist and testkit/src/docassist_testkit, room by room,
with the first paragraph of its docstring (read with `ast`: nothing is imported). A virtual
file, like the other reference pages: a fresh clone builds it and nothing is committed. A
module without a docstring is a build warning, which `--strict` turns into a failure.
"""

from __future__ import annotations

import ast
import logging
from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files

MODULES_PAGE = "reference/modules.md"
REPO = Path(__file__).resolve().parents[2]
PACKAGES = (REPO / "src" / "docassist", REPO / "testkit" / "src" / "docassist_testkit")
log = logging.getLogger("mkdocs.plugins.docassist.modules")


def summary(path: Path) -> str:
    """The first paragraph of a module's docstring, on one line."""
    docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    first = docstring.strip().split("\n\n", 1)[0]
    if not first:
        log.warning("module %s has no docstring", path.relative_to(REPO))
    return " ".join(first.split()).replace("|", "\\|")


def dotted(path: Path, root: Path) -> str:
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def rooms(root: Path) -> dict[str, list[Path]]:
    """The package's top-level modules (as one room), then each sub-package and its modules."""
    found: dict[str, list[Path]] = {}
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root)
        room = relative.parts[0] if len(relative.parts) > 1 else ""
        found.setdefault(room, []).append(path)
    return found


def modules_page() -> str:
    lines = ["# Module map", "",
             "Generated from the code each time this site is built: every module, room by "
             "room, with the first paragraph of its docstring. [Architecture](../architecture.md)"
             " tells how the rooms work together.", ""]
    for root in PACKAGES:
        for room, paths in rooms(root).items():
            title = f"{root.name}.{room}" if room else f"{root.name} (the package root)"
            lines += [f"## {title}", "", "| module | what it is |", "|---|---|"]
            lines += [f"| `{dotted(path, root)}` | {summary(path)} |" for path in paths]
            lines.append("")
    return "\n".join(lines)


def on_files(files: Files, config: MkDocsConfig) -> Files:
    files.append(File.generated(config, MODULES_PAGE, content=modules_page()))
    return files
