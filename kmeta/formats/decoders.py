"""Every payload decoder kmeta has, by name, and the one each topic gets unless the user
chooses: the one table ``dump --decoder``, the export's records table and the docs read.

The names load without the schema tables (the CLI's start-up and ``--help`` stay fast);
:func:`record_decoder` imports a decoder when a log is read with it.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache, partial
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kmeta.formats.payload import Payload

__all__ = ["DECODERS", "TOPIC_DECODERS", "RecordDecoder", "default_decoder", "record_decoder"]

#: key, value -> the decoded record
RecordDecoder = Callable[[bytes | None, bytes | None], "Payload"]

#: name -> what it reads (in the order ``--decoder`` lists them)
DECODERS: dict[str, str] = {
    "metadata": "KRaft metadata records (__cluster_metadata, snapshots)",
    "offsets": "__consumer_offsets: offset commits; classic, consumer, share and streams "
               "group records",
    "transactions": "__transaction_state",
    "remote-log-metadata": "__remote_log_metadata (tiered storage's remote segments)",
    "share-group-state": "__share_group_state",
    "raw": "keys and values as base64",
    "utf8": "keys and values as UTF-8 text",
    "hex": "keys and values as hex",
}

#: Internal topics whose records kmeta decodes, and the decoder it picks for them.
TOPIC_DECODERS = {
    "__consumer_offsets": "offsets",
    "__transaction_state": "transactions",
    "__remote_log_metadata": "remote-log-metadata",
    "__share_group_state": "share-group-state",
}


def default_decoder(topic: str | None, is_metadata: bool) -> str:
    """The decoder a log gets when the user names none: raw for a topic kmeta cannot read."""
    if is_metadata:
        return "metadata"
    return TOPIC_DECODERS.get(topic or "", "raw")


@cache
def record_decoder(name: str) -> RecordDecoder:
    """The function behind a decoder's name; ``KeyError`` for a name not in DECODERS."""
    from kmeta.formats import coordinator, payload, remote_log_metadata

    if name not in DECODERS:
        raise KeyError(name)
    if name == "metadata":
        return lambda key, value: payload.decode_metadata(value)
    if name in ("raw", "utf8", "hex"):
        return partial(payload.decode_opaque, decoder=name)
    return {
        "offsets": coordinator.decode_offsets,
        "transactions": coordinator.decode_transactions,
        "remote-log-metadata": remote_log_metadata.decode_remote_log_metadata,
        "share-group-state": coordinator.decode_share_group_state,
    }[name]
