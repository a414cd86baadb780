"""The reference pages, generated from the code while the site builds (a MkDocs hook:
`hooks:` in mkdocs.yml).

- `reference/cli.md`: every command of the Typer app, with its usage, help, arguments and
  options (hidden commands and options stay hidden);
- `reference/settings.md`: every pydantic-settings class of `docassist.config`, with the
  environment variables each field is read from (as pydantic-settings reads them: prefix,
  aliases, case), type, default and description;
- `reference/metrics.md`: every Prometheus metric of `GET /metrics`, with the name as
  exposed, type, labels and help.

They are virtual files (`File.generated`): nothing is written into docs/, so a fresh clone
builds them and nothing generated is committed. Where each thing is defined is one small
function below (`_cli_app`, `_settings_module`, `_metrics_registry`): when a module moves,
that is the one line to change. A setting, command or option without a description, or a
metric without help, is a warning, which `strict: true` turns into a failed build.
"""

from __future__ import annotations

import html
import inspect
import logging
import re
import types
from collections.abc import Iterator, Sequence
from enum import Enum
from pathlib import PurePath
from typing import Any, Literal, Union, get_args, get_origin

import typer
import typer.main
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files
from prometheus_client import CollectorRegistry
from prometheus_client.metrics import MetricWrapperBase
from prometheus_client.metrics_core import Metric
from pydantic import SecretStr
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, EnvSettingsSource
from typer.core import TyperArgument, TyperGroup, TyperOption

log = logging.getLogger("mkdocs.hooks.reference")
"""Under `mkdocs`: its warnings count for `strict: true`."""

CLI_PAGE = "reference/cli.md"
SETTINGS_PAGE = "reference/settings.md"
METRICS_PAGE = "reference/metrics.md"


# --- where things are defined: one line each ------------------------------------------


def _cli_app() -> typer.Typer:
    """The `docassist` command (pyproject's `[project.scripts]` runs `docassist.cli:main`)."""
    from docassist.cli import app

    return app


def _settings_module() -> types.ModuleType:
    """The module whose pydantic-settings classes are the configuration."""
    from docassist import config

    return config


def _metrics_registry() -> CollectorRegistry:
    """A registry holding every metric `GET /metrics` exposes, store-read ones included."""
    from docassist.serving.metrics import Metrics

    return Metrics(store=_EmptyStore()).registry


class _EmptyStore:
    """Nothing stored: the collectors read at scrape time still describe their metrics."""

    def inbox_backlog(self) -> Any:
        return types.SimpleNamespace(pending=0, oldest_received_at=None)

    def source_statuses(self) -> list[Any]:
        return []


# --- the hook --------------------------------------------------------------------------


def on_files(files: Files, config: MkDocsConfig) -> Files:
    for src_uri, content in ((CLI_PAGE, cli_page()), (SETTINGS_PAGE, settings_page()),
                             (METRICS_PAGE, metrics_page())):
        files.append(File.generated(config, src_uri, content=content))
    return files


# --- Markdown helpers ------------------------------------------------------------------


def _inline(text: str) -> str:
    """Text for a Markdown table cell or paragraph: `code` spans become <code>, everything
    else is escaped (no HTML, emphasis or links from help texts), lines are joined."""
    joined = " ".join(text.split())
    parts = joined.split("`")
    if len(parts) % 2 == 0:  # an unpaired backtick: no code spans at all
        parts = [joined]
    cells = []
    for index, part in enumerate(parts):
        if index % 2:
            cells.append(_code(part))
        else:
            escaped = html.escape(part, quote=False).replace("|", "&#124;")
            cells.append(re.sub(r"([\\`*_\[\]])", r"\\\1", escaped))
    return "".join(cells)


def _paragraphs(text: str) -> str:
    """A docstring-like help text as Markdown paragraphs."""
    return "\n\n".join(_inline(block) for block in re.split(r"\n\s*\n", text.strip()) if block)


def _code(text: str) -> str:
    return f"<code>{html.escape(text).replace('|', '&#124;')}</code>"


def _table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


# --- the command line ------------------------------------------------------------------


def _anchor(command_path: str) -> str:
    """The heading id MkDocs gives `## docassist eval canary` (command names are
    lower-case words and hyphens)."""
    return command_path.lower().replace(" ", "-")


def _commands(group: TyperGroup, ctx: typer.Context) -> Iterator[tuple[Any, typer.Context]]:
    """The group's visible sub-commands, each with its context (for its full usage)."""
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if command is None or command.hidden:
            continue
        yield command, typer.Context(command, info_name=name, parent=ctx)


def _param_type(param: Any, ctx: typer.Context) -> str:
    if isinstance(param, TyperArgument | TyperOption):
        if getattr(param, "is_flag", False):
            return "flag"
        return _inline(param.display_type(ctx).strip("<>"))
    return _inline(str(getattr(getattr(param, "type", None), "name", "")))


def _param_default(param: Any) -> str:
    if param.required:
        return "required"
    show = getattr(param, "show_default", True)
    if show is False:
        return "—"
    if isinstance(show, str):
        return _inline(show)
    default = param.default
    if getattr(param, "is_flag", False):
        if param.secondary_opts:
            return _code(param.opts[0] if default else param.secondary_opts[0])
        return "on" if default else "off"
    if callable(default):
        return "computed"
    if default is None or default == () or default == []:
        return "—"
    if isinstance(default, Enum):
        default = default.value
    if isinstance(default, list | tuple):
        return ", ".join(_code(str(item)) for item in default)
    return _code(str(default))


def _param_row(param: Any, ctx: typer.Context, command_path: str) -> tuple[str, ...]:
    help_text = getattr(param, "help", None) or ""
    if not help_text:
        log.warning("`%s`: %s has no help", command_path, param.name)
    if param.param_type_name == "argument":
        name = _code(str(param.name).upper())
    else:
        name = " / ".join(_code(opt) for opt in [*param.opts, *param.secondary_opts])
    return name, _param_type(param, ctx), _param_default(param), _inline(help_text)


def _command_section(command: Any, ctx: typer.Context, depth: int) -> list[str]:
    path = ctx.command_path
    help_text = inspect.cleandoc(command.help or "").partition("\f")[0]
    if not help_text:
        log.warning("`%s` has no help", path)
    usage = command.get_usage(ctx).removeprefix("Usage:").strip()
    lines = [f"{'#' * min(depth + 2, 6)} {path}", "", "```text", usage, "```", "",
             _paragraphs(help_text), ""]
    params = [p for p in command.params if not getattr(p, "hidden", False)]
    arguments = [_param_row(p, ctx, path) for p in params if p.param_type_name == "argument"]
    options = [_param_row(p, ctx, path) for p in params if p.param_type_name != "argument"]
    if arguments:
        lines += [_table(("argument", "type", "default", "description"), arguments), ""]
    if options:
        lines += [_table(("option", "type", "default", "description"), options), ""]
    if isinstance(command, TyperGroup):
        subcommands = list(_commands(command, ctx))
        lines += [_table(("command", "what it does"), [
            (f"[{sub_ctx.command_path}](#{_anchor(sub_ctx.command_path)})",
             _inline(sub.get_short_help_str(limit=200))) for sub, sub_ctx in subcommands]), ""]
        for sub, sub_ctx in subcommands:
            lines += _command_section(sub, sub_ctx, depth + 1)
    return lines


def cli_page() -> str:
    group = typer.main.get_group(_cli_app())
    root = typer.Context(group, info_name="docassist")
    return "\n".join([
        "# Command line",
        "",
        "Generated from the Typer app (`docassist.cli`) each time this site is built, so it "
        "lists what the installed `docassist` accepts; `docassist COMMAND --help` prints the "
        "same. With `--json`, stdout holds exactly one JSON document; progress, notes and "
        "errors go to stderr. Configuration errors exit 2. The environment variables every "
        "command reads are in [Settings](settings.md).",
        "",
        *_command_section(group, root, 0),
    ])


# --- the settings ----------------------------------------------------------------------


def settings_classes() -> list[type[BaseSettings]]:
    """The pydantic-settings classes defined in the settings module, in source order."""
    module = _settings_module()
    return [value for value in vars(module).values()
            if isinstance(value, type) and issubclass(value, BaseSettings)
            and value is not BaseSettings and value.__module__ == module.__name__]


def env_names(cls: type[BaseSettings], name: str, field: FieldInfo) -> list[str]:
    """The environment variables pydantic-settings fills this field from, as it looks them
    up (its own rule: prefix, aliases, `populate_by_name`), first the one to use. The rule
    is its `_extract_field_info`, private: the build test sets each name and checks that
    the field is read, so a change there fails it rather than the page going wrong."""
    source = EnvSettingsSource(cls)
    found = [env for _key, env, _complex in source._extract_field_info(field, name)]
    if not cls.model_config.get("case_sensitive", False):
        found = [env.upper() for env in found]
    return list(dict.fromkeys(found))


_BASIC_TYPES = {str: "text", int: "integer", float: "number", bool: "boolean",
                SecretStr: "secret text"}


def _annotation_name(annotation: Any) -> str:
    origin = get_origin(annotation)
    if origin is Literal:
        return "one of " + ", ".join(_code(str(choice)) for choice in get_args(annotation))
    if origin in (Union, types.UnionType):
        kinds = [_annotation_name(arg) for arg in get_args(annotation) if arg is not type(None)]
        return " or ".join(kinds)
    if isinstance(annotation, type):
        if issubclass(annotation, PurePath):
            return "path"
        return _BASIC_TYPES.get(annotation, annotation.__name__)
    return str(annotation)


def _bounds(field: FieldInfo) -> str:
    signs = {"ge": "≥", "gt": ">", "le": "≤", "lt": "<"}
    found = [f"{sign} {getattr(rule, attribute)}" for rule in field.metadata
             for attribute, sign in signs.items() if hasattr(rule, attribute)]
    return f" ({', '.join(found)})" if found else ""


def _setting_default(field: FieldInfo) -> str:
    if field.is_required():
        return "required"
    if field.default_factory is not None:
        return "computed (see description)"
    default = field.default
    if default is None:
        return "unset"
    if isinstance(default, SecretStr):  # never a secret's value
        return "set"
    if isinstance(default, bool):
        return _code("true" if default else "false")
    if default == "":
        return "empty"
    return _code(str(default))


def _settings_section(cls: type[BaseSettings]) -> list[str]:
    doc = inspect.cleandoc(cls.__doc__ or "")
    if not doc:
        log.warning("settings class %s has no docstring", cls.__name__)
    rows = []
    extra_names = False
    for name, field in cls.model_fields.items():
        names = env_names(cls, name, field)
        if not field.description:
            log.warning("setting %s (%s.%s) has no description", names[0], cls.__name__, name)
        cell = _code(names[0])
        if len(names) > 1:
            extra_names = True
            cell += " (also " + ", ".join(_code(other) for other in names[1:]) + ")"
        rows.append((cell, _annotation_name(field.annotation) + _bounds(field),
                     _setting_default(field), _inline(field.description or "")))
    lines = [f"## {cls.__name__}", "", _paragraphs(doc), "",
             _table(("variable", "type", "default", "description"), rows), ""]
    if extra_names:
        lines += ["The names in parentheses are read too: this class also accepts each "
                  "field's own name (pydantic's `populate_by_name`). Set the first name; "
                  "a variable of the other name in the service's environment is taken as "
                  "well.", ""]
    return lines


def settings_page() -> str:
    classes = settings_classes()
    case = ("" if any(cls.model_config.get("case_sensitive", False) for cls in classes)
            else " Names are not case sensitive.")
    lines = [
        "# Settings: environment variables",
        "",
        "Generated from the pydantic-settings classes of `docassist.config` each time this "
        f"site is built. Every setting comes from the environment.{case} Values are checked "
        "when a command reads them, before anything runs: a value of the wrong type or out "
        "of range is a configuration error (exit 2). Secrets (tokens, passwords, API keys) "
        "come from the environment only; JSON logs replace the value of every variable "
        "named like a secret by `[redacted]` ([One server](../serving.md)).",
        "",
    ]
    for cls in classes:
        lines += _settings_section(cls)
    lines += [
        "## Read elsewhere",
        "",
        "A few variables are read directly rather than through these classes: "
        "`DOCASSIST_LOG_FORMAT` and `DOCASSIST_LOG_LEVEL` (see "
        "[One server](../serving.md)), `DOCASSIST_CONFLUENCE_EMAIL` and "
        "`DOCASSIST_CONFLUENCE_TOKEN` (see [Document sources](../sources.md)), and the "
        "variable a web source names with `--auth-env`.",
        "",
    ]
    return "\n".join(lines)


# --- the metrics -----------------------------------------------------------------------

_SERIES = {"counter": ("_total",), "histogram": ("_bucket", "_sum", "_count"),
           "gauge": ("",), "summary": ("_sum", "_count"), "info": ("_info",)}
"""The series prometheus_client exposes for a metric of each type (beside `_created`)."""


MetricFamily = tuple[Metric, tuple[str, ...], bool, tuple[float, ...]]
"""A family, its label names, whether this process counts it, a histogram's bucket bounds."""


def metric_families() -> list[MetricFamily]:
    """Each metric family with its label names, whether this process counts it (False:
    computed at each scrape) and, for a histogram, its buckets' upper bounds (+Inf aside).
    prometheus_client keeps a registry's collectors, a metric's label names and a
    histogram's bounds in private attributes (`_collector_to_names`, `_labelnames`,
    `_upper_bounds`); a metric without samples has no other record of them."""
    registry = _metrics_registry()
    found = []
    for collector in list(registry._collector_to_names):
        if isinstance(collector, MetricWrapperBase):
            bounds = tuple(bound for bound in getattr(collector, "_upper_bounds", ())
                           if bound != float("inf"))
            for family in collector.describe():
                found.append((family, tuple(collector._labelnames), True, bounds))
        else:
            for family in collector.collect():
                labels = tuple(getattr(family, "_labelnames", ()))
                found.append((family, labels, False, ()))
    return found


def exposed_names(family: Metric) -> list[str]:
    """The series names `GET /metrics` shows for the family, `_created` aside."""
    return [family.name + suffix for suffix in _SERIES.get(family.type, ("",))]


def metrics_page() -> str:
    rows = []
    for family, labels, in_process, bounds in metric_families():
        if not family.documentation:
            log.warning("metric %s has no help", family.name)
        names = exposed_names(family)
        name = _code(names[0]) if len(names) == 1 else _code(family.name) + " (" + ", ".join(
            _code(series.removeprefix(family.name)) for series in names) + ")"
        rows.append((name, family.type, ", ".join(_code(label) for label in labels) or "—",
                     "this process" if in_process else "read at each scrape",
                     ", ".join(f"{bound:g}" for bound in bounds) or "—",
                     _inline(family.documentation)))
    return "\n".join([
        "# Metrics",
        "",
        "Generated from the metric definitions each time this site is built: what "
        "`GET /metrics` of `docassist serve`, `docassist slack --http` and `docassist "
        "teams` exposes, in the Prometheus text format. Counters and histograms also "
        "expose a `_created` series (prometheus_client's default). *This process*: counted "
        "by the serving process (its turn processes report to it), so sum over replicas; "
        "*read at each scrape*: read from the database all replicas share, so every "
        "replica shows the same value. How to scrape and what to alert on: "
        "[Metrics](../operator/metrics.md).",
        "",
        _table(("metric", "type", "labels", "counted", "buckets (le)", "help"), rows),
        "",
    ])
