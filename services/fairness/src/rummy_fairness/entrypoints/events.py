"""The fairness service's event consumer (inbound): the reactor on table-events, one reaction per
payload type it consumes (the log and the outbox relay are the platform's, built by bootstrap)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import psycopg
from psycopg_pool import ConnectionPool

from rummy.table.v1 import events_pb2 as table_events
from rummy_fairness.adapters.postgres import PostgresUnitOfWork
from rummy_fairness.application.ports import FairnessUnitOfWork
from rummy_fairness.application.seeds import Fairness
from rummy_platform.envelope import Envelope, type_name
from rummy_platform.eventlog import EventLog
from rummy_platform.reactor import PostgresReactor
from rummy_platform.topics import TABLE_EVENTS

CONSUMER_GROUP = "fairness"


def table_reactor(
    log: EventLog,
    pool: ConnectionPool,
    fairness: Fairness,
    *,
    topic: str = TABLE_EVENTS,
    group_id: str = CONSUMER_GROUP,
) -> PostgresReactor:
    """The reactor turning table-events into seeds, locks and reveals (offsets and processed
    event ids in Postgres, in each handler's transaction)."""
    return PostgresReactor(
        log,
        pool,
        group_id=group_id,
        topics=[topic],
        handlers={name: _joined(reaction) for name, reaction in reactions(fairness).items()},
        processed_table="processed_events",
    )


Reaction = Callable[[FairnessUnitOfWork, Envelope], None]


def reactions(fairness: Fairness) -> dict[str, Reaction]:
    """Fairness's reaction to each table-events payload type it consumes (full type name)."""
    return {
        type_name(table_events.HandStarted): fairness.on_hand_started,
        type_name(table_events.SeedsLocked): fairness.on_seeds_locked,
        type_name(table_events.HandEnded): fairness.on_hand_over,
        type_name(table_events.HandAborted): fairness.on_hand_over,
    }


def _joined(reaction: Reaction) -> Callable[[psycopg.Connection[Any], Envelope], None]:
    """The reaction run on a unit of work joined to the reactor's open transaction."""
    return lambda conn, source: reaction(PostgresUnitOfWork.joining(conn), source)
