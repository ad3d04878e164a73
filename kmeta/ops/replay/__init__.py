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

#: The names the rest of kmeta may use, each with the module that holds it.
PUBLIC = {
    "Replay": "engine",
    "apply_changes_py": "engine",
    "plan_replay": "engine",
    "replay_log": "engine",
    "snapshot_findings": "engine",
    "snapshot_image": "engine",
    "HistoryRow": "image",
    "ImageResult": "image",
    "NodeLookup": "image",
    "browse": "image",
    "build_image": "image",
    "children": "image",
    "history": "image",
    "look_up": "image",
    "metadata_source": "image",
    "public_json": "image",
    "ForkedReplay": "process",
    "forked_replay": "process",
    "EMPTY_PROVENANCE": "timeline",
    "Provenance": "timeline",
    "Replicas": "timeline",
    "Timeline": "timeline",
}
__getattr__, __dir__ = face(__name__, PUBLIC)
__all__ = [
    "EMPTY_PROVENANCE", "ForkedReplay", "HistoryRow", "ImageResult", "NodeLookup", "Provenance",
    "Replay", "Replicas", "Timeline", "apply_changes_py", "browse", "build_image", "children",
    "forked_replay", "history", "look_up", "metadata_source", "plan_replay", "public_json",
    "replay_log", "snapshot_findings", "snapshot_image"
]

if TYPE_CHECKING:
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
        children,
        history,
        look_up,
        metadata_source,
        public_json,
    )
    from kmeta.ops.replay.process import ForkedReplay, forked_replay
    from kmeta.ops.replay.timeline import EMPTY_PROVENANCE, Provenance, Replicas, Timeline
