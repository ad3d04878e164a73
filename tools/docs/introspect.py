"""The live command line, walked into plain objects: every command, argument and option
with its metavar, help text and default, as the man page shows them."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from tools.docs import PROG


def cli_command() -> Any:
    """The click command typer builds from :data:`kmeta.cli.app`."""
    import typer

    from kmeta.cli import app

    return typer.main.get_command(app)


@dataclass
class ParamDoc:
    """One argument or option of a command, as the man page shows it."""

    kind: str  # "argument" or "option"
    name: str
    names: list[str]  # option strings ("-r", "--records"), or [name] for an argument
    secondary: list[str]  # "--no-x" style negations
    metavar: str | None  # None for flags
    choices: list[str]
    help: str
    default: str | None
    required: bool
    multiple: bool
    nargs: int
    minimum: Any = None
    maximum: Any = None
    envvar: str | None = None


@dataclass
class CommandDoc:
    """One command (the root group included) with its parameters and subcommands."""

    path: list[str]
    help: str
    short_help: str
    epilog: str
    params: list[ParamDoc]
    subcommands: list[CommandDoc] = field(default_factory=list)

    @property
    def name(self) -> str:
        return " ".join(self.path)

    @property
    def arguments(self) -> list[ParamDoc]:
        return [p for p in self.params if p.kind == "argument"]

    @property
    def options(self) -> list[ParamDoc]:
        return [p for p in self.params if p.kind == "option"]

    def option_strings(self) -> set[str]:
        return {n for p in self.options for n in p.names + p.secondary}


def _plain(value: Any) -> Any:
    return value.value if isinstance(value, Enum) else value


def _choices(param: Any) -> list[str]:
    desc = getattr(param, "type_descriptor", None)  # typer >= 0.20 (vendored click)
    if desc is not None:
        if getattr(desc, "is_choice", False) and desc.choices:
            return [str(_plain(c)) for c in desc.choices]
        return []
    choices = getattr(getattr(param, "type", None), "choices", None)  # upstream click
    return [str(_plain(c)) for c in choices or ()]


def _metavar(param: Any, ctx: Any) -> str | None:
    if getattr(param, "is_flag", False) or getattr(param, "count", False):
        return None
    if param.metavar:
        return str(param.metavar)
    if getattr(param, "param_type_name", "") == "argument":
        return param.name
    display = getattr(param, "display_type", None)
    if display is not None:  # typer's own "<int>", "<list[str]>", "<int range>"
        label = display(ctx).strip("<>")
        label = re.sub(r"^list\[(.*)\]$", r"\1", label)
        return label.removesuffix(" range")
    try:  # upstream click
        return param.make_metavar(ctx)
    except TypeError:
        return param.make_metavar()


def _default(param: Any, ctx: Any) -> str | None:
    try:
        value = param.get_default(ctx, call=False)
    except TypeError:
        value = param.default
    if callable(value):
        return "(dynamic)"
    if value is None or value is False and getattr(param, "is_flag", False):
        return None
    if isinstance(value, (list, tuple)):
        return ", ".join(str(_plain(v)) for v in value) or None
    if value is True and getattr(param, "is_flag", False):
        return "on"
    return str(_plain(value))


def _option_order(name: str) -> tuple[bool, str]:
    # click builds the help option's names from a set: sort short before long so that
    # the output does not depend on string hashing.
    return (name.startswith("--"), name)


def _param_doc(param: Any, ctx: Any) -> ParamDoc:
    kind = getattr(param, "param_type_name", "option")
    opts = list(param.opts)
    if kind == "option":
        opts = sorted(opts, key=_option_order)
    envvar = param.envvar
    if isinstance(envvar, (list, tuple)):
        envvar = ", ".join(envvar)
    return ParamDoc(
        kind=kind, name=param.name, names=opts, secondary=list(param.secondary_opts),
        metavar=_metavar(param, ctx), choices=_choices(param),
        help=" ".join((getattr(param, "help", None) or "").split()),
        default=_default(param, ctx), required=bool(param.required),
        multiple=bool(param.multiple), nargs=param.nargs,
        minimum=getattr(param, "min", None), maximum=getattr(param, "max", None),
        envvar=envvar or None)


def _context(cmd: Any, name: str, parent: Any = None) -> Any:
    settings = dict(getattr(cmd, "context_settings", None) or {})
    settings["resilient_parsing"] = True
    return cmd.context_class(cmd, info_name=name, parent=parent, **settings)


def _subcommands(cmd: Any, ctx: Any) -> Iterator[tuple[str, Any]]:
    if not hasattr(cmd, "list_commands"):
        return
    for name in cmd.list_commands(ctx):
        sub = cmd.get_command(ctx, name)
        if sub is not None and not getattr(sub, "hidden", False):
            yield name, sub


def describe(cmd: Any = None, path: list[str] | None = None, parent: Any = None) -> CommandDoc:
    """Walk the live command tree into :class:`CommandDoc` objects."""
    cmd = cmd if cmd is not None else cli_command()
    path = path or [PROG]
    ctx = _context(cmd, path[-1], parent)
    params = [_param_doc(p, ctx) for p in cmd.get_params(ctx)
              if not getattr(p, "hidden", False)]
    doc = CommandDoc(path=path, help=(cmd.help or "").strip(),
                     short_help=cmd.get_short_help_str(limit=200) if cmd.help else "",
                     epilog=(getattr(cmd, "epilog", None) or "").strip(), params=params)
    for name, sub in _subcommands(cmd, ctx):
        doc.subcommands.append(describe(sub, [*path, name], ctx))
    return doc


def all_commands(doc: CommandDoc) -> Iterator[CommandDoc]:
    """Every command below the root, depth first (the root itself excluded)."""
    for sub in doc.subcommands:
        yield sub
        yield from all_commands(sub)


def undocumented(doc: CommandDoc | None = None) -> list[str]:
    """Commands and parameters without help text (the test wants this empty)."""
    doc = doc or describe()
    missing = []
    for c in [doc, *all_commands(doc)]:
        if not c.help:
            missing.append(f"command {c.name!r} has no help text")
        for p in c.params:
            if not p.help:
                label = "/".join(p.names) if p.kind == "option" else p.name
                missing.append(f"{p.kind} {label} of {c.name!r} has no help text")
    return missing

