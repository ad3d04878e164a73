"""``kmeta consumers``, ``tiering`` and ``compact``: the data and internal topics of a
broker: committed offsets against a replica, tiered storage, the log cleaner."""

from __future__ import annotations

from typing import Annotated

import typer

from kmeta.cli.app import (
    IntoDataDirOpt,
    JsonOpt,
    close,
    command,
    current_env,
    folded,
    reading_progress,
)
from kmeta.errors import UsageError


@command
def consumers(
    path: Annotated[str | None, typer.Argument(
        help="A broker's data dir, or __consumer_offsets-N dirs' parent: where the groups' "
        "commits are (not needed with --position).", show_default=False,
        metavar="PATH")] = None,
    group: Annotated[str | None, typer.Option("--group", metavar="GROUP", help="Only this "
                                              "group's offsets.")] = None,
    against: Annotated[str | None, typer.Option(
        "--against", metavar="REPLICA_DIR", help="A replica's data dir or partition dir (of "
        "this cluster): what each consumer would meet on its next fetch if that replica led "
        "(KIP-320).")
    ] = None,
    position: Annotated[str | None, typer.Option(
        "--position", metavar="OFFSET:EPOCH", help="Check this consumer position instead of "
        "the committed ones (needs --against naming one partition dir).")] = None,
    json_out: JsonOpt = False,
) -> None:
    """Consumer groups' committed offsets, and whether a replica would truncate them.

    Replays __consumer_offsets as the group coordinator loads it (the last record of a
    key wins, tombstones delete, transactional commits wait for their COMMIT marker)
    and lists every group's committed offset and leader epoch per partition.  With
    --against, validates each against the replica's leader-epoch cache and log as a
    KIP-320 consumer does on a new leader: fine, truncated (the offset it would be reset
    to), epoch unknown or out of range (it resets by auto.offset.reset); offsets without
    an epoch (a value before v3 has no such field; from v3 on, -1 means the client sent
    none) cannot be checked and are counted.  Exit 1 when a consumer would move.
    """
    from kmeta.ops.consumers import consumers as run_consumers
    from kmeta.ops.consumers import parse_position
    from kmeta.render.console import clip_width
    from kmeta.render.consumers import consumers_json, consumers_lines

    env = current_env()
    at = parse_position(position) if position is not None else None
    if at is not None and against is None:
        raise UsageError("--position needs --against: the replica partition to check it on")
    if at is None and path is None:
        raise UsageError("give PATH (a data dir with __consumer_offsets), or --position with "
                         "--against")
    with reading_progress(env, "consumers") as progress:
        result = run_consumers(path, group=group, against=against, position=at,
                               progress=progress)
    if json_out:
        env.write_lines(consumers_json(result), json=True)
    else:
        env.write_lines(folded(consumers_lines(result), clip_width(env)), json=False)
    if group is not None and not result.rows:
        print(f"kmeta: group {group} has no committed offset in {path}", file=env.stderr)
    close(env, result.findings, [p for p in (path, against) if p], json_out=json_out,
          told=json_out)


@command
def tiering(
    path: Annotated[str, typer.Argument(
        help="A partition dir of a tiered topic (orders-0), or the data dir holding such "
        "partitions.", show_default=False, metavar="PATH")],
    metadata_dir: Annotated[str | None, typer.Option(
        "--metadata-dir", metavar="DIR", help="The data dir with the __remote_log_metadata-N "
        "partitions (default: PATH's data dir).")] = None,
    metadata_partitions: Annotated[int, typer.Option(
        "--metadata-partitions", metavar="N", min=1, help="remote.log.metadata.topic.num."
        "partitions, for Kafka's partitioner.")] = 50,
    local_retention: Annotated[str, typer.Option(
        "--local-retention", metavar="DURATION", help="The topic's local.retention.ms (its "
        "retention.ms when -2): tiered segments older than this should be gone from disk; "
        "-1: never.")] = "7d",
    now: Annotated[str | None, typer.Option(
        "--now", metavar="TIME", help="Judge ages at this time (default: the newest local "
        "batch's time).")] = None,
    json_out: JsonOpt = False,
) -> None:
    """Tiered storage: remote segments, the last tiered offset, and a new follower's start.

    Replays __remote_log_metadata as the remote log metadata manager's cache does (only
    segments whose copy finished count; invalid state transitions are dropped and
    reported) for each partition found, and computes its last tiered offset as
    RemoteLogManager.findHighestRemoteOffset does with the partition's own epoch cache;
    then an empty follower's bootstrap two ways: classic (from the local log start) and
    KIP-1023 (from the earliest pending upload offset), with the records and bytes each
    replicates.  Findings: tiered segments still on disk past local retention, gaps and
    overlaps between remote segments, epochs the local cache does not have.  A partition
    with nothing tiered gets one line saying so; a data dir with no __remote_log_metadata
    partition (without --metadata-dir) or no user partition, one line: nothing tiered
    here, exit 0.
    """
    from kmeta.ops.brokers import parse_bound, parse_duration
    from kmeta.ops.tiering import tiering as run_tiering
    from kmeta.render.console import clip_width
    from kmeta.render.tiering import tiering_json, tiering_lines

    env = current_env()
    keep = -1 if local_retention.strip() == "-1" else \
        parse_duration(local_retention, "--local-retention")
    at = parse_bound(now, "--now") if now is not None else None
    if at is not None and at.time_ms is None:
        raise UsageError(f"--now {now}: give a time (2024-05-01T12:00:00Z), not an offset")
    with reading_progress(env, "tiering") as progress:
        result = run_tiering(path, metadata_dir=metadata_dir,
                             metadata_partitions=metadata_partitions, local_retention_ms=keep,
                             now=None if at is None else at.time_ms, progress=progress)
    if json_out:
        env.write_lines(tiering_json(result), json=True)
    else:
        env.write_lines(folded(tiering_lines(result), clip_width(env)), json=False)
    close(env, result.findings, [path], json_out=json_out, told=json_out)


@command
def compact(
    path: Annotated[str, typer.Argument(
        help="A partition dir of a compacted topic (orders-0).", show_default=False,
        metavar="PARTITION_DIR")],
    strategy: Annotated[list[str] | None, typer.Option(
        "--strategy", metavar="offset|timestamp|header:NAME", help="Kafka's cleaner "
        "(offset) or a KIP-280 strategy; repeatable (default: the topic's "
        "compaction.strategy, else offset).")] = None,
    compare: Annotated[bool, typer.Option(
        "--compare", help="The strategies side by side: offset, timestamp, and header:NAME "
        "with --header.")] = False,
    header: Annotated[str | None, typer.Option(
        "--header", metavar="NAME", help="The header --compare's header strategy reads "
        "(with --compare only; one strategy: --strategy header:NAME).")
    ] = None,
    now: Annotated[str | None, typer.Option(
        "--now", metavar="TIME", help="The cleaner's clock: epoch milliseconds or an ISO 8601 "
        "time (default: the newest record's timestamp).")] = None,
    from_offset: Annotated[int | None, typer.Option(
        "--from", metavar="OFFSET", help="The first dirty offset (default: "
        "cleaner-offset-checkpoint).")] = None,
    delete_retention: Annotated[str | None, typer.Option(
        "--delete-retention", metavar="DURATION", help="delete.retention.ms (default: the "
        "topic's, else 1d).")] = None,
    min_lag: Annotated[str | None, typer.Option(
        "--min-compaction-lag", metavar="DURATION", help="min.compaction.lag.ms (default: the "
        "topic's, else 0).")] = None,
    key: Annotated[str | None, typer.Option(
        "--key", metavar="KEY", help="Show this key's records (UTF-8, or 0x-prefixed hex) and "
        "which each strategy keeps.")] = None,
    roll: Annotated[bool, typer.Option(
        "--roll", help="As if the active segment had rolled (Kafka never cleans it).")
    ] = False,
    batches: Annotated[bool, typer.Option(
        "--batches", help="Also every batch's fate: kept, rewritten (and which records "
        "stay), emptied or deleted, and why.")] = False,
    write: Annotated[str | None, typer.Option(
        "--write", metavar="NEWDIR", help="Write the compacted partition under NEWDIR (new "
        "indexes; the input is never touched).")] = None,
    into_data_dir: IntoDataDirOpt = False,
    json_out: JsonOpt = False,
) -> None:
    """What Kafka's log cleaner, or a KIP-280 strategy, would do to a partition.

    Simulates one cleaning round on the disk's data without touching it: the dirty range
    (cleaner-offset-checkpoint) and its cleanable end (last stable offset, the active
    segment, min.compaction.lag.ms), the key map, aborted transactions dropped by the
    .txnindex, markers and tombstones kept until their delete horizon, empty batches
    kept for producers; then the records and bytes each strategy keeps, tombstones,
    keys where the strategies disagree and out-of-order writes.  Topic configs come
    from the metadata log beside the partition, when there is one (__consumer_offsets
    and __transaction_state are compacted whatever it says).  A batch kmeta cannot trust
    (a bad CRC, offsets outside its segment) is a finding: Kafka's cleaner stops its
    round where it cannot read one and marks the partition uncleanable, and --write
    then writes nothing, nor when a file it would copy (partition.metadata,
    leader-epoch-checkpoint, a producer snapshot) is broken.
    """
    from pathlib import Path

    from kmeta.core.cleaner import Strategy
    from kmeta.ops.brokers import parse_bound, parse_duration
    from kmeta.ops.compact import CompactOptions
    from kmeta.ops.compact import compact as run_compact
    from kmeta.render.compact import compact_json, compact_lines
    from kmeta.render.console import clip_width
    from kmeta.storage.targets import INTO_DATA_DIR, check_target

    env = current_env()
    names = list(strategy or ())
    if header is not None and not compare:
        raise UsageError("--header names the header strategy of --compare; for one strategy "
                         f"give --strategy header:{header}")
    if compare:
        names = ["offset", "timestamp"] + ([f"header:{header}"] if header else [])
    try:
        chosen = [Strategy.parse(n) for n in names]  # none: the topic's, else offset
    except ValueError as e:
        raise UsageError(f"--strategy {e}") from None
    at = None
    if now is not None:
        if now.strip().lstrip("-").isdigit():
            at = int(now)
        else:
            bound = parse_bound(now, "--now")
            if bound.time_ms is None:
                raise UsageError(f"--now {now}: give a time (2024-05-01T12:00:00Z) or epoch "
                                 "milliseconds")
            at = bound.time_ms
    wanted = None
    if key is not None:
        try:
            wanted = bytes.fromhex(key[2:]) if key.startswith("0x") else key.encode()
        except ValueError:
            raise UsageError(f"--key {key}: not hex after 0x") from None
    options = CompactOptions(
        chosen, at, from_offset,
        None if delete_retention is None else parse_duration(delete_retention,
                                                             "--delete-retention"),
        None if min_lag is None else parse_duration(min_lag, "--min-compaction-lag"), wanted,
        roll, batches, None if write is None else Path(write))
    if write is not None:  # before the round: where the partition dir would go
        check_target(write, [path], what="--write", name=Path(path).resolve().name,
                     permit=INTO_DATA_DIR, permitted=into_data_dir)
    with reading_progress(env, "compact") as progress:
        result = run_compact(path, options, progress=progress)
    if json_out:
        env.write_lines(compact_json(result), json=True)
    else:
        env.write_lines(folded(compact_lines(result), clip_width(env)), json=False)
    if result.written is not None:
        from kmeta.render.text import shell_command

        print(f"kmeta: wrote {result.written} (check it: "
              f"{shell_command('verify', str(result.written))})", file=env.stderr)
    if result.refused is not None:
        print(f"kmeta: --write: nothing written: {result.refused}", file=env.stderr)
    close(env, result.findings, [path], json_out=json_out, told=json_out)
