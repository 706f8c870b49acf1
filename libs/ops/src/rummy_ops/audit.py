"""``rummy audit``: the audit trail of operator actions, read from the event topics.

Every operator action is an event naming the operator account (its token's subject):

- ``open-table``: ``TableOpened`` on table-events (``operator_account_id``; for a table opened
  before that field existed, the account of its request key ``<operator>/<client_request_id>``);
- ``close-table``: ``TableClosing`` on table-events;
- ``grant``: ``TokensGranted`` on ledger-events (written through the ledger's outbox in the
  grant's transaction; ``?`` for a grant recorded before the field existed);
- ``limits-<change>``: ``LimitChanged`` on ledger-events, a player's change of its own limits
  (the player is the one who acted: ``limits-set``, ``limits-raise_pending``,
  ``limits-break_started``, ``limits-excluded`` ...).

One line per action, oldest first: time (UTC), operator, action, target (table or account id),
then the details (money in House Tokens: ``amount=50.00``, ``commission=5.00%``); ``--json`` prints
one JSON object a line instead (its details as recorded: ``amount_hundredths``, ``commission_bps``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from datetime import UTC

import click

from rummy.ledger.v1 import events_pb2 as ledger_pb
from rummy.table.v1 import events_pb2 as table_pb
from rummy_ops.broker_defaults import bootstrap_option
from rummy_ops.money import money_field
from rummy_ops.reach import require_kafka
from rummy_ops.replay.sources import SourceError, read_topic
from rummy_platform.envelope import Envelope
from rummy_platform.eventlog import EventLogError
from rummy_platform.topics import LEDGER_EVENTS, TABLE_EVENTS

#: The topics the trail is read from (under the services' topic prefix).
AUDITED_TOPICS = (TABLE_EVENTS, LEDGER_EVENTS)


@dataclass(frozen=True)
class AuditEntry:
    """One operator action: ``at`` (ISO 8601, UTC), who, what, on which table or account."""

    at: str
    operator: str
    action: str
    target: str
    details: dict[str, str | int] = field(default_factory=dict)
    event_id: str = ""

    def line(self) -> str:
        extra = " ".join("=".join(money_field(k, v)) for k, v in self.details.items())
        return f"{self.at}  {self.operator}  {self.action}  {self.target}  {extra}".rstrip()


def _at(envelope: Envelope) -> str:
    return envelope.occurred_at.astimezone(UTC).isoformat(timespec="milliseconds")


def entry_of(envelope: Envelope) -> AuditEntry | None:
    """The audit entry an event records, or None for an event that is no operator action."""
    p = envelope.payload
    if isinstance(p, table_pb.TableOpened):
        operator = p.operator_account_id or envelope.causation_id.partition("/")[0] or "?"
        details: dict[str, str | int] = {
            "name": p.name,
            "seats": p.seat_count,
            "point_value_hundredths": p.point_value_hundredths,
            "commission_bps": p.commission_bps,
        }
        action, target = "open-table", p.table_id or envelope.stream_id
    elif isinstance(p, table_pb.TableClosing):
        operator, action, target = p.operator_account_id or "?", "close-table", envelope.stream_id
        details = {"reason": p.reason} if p.reason else {}
    elif isinstance(p, ledger_pb.TokensGranted):
        operator, action, target = p.operator_account_id or "?", "grant", p.account_id
        details = {
            "amount_hundredths": p.amount_hundredths,
            "idempotency_key": p.idempotency_key,
            "journal_transaction_id": p.journal_transaction_id,
        }
    elif isinstance(p, ledger_pb.LimitChanged):
        # A player's change of its own limits, beside the operators' actions (the player acts).
        operator, action, target = p.account_id, f"limits-{p.change}", p.account_id
        details = {"what": p.what}
        if p.HasField("amount_hundredths"):
            details["amount_hundredths"] = p.amount_hundredths
        if p.time_zone:
            details["time_zone"] = p.time_zone
        if p.HasField("months"):
            details["months"] = p.months
        details["effective_at"] = p.effective_at.ToDatetime(UTC).isoformat()
        if p.HasField("until"):
            details["until"] = p.until.ToDatetime(UTC).isoformat()
    else:
        return None
    return AuditEntry(_at(envelope), operator, action, target, details, envelope.event_id)


def audit_trail(envelopes: Iterable[Envelope]) -> list[AuditEntry]:
    """The operator actions among ``envelopes``, oldest first; an event seen twice (a relay's
    republication) counts once."""
    seen: set[str] = set()
    out: list[AuditEntry] = []
    for envelope in envelopes:
        entry = entry_of(envelope)
        if entry is not None and envelope.event_id not in seen:
            seen.add(envelope.event_id)
            out.append(entry)
    return sorted(out, key=lambda e: (e.at, e.event_id))


def read_trail(bootstrap: str, topic_prefix: str = "") -> list[AuditEntry]:
    """The audit trail of the topics on ``bootstrap``. Raises SourceError if a topic is missing
    or Kafka cannot be reached."""
    envelopes: list[Envelope] = []
    for topic in AUDITED_TOPICS:
        try:
            envelopes += read_topic(bootstrap, topic_prefix + topic)
        except EventLogError as exc:
            where = f"{topic_prefix + topic} from {bootstrap}"
            raise SourceError(f"cannot read {where}: {exc}") from exc
    return audit_trail(envelopes)


@click.command()
@bootstrap_option
@click.option(
    "--topic-prefix",
    envvar="RUMMY_TOPIC_PREFIX",
    default="",
    help="Prefix of the event topics, as the services' RUMMY_TOPIC_PREFIX.",
)
@click.option("--operator", help="Only this operator account's actions.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object a line.")
def audit(bootstrap: str, topic_prefix: str, operator: str | None, as_json: bool) -> None:
    """Print every operator action (open-table, close-table, grant), oldest first: time,
    operator, action, target (table or account id) and details, read from table-events and
    ledger-events."""
    require_kafka(bootstrap)
    try:
        trail = read_trail(bootstrap, topic_prefix)
    except SourceError as error:
        raise click.ClickException(str(error)) from None
    for entry in trail:
        if operator is not None and entry.operator != operator:
            continue
        click.echo(json.dumps(asdict(entry), sort_keys=True) if as_json else entry.line())
