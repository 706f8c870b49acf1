"""The dealer's consumer of table-events: the platform's transactional reactor, one handler per
event type (:class:`rummy_dealer.application.dealing.Dealer`)."""

from __future__ import annotations

from collections.abc import Callable

from rummy.table.v1 import events_pb2 as table_events
from rummy_dealer.application.dealing import Dealer
from rummy_platform.envelope import type_name
from rummy_platform.eventlog import EventLog, TransactionalWriter
from rummy_platform.reactor import EmitHandler, TransactionalReactor
from rummy_platform.topics import TABLE_EVENTS

CONSUMER_GROUP = "dealer"


def table_reactor(
    log: EventLog,
    writer: TransactionalWriter,
    dealer: Dealer,
    on_abort: Callable[[], None],
    *,
    topic: str = TABLE_EVENTS,
    group_id: str = CONSUMER_GROUP,
) -> TransactionalReactor:
    """Deals on SeedsLocked, reshuffles on StockExhausted; outputs and offsets in one Kafka
    transaction. ``on_abort`` runs after an aborted transaction (the stream versions counted
    in it are forgotten)."""
    return TransactionalReactor(
        log,
        writer,
        group_id=group_id,
        topics=[topic],
        handlers=handlers(dealer),
        on_abort=on_abort,
    )


def handlers(dealer: Dealer) -> dict[str, EmitHandler]:
    """The dealer's handler of each table-events payload type it consumes (full type name)."""
    return {
        type_name(table_events.SeedsLocked): dealer.on_seeds_locked,
        type_name(table_events.StockExhausted): dealer.on_stock_exhausted,
    }
