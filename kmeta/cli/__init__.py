"""The ``kmeta`` command line: parse options, call one op, render, finish.

One module per family of commands, each registering its commands on the one app
(:mod:`kmeta.cli.app`, which also holds what every command shares: the options, the
end of a command, the entry point).  Imports of ops and renderers happen inside the
commands so that ``kmeta --help`` stays fast and never touches pyspark.
"""

from __future__ import annotations

from importlib import import_module

from kmeta.cli.app import _click_app, app, main

#: The families, in the order ``kmeta --help`` lists their commands.
FAMILIES = ("inspect", "report", "startup", "metadata", "shell", "topics", "replicas", "export",
            "completions")
for _family in FAMILIES:
    import_module(f"kmeta.cli.{_family}")

#: Commands that read no Kafka input (the rules of a command's input do not apply).
NO_INPUT = frozenset({"completions"})

__all__ = ["FAMILIES", "NO_INPUT", "_click_app", "app", "main"]
