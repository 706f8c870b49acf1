"""Which events a request caused: every event a command appends names the request in its
causation id (the table: ``<account>/<client_request_id>``; the ledger's grant: its idempotency
key). Used to prove that a refused request appended nothing (``rummy soak``, the gRPC fuzz)."""

from __future__ import annotations

from collections.abc import Collection, Iterable

from google.protobuf.message import Message

from rummy_platform.envelope import Envelope

#: The request fields whose value every event a command causes names in its causation id.
REQUEST_KEYS = ("client_request_id", "idempotency_key")


def request_keys(request: Message) -> list[str]:
    """The non-empty :data:`REQUEST_KEYS` values of ``request``."""
    fields = request.DESCRIPTOR.fields_by_name
    return [
        str(getattr(request, name))
        for name in REQUEST_KEYS
        if name in fields and getattr(request, name)
    ]


def caused_by(events: Iterable[Envelope], keys: Collection[str]) -> list[Envelope]:
    """The events of ``events`` whose causation id names one of ``keys`` (as a substring)."""
    wanted = [k for k in keys if k]
    if not wanted:
        return []
    return [e for e in events if e.causation_id and any(k in e.causation_id for k in wanted)]
