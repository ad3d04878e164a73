"""The metadata log replayed into the cluster image.

- :mod:`.engine`: a :class:`Replay` from a snapshot and the log's records, comparing
  each snapshot it passes; snapshot files read into images;
- :mod:`.process`: the same replay in a second process, beside verify's pass;
- :mod:`.image`: ``kmeta image`` and ``kmeta history`` (the image at an offset, the
  records that touched a topic or broker);
- :mod:`.timeline`: the image at any point of a replica's log, for ``kmeta shell``, over
  the index of its batches (:mod:`.timeline_index`).
"""

from typing import TYPE_CHECKING

from kmeta.face import face

__getattr__, __dir__, __all__ = face(__name__)

if TYPE_CHECKING:  # what the rest of kmeta may use (kmeta.face: each loaded on first use)
    from kmeta.ops.replay.engine import (
        Replay,
        apply_changes_py,
        plan_replay,
        replay_log,
        snapshot_findings,
        snapshot_image,
    )
    from kmeta.ops.replay.image import (
        HistoryRow,
        ImageResult,
        NodeLookup,
        browse,
        build_image,
        check_offset,
        children,
        find_metadata,
        history,
        look_up,
        metadata_source,
        needs_the_log,
        public_json,
    )
    from kmeta.ops.replay.process import ForkedReplay, forked_replay
    from kmeta.ops.replay.timeline import EMPTY_PROVENANCE, Provenance, Replicas, Timeline
