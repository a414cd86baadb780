"""House rules that code review alone would let slip."""

from __future__ import annotations

import ast
import functools
import re
import string
import typing
from pathlib import Path

import pytest

from docassist.core import i18n
from docassist.core.statuses import TurnStatus

SRC = Path(__file__).resolve().parents[1] / "src" / "docassist"
FORBIDDEN_IN_CORE = ("docassist.storage", "docassist.bot", "docassist.models", "docassist.cli",
                     "docassist.evaluation",
                     "sqlite3", "sqlite_utils", "httpx", "slack_bolt", "slack_sdk", "aiohttp",
                     "typer", "rich", "microsoft_agents", "prometheus_client", "docassist.serving")
"""The core reports to operators through the Observer protocol (core/ports/observer.py)
only."""


def imports_of(path: Path) -> set[str]:
    return imports_of_source(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("path", sorted((SRC / "core").rglob("*.py")),
                         ids=lambda p: str(p.relative_to(SRC / "core")))
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


def test_each_text_key_lives_in_exactly_one_area_of_the_one_package() -> None:
    areas = [set(table) for table in i18n.AREAS]
    assert sum(map(len, areas)) == len(i18n.text_keys())  # no key in two areas
    assert set().union(*areas) == i18n.text_keys()
    # Text modules are the package's; nothing else in the core holds a table of sentences.
    tables = {path.relative_to(SRC / "core").as_posix() for path in (SRC / "core").rglob("*.py")
              if re.search(r"^TEXTS\b|^_TEXTS\b", path.read_text(encoding="utf-8"), re.M)}
    assert tables == {"i18n/answers.py", "i18n/chat.py", "i18n/feedback.py",
                      "i18n/sources.py", "i18n/__init__.py"}


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


# --- the seams (issue 16) ---------------------------------------------------------------

MAX_FUNCTION_LINES = 80
SHIPPED_MIGRATIONS = SRC / "storage" / "migrations.py"
"""Shipped migrations are never edited, so their length is history, not design."""


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """Module → the docassist modules it imports anywhere (functions and TYPE_CHECKING too)."""
    modules = {_module_name(path): path for path in SRC.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets.add(node.module)
                targets.update(f"{node.module}.{alias.name}" for alias in node.names)
        graph[name] = {target for target in targets if target in modules and target != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in graph[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


KNOWN_CYCLES: list[list[str]] = []
"""Nothing may join this list (the stale-note couriers now see their adapter through a
protocol, as bot/slack/listeners.py does)."""


def test_no_import_cycle_in_src_function_level_imports_included() -> None:
    graph = import_graph()
    assert sorted(cycles(graph)) == KNOWN_CYCLES
    # The checker itself sees a cycle when there is one.
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c"]]


def test_ports_is_a_leaf_of_the_core() -> None:
    graph = import_graph()
    reachable, todo = set(), list(graph["docassist.core.ports"])
    while todo:
        module = todo.pop()
        if module not in reachable:
            reachable.add(module)
            todo.extend(graph[module])
    assert "docassist.core.ports" not in reachable
    # The package's own modules are in the walk: a submodule importing back is seen.
    assert "docassist.core.ports.stores" in reachable
    assert {module for module in reachable if not module.startswith("docassist.core")} == set()


def test_no_function_in_src_is_longer_than_80_lines() -> None:
    long = [f"{path.relative_to(SRC)}:{node.name} ({node.end_lineno - node.lineno + 1})"
            for path in SRC.rglob("*.py") if path != SHIPPED_MIGRATIONS
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            and node.end_lineno is not None
            and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES]
    assert long == []


def test_the_core_declares_abilities_instead_of_probing_with_getattr() -> None:
    probing = [f"{path.relative_to(SRC)}:{node.lineno}"
               for path in (SRC / "core").rglob("*.py")
               for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
               if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
               and node.func.id == "getattr"]
    assert probing == []


def test_adapters_depend_on_protocols_not_on_the_store() -> None:
    def takes_the_store(path: Path) -> bool:
        imports = [node for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                   if isinstance(node, ast.ImportFrom)
                   and (node.module or "").startswith("docassist.storage")]
        return any(node.module == "docassist.storage.database"
                   or any(alias.name == "Store" for alias in node.names) for node in imports)

    assert {str(path.relative_to(SRC)) for path in (SRC / "bot").rglob("*.py")
            if takes_the_store(path)} == set()


def test_the_core_package_docstring_maps_every_module() -> None:
    docstring = ast.get_docstring(ast.parse((SRC / "core" / "__init__.py").read_text()))
    assert docstring
    mapped = set(re.findall(r"^\s{4}(\w+)\s", docstring, flags=re.MULTILINE))
    modules = {path.stem for path in (SRC / "core").glob("*.py") if path.stem != "__init__"}
    packages = {path.parent.name for path in (SRC / "core").glob("*/__init__.py")}
    assert packages  # ports is a package of its own
    assert (modules | packages) - mapped == set()


RENDERERS = [*(SRC / "bot").rglob("*.py"), *(SRC / "cli").rglob("*.py")]


def status_sets(source: str, name: str) -> list[str]:
    """Where a module spells out a set of turn statuses itself (two or more in one literal)."""
    statuses = set(typing.get_args(TurnStatus))
    found = []
    for node in ast.walk(ast.parse(source)):
        elements = node.elts if isinstance(node, ast.Set | ast.Tuple | ast.List) else []
        values = [e.value for e in elements if isinstance(e, ast.Constant)]
        if len(values) >= 2 and len(values) == len(elements) and set(values) <= statuses:
            found.append(f"{name}:{getattr(node, 'lineno', 0)}")
        if isinstance(node, ast.FunctionDef) and node.name == "_language":
            found.append(f"{name}:{node.lineno} _language()")
    return found


def test_renderers_take_statuses_and_languages_from_the_one_leaf_module() -> None:
    assert [hit for path in RENDERERS for hit in status_sets(
        path.read_text(encoding="utf-8"), str(path.relative_to(SRC)))] == []
    # The checker sees a renderer's own copy, as Slack and Teams each had one.
    copy = ('ANSWER_STATUSES = frozenset({"answered", "no_answer"})\n'
            'def _language(result):\n    return "pl" if result.language == "pl" else "en"\n')
    assert sorted(status_sets(copy, "copy.py")) == ["copy.py:1", "copy.py:2 _language()"]


def test_statuses_is_a_leaf() -> None:
    assert import_graph()["docassist.core.statuses"] == set()


TESTS = Path(__file__).resolve().parent


def imports_of_test_modules(source: str) -> list[str]:
    """The test modules (`test_*.py`) a module imports: shared fixtures belong in a
    conftest.py, shared helpers in a module that is not itself a test module."""
    return sorted(name for name in imports_of_source(source)
                  if name.startswith("tests.") and name.rsplit(".", 1)[-1].startswith("test_"))


def imports_of_source(source: str) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_no_test_module_imports_from_another_test_module() -> None:
    found = {str(path.relative_to(TESTS)): imports_of_test_modules(path.read_text())
             for path in TESTS.rglob("*.py") if "node_modules" not in path.parts}
    assert {path: names for path, names in found.items() if names} == {}
    # The checker sees both spellings.
    assert imports_of_test_modules("from tests.slack.test_slack_http import rig\n"
                                   "import tests.bot.test_cli\n") == [
        "tests.bot.test_cli", "tests.slack.test_slack_http"]


def test_fake_http_servers_start_only_through_the_one_base() -> None:
    """Every fake of an external HTTP system subclasses the test kit's fakes/loopback.FakeServer
    (port 0, a thread, url, stop, recorded requests) instead of repeating that plumbing."""
    def serves_http_itself(path: Path) -> bool:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        return bool({"http.server", "socketserver"} & imports_of(path)) or any(
            isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id == "LoopbackServer" for node in ast.walk(tree))

    base = TESTKIT / "fakes" / "loopback.py"
    assert serves_http_itself(base)  # the checker sees it where it is
    assert {str(path.relative_to(REPO)) for folder in (TESTS, TESTKIT)
            for path in folder.rglob("*.py")
            if path != base and "node_modules" not in path.parts
            and serves_http_itself(path)} == set()


MAX_ROOT_MODULES = 6
"""The package root holds the entry points (__init__, __main__) and the few modules every room
shares (config, runtime, logs); the rest lives in cli/, serving/ and the other packages."""


def test_the_package_root_holds_only_a_few_modules() -> None:
    root = sorted(path.name for path in SRC.glob("*.py"))
    assert "__main__.py" in root  # the checker sees the real root
    assert len(root) <= MAX_ROOT_MODULES, root


def limit_names(path: Path) -> set[str]:
    return {node.target.id for node in ast.parse(path.read_text(encoding="utf-8")).body
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)}


@functools.cache
def source_texts() -> dict[Path, str]:
    """Every module of the package, read once for the limit rules."""
    return {path: path.read_text(encoding="utf-8") for path in SRC.rglob("*.py")}


def rooms_using(name: str, defined_in: Path) -> set[str]:
    """The top-level rooms (core, storage, …; a root module is its own) whose code names
    `name`, outside the module that defines it."""
    pattern = re.compile(rf"\b{name}\b")
    return {path.relative_to(SRC).parts[0].removesuffix(".py")
            for path, text in source_texts().items()
            if path != defined_in and pattern.search(text)}


def test_a_core_limit_is_used_by_the_core_or_shared_by_several_rooms() -> None:
    """Each limit sits next to what it limits: one that only storage (say) obeys lives in
    storage/limits.py, not in the core's."""
    limits = SRC / "core" / "limits.py"
    names = limit_names(limits)
    assert "MAX_MESSAGE_CHARS" in names and rooms_using("MAX_MESSAGE_CHARS", limits) >= {"core"}
    misplaced = {name: sorted(rooms) for name in names
                 if "core" not in (rooms := rooms_using(name, limits)) and len(rooms) < 2}
    assert misplaced == {}


@pytest.mark.parametrize("room", ["storage", "sources", "serving", "models", "directory"])
def test_a_rooms_limits_are_its_own(room: str) -> None:
    limits = SRC / room / "limits.py"
    names = limit_names(limits)
    assert names
    assert {name: sorted(rooms) for name in names
            if room not in (rooms := rooms_using(name, limits))} == {}



# --- benchmarks stand on their own: bench/ and the test kit lean on tests/ for nothing, and
# the product on neither ----------------------------------------------------------------------

REPO = SRC.parents[1]
BENCH = REPO / "bench"
TESTKIT = REPO / "testkit" / "src" / "docassist_testkit"
SCRIPTS = REPO / "scripts"


def uses_of(source: str, packages: tuple[str, ...]) -> list[str]:
    """Where a module reaches into `packages`: an import of it or of a module in it (at any
    level, TYPE_CHECKING included), or a string naming it (`import_module("tests.x")`,
    `python -m tests.x`, `REPO / "tests"`)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            names = [node.value] if re.fullmatch(r"[\w.]+", node.value) else []
        found += [f"{getattr(node, 'lineno', 0)}: {name}" for name in names
                  if any(name == package or name.startswith(package + ".")
                         for package in packages)]
    return sorted(found, key=lambda where: int(where.partition(":")[0]))


def reaches_into(folder: Path, packages: tuple[str, ...]) -> dict[str, list[str]]:
    files = sorted(folder.rglob("*.py"))
    assert files, folder  # a moved folder must not make the rule pass on nothing
    return {str(path.relative_to(REPO)): uses
            for path in files if (uses := uses_of(path.read_text(encoding="utf-8"), packages))}


@pytest.mark.parametrize("folder", [BENCH, TESTKIT, SCRIPTS], ids=["bench", "testkit", "scripts"])
def test_benchmarks_and_the_test_kit_take_nothing_from_tests(folder: Path) -> None:
    """bench/ runs from a clone with docassist and the test kit installed; what it shares with
    the tests lives in the test kit, which needs nothing from tests/ either."""
    assert reaches_into(folder, ("tests",)) == {}
    # The checker sees every spelling, and not a look-alike.
    assert uses_of("import tests\nimport tests.pg as pg\nfrom tests.fakes import x\n"
                   "def f():\n    from tests import helpers\n"
                   "importlib.import_module('tests.slack_load')\n"
                   "from testsuite import y\n'see tests/pg.py'\n", ("tests",)) == [
        "1: tests", "2: tests.pg", "3: tests.fakes", "5: tests", "6: tests.slack_load"]


def path_edits(source: str) -> list[str]:
    """Where a module edits the import path: `sys.path` touched at all (`from sys import path`
    too), `site.addsitedir`, or PYTHONPATH named (set for itself or for a child process)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Attribute) and node.attr == "path"
                and isinstance(node.value, ast.Name) and node.value.id == "sys"):
            found.append(f"{node.lineno}: sys.path")
        elif isinstance(node, ast.ImportFrom) and node.module == "sys" and any(
                alias.name == "path" for alias in node.names):
            found.append(f"{node.lineno}: from sys import path")
        elif isinstance(node, ast.Attribute) and node.attr == "addsitedir":
            found.append(f"{node.lineno}: addsitedir")
        elif (isinstance(node, ast.Constant) and isinstance(node.value, str)
              and "PYTHONPATH" in node.value):
            found.append(f"{node.lineno}: PYTHONPATH")
    return sorted(found, key=lambda where: int(where.partition(":")[0]))


def test_no_benchmark_edits_the_import_path() -> None:
    """`python bench/x.py` (or scripts/x.py) finds its siblings (the script's folder is on the
    path) and docassist and the test kit (installed): a path edit would hide a missing
    install."""
    files = sorted([*BENCH.rglob("*.py"), *SCRIPTS.rglob("*.py")])
    assert files
    assert {str(path.relative_to(REPO)): edits for path in files
            if (edits := path_edits(path.read_text(encoding="utf-8")))} == {}
    assert path_edits("import sys, site\nsys.path.insert(0, 'x')\nsys.path += ['y']\n"
                      "from sys import path\nsite.addsitedir('z')\n"
                      "env = {'PYTHONPATH': '.'}\nos.path.join('a')\n") == [
        "2: sys.path", "3: sys.path", "4: from sys import path", "5: addsitedir",
        "6: PYTHONPATH"]


def test_the_product_takes_nothing_from_the_tests_or_the_test_kit() -> None:
    """The wheel holds src/docassist only: an import of the test kit or of tests/ would
    fail wherever it is installed."""
    assert reaches_into(SRC, ("tests", "docassist_testkit")) == {}
    assert uses_of("from docassist_testkit.fakes.slack_api import FakeSlackApi\n",
                   ("tests", "docassist_testkit")) == ["1: docassist_testkit.fakes.slack_api"]


ARRIVAL = ("admission", "ratelimit", "inbox", "delivery", "ack_writes", "turn_processes")
"""What stores, acks and hands a platform's events to turns: serving machinery, not the core's."""


def test_the_arrival_machinery_lives_in_serving_not_in_the_core() -> None:
    assert [name for name in ARRIVAL if not (SRC / "serving" / f"{name}.py").exists()] == []
    assert [name for name in ARRIVAL if (SRC / "core" / f"{name}.py").exists()] == []


@pytest.mark.parametrize("room", ["storage", "sources", "models", "directory"])
def test_the_rooms_serving_stands_on_import_nothing_from_it(room: str) -> None:
    paths = sorted((SRC / room).rglob("*.py"))
    assert paths
    assert {str(path.relative_to(SRC)): sorted(name for name in imports_of(path)
                                                if name.startswith("docassist.serving"))
            for path in paths} == {str(path.relative_to(SRC)): [] for path in paths}


INBOX_WRITES = frozenset({"enqueue", "enqueue_soon"})
BATCHED_WRITES = ("core/batching.py", "core/ports/inbox.py", "storage/")
"""Where a blocking write may have a non-blocking `…_soon` twin: the batching primitive,
the stores' group commit and the inbox port that names it."""


def calls_of(source: str, names: frozenset[str]) -> list[str]:
    return [node.func.attr for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr in names]


def test_a_platform_event_reaches_the_inbox_one_way() -> None:
    """Every platform's message goes adapter → Admission.store → InboxWorker.store → the
    store's group commit: only the inbox worker writes an event into the inbox."""
    writers = {str(path.relative_to(SRC)) for path, text in source_texts().items()
               if calls_of(text, INBOX_WRITES)}
    assert writers == {"serving/inbox.py"}


def test_no_x_soon_twins_above_the_store() -> None:
    """Above the store, one path returns a Future and a caller that must answer waits on it
    (ack_writes.stored_within), instead of a blocking `x` mirrored by an `x_soon`."""
    twins = sorted(f"{path.relative_to(SRC)}:{node.name}"
                   for path, text in source_texts().items()
                   if not str(path.relative_to(SRC)).startswith(BATCHED_WRITES)
                   for node in ast.walk(ast.parse(text))
                   if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
                   and node.name.endswith("_soon"))
    assert twins == []


# --- storage written once (issue 26, part 2) ----------------------------------------------

THE_TWO_STORES = frozenset({"Store", "PostgresStore"})
"""Callers are typed by the role protocols of storage/roles.py and core/ports/, which both
stores satisfy: a union of the two would let a caller lean on either one's extras."""


def _union_members(node: ast.expr, aliases: dict[str, str]) -> set[str]:
    """The names a union expression joins (`A | B`, `Union[A, B]`, `Optional[A]`, nested),
    import aliases resolved to the imported name; empty for anything else."""
    def named(expr: ast.expr) -> str:
        name = expr.id if isinstance(expr, ast.Name) else (
            expr.attr if isinstance(expr, ast.Attribute) else "")
        return aliases.get(name, name)

    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return (_union_members(node.left, aliases) or {named(node.left)}) | (
            _union_members(node.right, aliases) or {named(node.right)})
    if isinstance(node, ast.Subscript) and named(node.value) in {"Union", "Optional"}:
        members = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        return set().union(*(_union_members(m, aliases) or {named(m)} for m in members))
    return set()


def store_unions(source: str, name: str) -> list[str]:
    """Where a module joins the two stores in one type: an annotation, an alias of any name
    (`X: TypeAlias = …`, a plain assignment), quoted or not."""
    tree = ast.parse(source)
    aliases = {alias.asname: alias.name for node in ast.walk(tree)
               if isinstance(node, ast.ImportFrom) for alias in node.names
               if alias.asname and alias.name in THE_TWO_STORES}
    found = []
    for node in ast.walk(tree):
        expressions = [node] if isinstance(node, ast.expr) else []
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and all(
                store in node.value for store in THE_TWO_STORES):
            try:  # a quoted annotation
                expressions = [ast.parse(node.value.strip(), mode="eval").body]
            except SyntaxError:
                expressions = []
        if any(_union_members(expr, aliases) >= THE_TWO_STORES for expr in expressions):
            found.append(f"{name}:{getattr(node, 'lineno', 0)}")
    return sorted(set(found))


def test_no_union_of_the_two_stores_in_src() -> None:
    assert [hit for path in SRC.rglob("*.py") for hit in store_unions(
        path.read_text(encoding="utf-8"), str(path.relative_to(SRC)))] == []
    # The checker sees every spelling of it, under any name.
    planted = ("from typing import Optional, TypeAlias, Union\n"
               "from docassist.storage.postgres import PostgresStore as Pg\n"
               "AnyStore: TypeAlias = Store | PostgresStore\n"
               "def f(store: Union[PostgresStore, Store]) -> None: ...\n"
               "kept: Optional[Union[Store, PostgresStore]] = None\n"
               "quoted: 'Store | PostgresStore | None' = None\n"
               "Either = Store | Pg\n"
               "Backend = typing.Union[storage.Store, postgres.PostgresStore]\n"
               "fine: Store | None = None\n")
    assert store_unions(planted, "planted.py") == [
        "planted.py:3", "planted.py:4", "planted.py:5", "planted.py:6", "planted.py:7",
        "planted.py:8"]
