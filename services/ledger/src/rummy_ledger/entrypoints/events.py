"""The ledger service's event consumer (inbound): the reactor on table-events, one reaction per
payload type it consumes (the log and the outbox relay are the platform's, built by bootstrap)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import psycopg
from psycopg_pool import ConnectionPool

from rummy.match.v1 import match_pb2
from rummy.table.v1 import events_pb2 as table_events
from rummy_ledger.adapters.postgres import PostgresUnitOfWork
from rummy_ledger.application.ports import LedgerUnitOfWork
from rummy_ledger.application.reactions import Ledger
from rummy_platform.envelope import Envelope, type_name
from rummy_platform.eventlog import EventLog
from rummy_platform.reactor import PostgresReactor
from rummy_platform.topics import TABLE_EVENTS

CONSUMER_GROUP = "ledger"


def table_reactor(
    log: EventLog,
    pool: ConnectionPool,
    ledger: Ledger,
    *,
    topic: str = TABLE_EVENTS,
    group_id: str = CONSUMER_GROUP,
) -> PostgresReactor:
    """The reactor turning table-events into reservations, settlements and releases (a hand's
    and a match's: ``rummy_ledger.application.match_reactions``). Each
    record is handled in one PostgreSQL transaction with its next offset (``consumer_offsets``)
    and its event id (``processed_events``: a repeat republished at a new offset is dropped);
    other payload types are dropped by the consumer, undecoded."""
    return PostgresReactor(
        log,
        pool,
        group_id=group_id,
        topics=[topic],
        handlers={name: _joined(reaction) for name, reaction in reactions(ledger).items()},
        offsets_table="consumer_offsets",
        processed_table="processed_events",
    )


Reaction = Callable[[LedgerUnitOfWork, Envelope], None]


def reactions(ledger: Ledger) -> dict[str, Reaction]:
    """The ledger's reaction to each table-events payload type it consumes (full type name)."""
    return {
        type_name(table_events.HandStarted): ledger.on_hand_started,
        type_name(table_events.HandEnded): ledger.on_hand_ended,
        type_name(table_events.HandAborted): ledger.on_hand_aborted,
        type_name(table_events.TableOpened): ledger.matches.on_table_opened,
        type_name(match_pb2.MatchStarted): ledger.matches.on_match_started,
        type_name(match_pb2.GameStarted): ledger.matches.on_game_started,
        type_name(match_pb2.MoneyReserved): ledger.matches.on_money_reserved,
        type_name(match_pb2.GameEnded): ledger.matches.on_game_ended,
        type_name(match_pb2.MatchEnded): ledger.matches.on_match_ended,
        type_name(match_pb2.MatchAborted): ledger.matches.on_match_aborted,
    }


def _joined(reaction: Reaction) -> Callable[[psycopg.Connection[Any], Envelope], None]:
    """The reaction run on a unit of work joined to the reactor's open transaction."""
    return lambda conn, source: reaction(PostgresUnitOfWork.joining(conn), source)
