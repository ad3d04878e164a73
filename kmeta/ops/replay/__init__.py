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
    from kmeta.ops.replay.engine import Replay
    from kmeta.ops.replay.engine import apply_changes_py
    from kmeta.ops.replay.engine import plan_replay
    from kmeta.ops.replay.engine import replay_log
    from kmeta.ops.replay.engine import snapshot_findings
    from kmeta.ops.replay.engine import snapshot_image
    from kmeta.ops.replay.image import HistoryRow
    from kmeta.ops.replay.image import ImageResult
    from kmeta.ops.replay.image import NodeLookup
    from kmeta.ops.replay.image import browse
    from kmeta.ops.replay.image import build_image
    from kmeta.ops.replay.image import check_offset
    from kmeta.ops.replay.image import children
    from kmeta.ops.replay.image import find_metadata
    from kmeta.ops.replay.image import history
    from kmeta.ops.replay.image import look_up
    from kmeta.ops.replay.image import metadata_source
    from kmeta.ops.replay.image import needs_the_log
    from kmeta.ops.replay.image import no_metadata_log
    from kmeta.ops.replay.image import public_json
    from kmeta.ops.replay.process import ForkedReplay
    from kmeta.ops.replay.process import forked_replay
    from kmeta.ops.replay.timeline import EMPTY_PROVENANCE
    from kmeta.ops.replay.timeline import Provenance
    from kmeta.ops.replay.timeline import Replicas
    from kmeta.ops.replay.timeline import Timeline
