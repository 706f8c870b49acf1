"""A hand's proof bundle: one canonical JSON document a player checks in the browser page
(``web/verify/``) or with ``node web/verify/cli.mjs``.

Format ``bb-hand-proof/1``, documented by ``web/verify/proof-bundle.schema.json``::

    {"format": "bb-hand-proof/1", "table_id": ..., "hand_id": ..., "variant": "indian-points",
     "deal_shape": {"wild_cut": true, "upcard": true},
     "shuffle_version": "bb-shuffle-v1", "rules_version": "bombay-baazi/1",
     "server_seed_hex": "<the revealed server seed, 64 hex digits>",
     "events": [{"stream_version": 12, "event": {"type": "table.HandStarted", ...}}, ...]}

``deal_shape`` is the variant's (``rummy_rules.rules.DealShape``): whether its deal cuts a wild
card and turns up a first open card (a verifier that has no plug-in for the variant lays the deal
out by it; bundles written before it had both).

``events`` are every event of the hand in table-stream order, as the rules library's codec writes
them (``rummy_rules.json_form.to_dict``: cards ``"7H:1"``), unredacted: after the reveal the deck
order
is public, so each seat's own draws and the stock are in. They hold the commitment (SeedCommitted,
SeedsLocked), every client seed and the seat that sent it (ClientSeedContributed, SeedsLocked),
the rule set with its money options (HandStarted), every move, the result and the settlement
(HandEnded). Canonical: keys sorted, no spaces, UTF-8 (:func:`canonical_json`).

Built from the hand's envelopes of the table stream (table service ``GetHandProof``, ``rummy
proof``, ``rummy demo``: :func:`hand_proof`), which decodes them and assembles the document with
:func:`bundle`. Raises :class:`ProofNotReady` before the seed is revealed or the hand ended,
ValueError when the envelopes hold no start of the hand.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from rummy.fairness.v1 import events_pb2 as fairness_pb
from rummy.table.v1 import events_pb2 as pb
from rummy_game import stream_payloads
from rummy_platform.envelope import Envelope
from rummy_rules import json_form, registry
from rummy_rules.events import Event
from rummy_rules.variant import Variant

PROOF_FORMAT = "bb-hand-proof/1"


class ProofNotReady(Exception):
    """The hand has no proof yet: it has not ended, was aborted, or its seed is not revealed."""


def hand_proof(table_id: str, hand_id: str, envelopes: Iterable[Envelope]) -> dict[str, Any]:
    """The proof bundle of ``hand_id`` from the table stream's envelopes (any events of the table;
    only the hand's are used, in stream order). Raises ProofNotReady or ValueError (see above)."""
    mine = sorted(
        (e for e in envelopes if getattr(e.payload, "hand_id", None) == hand_id),
        key=lambda e: e.stream_version,
    )
    started = next((e for e in mine if isinstance(e.payload, pb.HandStarted)), None)
    if started is None:
        raise ValueError(f"no start of hand {hand_id!r} in the table stream")
    ctx = stream_payloads.hand_context(started.payload)  # type: ignore[arg-type]
    events: list[dict[str, Any]] = []
    seed = b""
    ended = aborted = False
    for envelope in mine:
        payload = envelope.payload
        at_ms = stream_payloads.datetime_to_ms(envelope.occurred_at)
        if isinstance(payload, fairness_pb.SeedRevealed):
            seed = bytes(payload.server_seed)
            continue
        if isinstance(payload, pb.HandStarted):
            decoded: tuple[object, ...] = (stream_payloads.hand_started_from_pb(payload, at_ms),)
        elif stream_payloads.is_hand_payload(payload):
            decoded = stream_payloads.from_payload(payload, ctx, at_ms)
        else:
            continue
        ended = ended or isinstance(payload, pb.HandEnded)
        aborted = aborted or isinstance(payload, pb.HandAborted)
        events += [
            {"stream_version": envelope.stream_version, "event": json_form.to_dict(event)}
            for event in decoded
        ]
    if aborted:
        raise ProofNotReady(f"hand {hand_id} was aborted: it has no result to prove")
    if not ended:
        raise ProofNotReady(f"hand {hand_id} has not ended")
    if not seed:
        raise ProofNotReady(f"the server seed of hand {hand_id} is not revealed yet")
    return bundle(
        table_id,
        hand_id,
        variant=registry.lookup(ctx.rule_set.variant),
        shuffle_version=started.shuffle_version,
        rules_version=started.rules_version,
        server_seed=seed,
        events=events,
    )


def bundle(
    table_id: str,
    hand_id: str,
    *,
    variant: Variant[Any],
    shuffle_version: str,
    rules_version: str,
    server_seed: bytes,
    events: Iterable[dict[str, Any] | tuple[int, Event]],
) -> dict[str, Any]:
    """The bundle document of an ended hand of ``variant`` whose seed ``server_seed`` was
    revealed: ``events`` are its events in stream order, each ``{"stream_version": n, "event":
    <rummy_rules.json_form.to_dict of it>}`` or a ``(stream_version, rules event)`` pair."""
    shape = variant.deal_shape
    return {
        "format": PROOF_FORMAT,
        "table_id": table_id,
        "hand_id": hand_id,
        "variant": variant.name,
        "deal_shape": {"wild_cut": shape.wild_cut, "upcard": shape.upcard},
        "shuffle_version": shuffle_version,
        "rules_version": rules_version,
        "server_seed_hex": server_seed.hex(),
        "events": [
            e if isinstance(e, dict) else {"stream_version": e[0], "event": json_form.to_dict(e[1])}
            for e in events
        ],
    }


def canonical_json(bundle: dict[str, Any]) -> str:
    """The bundle as canonical JSON: sorted keys, no insignificant spaces, non-ASCII kept."""
    return json.dumps(bundle, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
