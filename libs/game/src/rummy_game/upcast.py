"""The one upcast step of the table stream's payloads (protobuf): a payload written by an older
table service becomes the current shape before a reader compares or folds it, so replay sees
current shapes only. Readers call :func:`payload`; the rules library's JSON has its own step
(``rummy_rules.upcast``), and the list of every old shape, with the version that may drop it, is
``docs/rules/event-tags.md#old-shapes``.

Old shapes read here:

- a ``rummy.table.v1.SeedsLocked`` that names no variant (written before ``SeedsLocked.variant``;
  every such hand was played by the legacy variant, ``rummy_rules.registry.LEGACY_VARIANT``):
  read as naming it. May be dropped with table stream v2.
"""

from __future__ import annotations

from google.protobuf.message import Message

from rummy.table.v1 import events_pb2 as table_pb
from rummy_rules import registry


def payload(message: Message) -> Message:
    """``message`` in the current shape: a copy when an old shape was upcast, else ``message``
    itself (never changed in place). Never raises."""
    if isinstance(message, table_pb.SeedsLocked) and not message.variant:
        copy = table_pb.SeedsLocked()
        copy.CopyFrom(message)
        copy.variant = registry.LEGACY_VARIANT
        return copy
    return message
