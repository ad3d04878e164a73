"""``kmeta report``: every analysis that applies to the paths, one verdict per area, and
optionally one HTML page with the pictures."""

from __future__ import annotations

from typing import Annotated

import typer

from kmeta.cli.app import (
    AllOpt,
    JsonOpt,
    close,
    command,
    current_env,
    folded,
    reading_progress,
)
from kmeta.errors import UsageError


def _check_html(html: str, paths: list[str]) -> None:
    """Refuse an unusable --html before the analyses run: a directory, a folder that is
    not there, or a place among the inputs or a broker's files (KM005)."""
    import os

    from kmeta.storage.targets import check_target

    if os.path.isdir(html):
        raise UsageError("--html names a directory: give the page's file name",
                         context=html)
    parent = os.path.dirname(os.path.abspath(html))
    if not os.path.isdir(parent):
        raise UsageError("--html: no such directory", context=parent)
    check_target(html, paths, what="--html")


@command
def report(
    paths: Annotated[list[str], typer.Argument(
        help="What was copied off the machines: data dirs, a broker's log dirs, the "
        "controllers' and brokers' dirs of a cluster, or a folder holding them.",
        show_default=False, metavar="PATH...")],
    html: Annotated[str | None, typer.Option(
        "--html", metavar="FILE", help="Also write the report as one self-contained HTML "
        "page with its pictures (nothing in it is fetched: it opens offline).")] = None,
    json_out: JsonOpt = False,
    show_all: AllOpt = False,
) -> None:
    """The whole story of a cluster's disks: what is wrong, since when, and what to do.

    Finds every data dir under PATH..., groups the replicas of a partition across them
    and runs every analysis that applies: verify, the replicas' divergence (diff), the
    brokers' lifecycles, snapshot retention, startup (per broker: its log dirs by
    node.id), consumers' truncation risk where __consumer_offsets is present, and tiering
    where __remote_log_metadata is. One line per area with its verdict, then what to do
    next, each with the kmeta command that shows more; then the findings, each once.
    Exit 1 when any finding is an error.
    """
    from kmeta.ops.processes import few_collections
    from kmeta.ops.report import build_report
    from kmeta.render.console import clip_width
    from kmeta.render.report import report_json, report_lines

    env = current_env()
    if html is not None:
        _check_html(html, paths)
    # as verify's pass, the analyses make trees freed as they go
    with reading_progress(env, "report") as progress, few_collections():
        result = build_report(paths, pictures=html is not None, progress=progress)
    if html is not None:
        from kmeta.render.report import report_html
        from kmeta.storage.writer import atomic_write

        try:
            atomic_write(html, report_html(result).encode(), overwrite=True)
        except OSError as e:  # a full disk, a read-only one: said before the report
            raise UsageError(f"--html: cannot write the page: {e.strerror or e}",
                             context=html) from None
    if json_out:
        env.write_lines(report_json(result), json=True)
    else:
        width = clip_width(env)
        env.write_lines(folded(report_lines(result, width), width))
    close(env, result.findings, paths, json_out=json_out, told=json_out,
          more="kmeta report --all lists them all", every=show_all)
