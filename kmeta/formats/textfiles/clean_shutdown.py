"""``.kafka_cleanshutdown``: the clean-shutdown marker of a log dir (empty before Kafka 3.7, then ``{"version":0,"brokerEpoch":N}``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kmeta.errors import FormatError
from kmeta.formats.primitives import (
    INT32_MAX,
    INT32_MIN,
    INT64_MAX,
    INT64_MIN,
)
from kmeta.formats.textfiles.javatext import (
    _JAVA_WS,
    _as_bytes,
    _decode_utf8,
)
from kmeta.formats.textfiles.quorum_state import (
    _json_object,
)


@dataclass(frozen=True)
class CleanShutdown:
    """``.kafka_cleanshutdown``: the broker shut down cleanly, so its logs need no recovery.
    Before Kafka 3.7 the file is empty (``version`` and ``broker_epoch`` are None); since
    then it holds the broker epoch at shutdown."""

    version: int | None = None
    broker_epoch: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {"version": self.version, "brokerEpoch": self.broker_epoch}


def parse_clean_shutdown(data: bytes | bytearray | memoryview) -> CleanShutdown:
    """Parse ``.kafka_cleanshutdown``.  Like Kafka's reader, unknown keys are ignored."""
    what = ".kafka_cleanshutdown"
    text = _decode_utf8(_as_bytes(data), what)
    if not text.strip(_JAVA_WS):
        return CleanShutdown()
    obj = _json_object(text, what)
    fields = {}
    for key, lo, hi in (("version", INT32_MIN, INT32_MAX), ("brokerEpoch", INT64_MIN, INT64_MAX)):
        v = obj.get(key)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi):
            raise FormatError(f"{what}: {key} must be an integer, not {v!r}", position=0)
        fields[key] = v
    return CleanShutdown(fields["version"], fields["brokerEpoch"])
