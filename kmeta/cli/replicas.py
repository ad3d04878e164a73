"""``kmeta diff``, ``snapshot``, ``truncate`` and ``repair``: replicas compared, and the
commands that write a new copy of a metadata partition (never over their input)."""

from __future__ import annotations

from typing import Annotated

import typer

from kmeta.cli.app import (
    IntoDataDirOpt,
    JsonObjOpt,
    JsonOpt,
    close,
    command,
    current_env,
    folded,
    reading_progress,
)
from kmeta.errors import UsageError


@command
def diff(
    replicas: Annotated[list[str], typer.Argument(
        help="Data dirs or __cluster_metadata-0 directories of replicas of one cluster: "
        "this node's (LOCAL), a peer's, and any more.", show_default=False, metavar="LOCAL PEER [MORE...]")],
    no_images: Annotated[bool, typer.Option(
        "--no-images", help="Skip the cluster-image comparison (faster on long logs).")
    ] = False,
    json_out: JsonObjOpt = False,
) -> None:
    """Find where replicas of the metadata log diverged, and what Kafka would do.

    Divergence is found twice: by leader epochs, as a follower's fetch would (KIP-595),
    and by the bytes of the batches both replicas hold. A divergence is an error finding
    (V160), as is damage met while reading a replica: exit 0 when the replicas are
    identical or only lag and read cleanly, 1 on an error finding, 3 when a replica's
    segment could not be read whole (the verdict would be about part of it).
    """
    from kmeta.ops.diff import diff_replicas
    from kmeta.render.console import clip_width
    from kmeta.render.diff import diff_json, diff_lines

    env = current_env()
    with reading_progress(env, "diff") as progress:
        report = diff_replicas(replicas, images=not no_images, progress=progress)
    width = clip_width(env)
    env.write_lines(diff_json(report) if json_out else folded(diff_lines(
        report, colour=env.colour(env.stdout), width=width), width), json=json_out)
    # What reading met (bad CRCs, torn tails …) and the divergence itself (V160)
    close(env, report.findings, replicas, json_out=json_out,
          more="run kmeta verify on each replica")


@command
def snapshot(
    path: Annotated[str, typer.Argument(
        help="A data directory or its __cluster_metadata-0 directory.",
        show_default=False, metavar="PARTITION_DIR")],
    out: Annotated[str, typer.Option(
        "--out", metavar="FILE|DIR", show_default=False,
        help="Where to write: a directory (the file gets Kafka's name "
             "<offset>-<epoch>.checkpoint) or a new file, outside the input and Kafka's "
             "data and partition dirs. An existing file is never overwritten.")],
    at: Annotated[int | None, typer.Option(
        "--at", min=0, metavar="OFFSET", help="The snapshot's end offset: the state after "
        "every record below it (default: the log end).")] = None,
    into_partition: Annotated[bool, typer.Option(
        "--into-partition", help="Allow --out to be a metadata partition dir (the input's "
        "too): Kafka loads the newest snapshot there at its next start; a note says "
        "what it will do. Refused while a broker holds the data dir's .lock.")] = False,
    json_out: JsonOpt = False,
) -> None:
    """Write a KRaft snapshot (.checkpoint) of the cluster image at an offset.

    The image is replayed from the latest snapshot at or below OFFSET and the log; the
    file is read back and checked before kmeta reports success. Refused (exit 2) when
    OFFSET is not above the log start or past the log end, falls inside a metadata
    transaction, or the replay met findings of severity error.
    """
    from kmeta.ops.snapshot import write_snapshot_at
    from kmeta.render.console import clip_width
    from kmeta.render.snapshot import snapshot_json, snapshot_lines

    env = current_env()
    with reading_progress(env, "snapshot") as progress:
        result = write_snapshot_at(path, out, at=at, into_partition=into_partition,
                                   progress=progress)
    env.write_lines([snapshot_json(result)] if json_out else folded(
        snapshot_lines(result), clip_width(env)), json=json_out)
    close(env, result.findings, [path], json_out=json_out)


@command
def truncate(
    path: Annotated[str, typer.Argument(
        help="A data dir or __cluster_metadata-0 directory; only read unless --apply.",
        show_default=False, metavar="PATH")],
    to: Annotated[int | None, typer.Option(
        "--to", min=0, metavar="OFFSET", help="End the log before this offset (a target "
        "inside a batch cuts at the batch's start, as Kafka does).")] = None,
    peer: Annotated[str | None, typer.Option(
        "--to-divergence-with", metavar="PEER", help="Truncate to where PATH diverged "
        "from this replica (see kmeta diff).")] = None,
    apply: Annotated[bool, typer.Option(
        "--apply", help="Write the truncated copy (needs --out).")] = False,
    out: Annotated[str | None, typer.Option(
        "--out", metavar="NEWDIR", help="With --apply: a new or empty directory outside "
        "the input for the truncated copy.")] = None,
    into_data_dir: IntoDataDirOpt = False,
    no_images: Annotated[bool, typer.Option(
        "--no-images", help="Skip the image before/after (faster on long logs).")] = False,
    json_out: JsonObjOpt = False,
) -> None:
    """Show what truncating the metadata log would remove and change; write nothing
    unless --apply --out NEWDIR is given.

    The simulation lists the batches and records removed (by type), the new log end
    offset and epoch cache, the snapshots made invalid and the image before and after.
    """
    from kmeta.ops.truncate import simulate_truncate, write_truncated
    from kmeta.render.console import clip_width
    from kmeta.render.repair import repair_json, repair_lines
    from kmeta.render.truncate import truncate_json, truncate_lines

    if apply != (out is not None):
        raise UsageError("--apply and --out go together", hint="without them, nothing "
                         "is written: the command only simulates")
    env = current_env()
    width = clip_width(env)
    if out is not None:
        with reading_progress(env, "truncate") as progress:
            result = write_truncated(path, out, to, peer=peer, into_data_dir=into_data_dir,
                                     progress=progress)
        env.write_lines([repair_json(result)] if json_out else folded(
            repair_lines(result), width), json=json_out)
        # what verify finds in the copy it wrote (the report shows the first of them)
        close(env, result.findings or [], [out], json_out=json_out, told=not json_out)
    with reading_progress(env, "truncate") as progress:
        plan = simulate_truncate(path, to, peer=peer, images=not no_images,
                                 progress=progress)
    env.write_lines(truncate_json(plan) if json_out else folded(
        truncate_lines(plan, width), width), json=json_out)
    close(env, [], [path], json_out=json_out)


@command
def repair(
    path: Annotated[str, typer.Argument(
        help="The __cluster_metadata-0 directory to repair; only read, unless --in-place.",
        show_default=False, metavar="PARTITION_DIR")],
    out: Annotated[str | None, typer.Option(
        "--out", metavar="DIR", help="Write the repaired copy here: a new or empty "
        "directory outside the input (name it like the input to use it).")] = None,
    into_data_dir: IntoDataDirOpt = False,
    truncate_to: Annotated[int | None, typer.Option(
        "--truncate-to", min=0, metavar="OFFSET", help="Also end the log before this "
        "offset (a batch boundary); snapshots past it are quarantined.")] = None,
    in_place: Annotated[bool, typer.Option(
        "--in-place", help="Replace PARTITION_DIR with its repaired copy; needs --backup, "
        "refused while a broker holds the data dir's .lock.")] = False,
    backup: Annotated[str | None, typer.Option(
        "--backup", metavar="DIR", help="With --in-place: where the original goes first "
        "(new or empty, outside the data dir).")] = None,
    follow_snapshot: Annotated[bool, typer.Option(
        "--follow-snapshot", help="When the latest intact snapshot is ahead of the "
        "repaired log, do what Kafka does on start: drop the log and start at the "
        "snapshot (default: quarantine the snapshot, keep the log).")] = False,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="Show what would change; write nothing.")] = False,
    json_out: JsonObjOpt = False,
) -> None:
    """Write a repaired copy of a metadata partition: the log cut at its first damage as
    Kafka's recovery cuts it, leader-epoch-checkpoint rebuilt, snapshots and leftovers
    that no longer fit moved to quarantine/, stale indexes left out.

    Exit 0 when the output verifies without errors, 1 when some remain (they are shown).
    """
    from kmeta.ops.repair import (
        RepairPlan,
        RepairResult,
        apply_repair,
        apply_repair_in_place,
        plan_repair,
    )
    from kmeta.render.console import clip_width
    from kmeta.render.repair import repair_json, repair_lines

    if not dry_run and in_place == (out is not None):
        raise UsageError("give exactly one of --out DIR and --in-place")
    if backup is not None and not in_place:
        raise UsageError("--backup goes with --in-place")
    if into_data_dir and out is None:
        raise UsageError("--into-data-dir goes with --out")
    env = current_env()
    result: RepairPlan | RepairResult
    with reading_progress(env, "repair") as progress:
        result = plan_repair(path, truncate_to=truncate_to, follow_snapshot=follow_snapshot,
                             progress=progress)
        if dry_run:
            pass
        elif in_place:
            result = apply_repair_in_place(result, backup)
        else:
            result = apply_repair(result, out, into_data_dir=into_data_dir)
    env.write_lines([repair_json(result)] if json_out else folded(
        repair_lines(result), clip_width(env)), json=json_out)
    # what verify finds in the written copy (a plan is not checked); the report shows them
    checked = result.findings or [] if isinstance(result, RepairResult) else []
    close(env, checked, [path], json_out=json_out, told=not json_out)
