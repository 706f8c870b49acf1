"""How this platform configures kafka-python 3.0.x clients, and the record headers it writes.

Each setting below departs from kafka-python's default for a reason measured here (the comment
on each says what the client does by default and why that was wrong for these services). Every
client of the event log is configured through the functions at the end of this module.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import kafka.errors as kafka_errors
from kafka.coordinator.assignors.range import RangePartitionAssignor

from rummy_platform.envelope import Envelope

from .base import EVENT_TYPE_HEADER
from .kafka_security import KafkaSecurity, security_config

#: The producers' retry backoff (ms). kafka-python 3.0.12's sender sleeps the configured
#: ``retry_backoff_ms`` (default 100) before every retried transactional request, ignoring the
#: 20 ms it sets on the handler for the case that matters here: a transaction that begins while
#: the broker still writes the previous one's markers gets CONCURRENT_TRANSACTIONS for its
#: AddPartitionsToTxn, which happens all the time to back-to-back transactions. Measured with
#: libs/platform/bench/produce_latency.py (600 one-event transactions, busy 2-core machine):
#: 100 ms -> p99 108 ms, mean 7.8 ms; 20 ms -> p99 29 ms, mean 4.8 ms; 10/5/2 ms -> p99 20-30 ms,
#: mean 4.4-5.6 ms (no better below 20 ms within the noise; 5 ms keeps the retry of a
#: concurrent-transactions answer shortest without retrying faster than a broker round trip).
PRODUCER_RETRY_BACKOFF_MS = 5

#: How group consumers fetch: the broker holds a fetch until 64 KiB are ready or 100 ms passed
#: (kafka-python's defaults are 1 byte / 500 ms: a fetch per record as soon as it is written).
#: Each fetch costs the consumer about 1.5 ms of CPU in kafka-python whatever it carries, so at
#: tens of records a second the consumer spent its CPU fetching one record at a time. Measured
#: here (a consumer of 1 in 10 records, a producer at 40 records/s): 1 byte -> 7.4-8.3% of a
#: core, 1.7-1.9 ms per record; 100 ms -> 2.9%, 0.65 ms; 50 ms -> 4.2%; 25 ms -> no change (the
#: records came every 25 ms). The price: a record reaches a group consumer up to 100 ms later,
#: and an idle consumer fetches 10 times a second instead of twice (0.5% -> 1.9% of a core).
GROUP_FETCH: dict[str, Any] = {"fetch_min_bytes": 64 * 1024, "fetch_max_wait_ms": 100}

#: How a group consumer fetches while idle (no record fetched for :data:`GROUP_IDLE_AFTER_S`):
#: the broker answers as soon as one byte is ready, else after 500 ms (kafka-python's defaults),
#: so an idle consumer sends 2 fetches a second instead of GROUP_FETCH's 10 and still gets the
#: first record at once (no 100 ms batching wait); the first fetch that brings records puts it
#: back on GROUP_FETCH (see :class:`~.kafka_poll.FetchPacing`). Measured here (issue 19, the
#: services idle on a fresh stack, per-thread CPU from /proc over 25 s): with GROUP_FETCH
#: always, each group member's kafka-io thread took 16-19 ms of CPU a second and the thread
#: polling it 5-8 ms, 22-29 ms/s per service in all, doing nothing; figures with this in
#: docs/benchmarks.md.
GROUP_FETCH_IDLE: dict[str, Any] = {"fetch_min_bytes": 1, "fetch_max_wait_ms": 500}
#: Seconds without a fetched record after which a group consumer fetches as GROUP_FETCH_IDLE.
GROUP_IDLE_AFTER_S = 1.0

#: Every client's reconnect backoff (ms): 50 ms doubling to 1 s. kafka-python's consumers default
#: to a 30 s cap, so after a broker restart a consumer that had backed off far waited up to 30 s
#: before it even tried again (issue 14: hands resumed 32 s after a Kafka restart).
CLIENT_RECONNECT: dict[str, Any] = {"reconnect_backoff_ms": 50, "reconnect_backoff_max_ms": 1000}

#: How group members keep their membership (ms). kafka-python 3.0.12 defaults to a 45 s session
#: (KIP-735) and a 3 s heartbeat: a SIGKILLed member (which sends no LeaveGroup) kept its
#: partitions until the broker dropped it 45 s later, so a restarted service waited that long for
#: its own partitions (issue 14: 31 s after a ledger kill, 45 s after a table kill). 6 s (the
#: broker's minimum, group.min.session.timeout.ms; the clock already ran with it) with a 1.5 s
#: heartbeat leaves three missed heartbeats of slack; a member closed gracefully sends LeaveGroup
#: (dynamic members do in 3.0.12) and is replaced at once. Static membership
#: (``group_instance_id``, which 3.0.12 supports) is not used: static members never send
#: LeaveGroup, and each instance would need a stable id of its own.
GROUP_MEMBERSHIP: dict[str, Any] = {
    "session_timeout_ms": 6000,
    "heartbeat_interval_ms": 1500,
    **CLIENT_RECONNECT,
}

#: kafka-python's own client metrics (``metrics_enabled``, default True) are off in every client
#: made from :func:`producer_config` and :func:`consumer_config` (the event log's writers, group
#: consumers and stream reader: the hot ones): nothing reads them (``KafkaProducer.metrics()``,
#: ``KafkaConsumer.metrics()``; the services export their own through prometheus-client), yet
#: every request, batch and fetch records a dozen sensors in Python. Measured with
#: libs/platform/bench/produce_latency.py --count 800-1000 against --set metrics_enabled=true
#: (busy 2-core machine, three pairs): a one-event transaction 3.55 / 2.75 / 2.57 -> 2.87 /
#: 2.07 / 2.46 ms of client CPU. (KafkaAdminClient has no such setting and refuses unknown ones.)
CLIENT_METRICS: dict[str, Any] = {"metrics_enabled": False}

#: The producers' request timeout (ms); kafka-python's default is 30 s. A broker that stops
#: answering fails a transaction after 10 s instead of 30 (the writer then recovers by itself,
#: see :class:`~.kafka_writer.KafkaTransactionalWriter`); a healthy broker answers in milliseconds.
PRODUCER_REQUEST_TIMEOUT_MS = 10_000

FENCING_ERRORS = (kafka_errors.ProducerFencedError, kafka_errors.InvalidProducerEpochError)


def record_headers(envelope: Envelope) -> list[tuple[str, bytes]]:
    """The Kafka headers every append writes with ``envelope``: its payload type."""
    return [(EVENT_TYPE_HEADER, envelope.type.encode())]


def header_type(headers: Iterable[tuple[str, bytes]] | None) -> str | None:
    """The payload type named by a consumed record's headers (kafka-python's ``(key, value)``
    list), or None when the record has no (UTF-8) :data:`~.base.EVENT_TYPE_HEADER`: written
    before the header existed."""
    for key, value in headers or ():
        if key == EVENT_TYPE_HEADER:
            try:
                return value.decode()
            except UnicodeDecodeError:
                return None
    return None


def is_fencing(exc: BaseException) -> bool:
    # After fencing, kafka-python raises the broker's error once, then a plain KafkaError
    # ("... in an error state: [Error 90] ProducerFencedError") from every transactional call.
    return isinstance(exc, FENCING_ERRORS) or "ProducerFenced" in str(exc)


def connection_config(
    bootstrap_servers: str, client_id: str, security: KafkaSecurity | None = None
) -> dict[str, Any]:
    """How a client reaches the brokers ``"host:port[,host:port]"``: its ``client_id`` (in the
    brokers' logs and metrics) and its security (``security`` None: the process's, see
    :func:`~.kafka_security.use_kafka_security`). Every client of the platform starts from it."""
    return {
        "bootstrap_servers": bootstrap_servers.split(","),
        "client_id": client_id,
        **security_config(security),
    }


def common_config(
    bootstrap_servers: str, client_id: str, security: KafkaSecurity | None = None
) -> dict[str, Any]:
    """What every event-log client gets: :func:`connection_config` and :data:`CLIENT_RECONNECT`."""
    return {**connection_config(bootstrap_servers, client_id, security), **CLIENT_RECONNECT}


def producer_config(common: dict[str, Any], timeout_s: float) -> dict[str, Any]:
    """The configuration of every envelope producer (idempotent, acks=all); ``timeout_s`` bounds
    a send's wait for metadata or buffer space."""
    return {
        **common,
        "enable_idempotence": True,
        "acks": "all",
        # Each append (each transaction) is sent as soon as it is made: the callers wait for
        # its ack one at a time, so lingering would only add its wait to every append. The
        # table's GroupCommitWriter batches callers itself (those arriving while one
        # transaction is in flight share the next), and commit_transaction flushes whatever
        # is lingering anyway, so producer linger would only delay that flush.
        # (batch_size stays 16 KiB: an event is 100-500 bytes; a group transaction of many
        # tables spreads over the partitions, a few events per partition batch.)
        "linger_ms": 0,
        "max_block_ms": int(timeout_s * 1000),
        "retry_backoff_ms": PRODUCER_RETRY_BACKOFF_MS,
        "request_timeout_ms": PRODUCER_REQUEST_TIMEOUT_MS,
        **CLIENT_METRICS,
    }


def consumer_config(common: dict[str, Any], *, committed_only: bool = True) -> dict[str, Any]:
    """A consumer that never auto-commits and starts from the beginning of a partition without
    an offset; ``committed_only``: ``read_committed`` (records of open or aborted transactions
    are never returned), else ``read_uncommitted``."""
    return {
        **common,
        "enable_auto_commit": False,
        "isolation_level": "read_committed" if committed_only else "read_uncommitted",
        "auto_offset_reset": "earliest",
        **CLIENT_METRICS,
    }


def group_consumer_config(
    common: dict[str, Any],
    session_timeout_s: float | None = None,
    batch_wait_s: float | None = None,
    max_poll_interval_s: float | None = None,
) -> dict[str, Any]:
    """A group member's configuration (``session_timeout_s`` None: :data:`GROUP_MEMBERSHIP`'s,
    else that, with heartbeats every sixth of it; ``batch_wait_s`` None: :data:`GROUP_FETCH`'s
    wait, else that; ``max_poll_interval_s`` None: kafka-python's 300 s, else that; all in
    seconds)."""
    # Group members (the services' reactors) batch their fetches; the stream reader does not
    # (it reads to the end at once and would wait GROUP_FETCH's wait at the tail). Range
    # assignment: a member gets the same partition numbers of co-partitioned topics.
    config = {
        **consumer_config(common),
        **GROUP_FETCH,
        **GROUP_MEMBERSHIP,
        "partition_assignment_strategy": (RangePartitionAssignor,),
    }
    if batch_wait_s is not None:
        config["fetch_max_wait_ms"] = int(batch_wait_s * 1000)
    if max_poll_interval_s is not None:
        config["max_poll_interval_ms"] = int(max_poll_interval_s * 1000)
    if session_timeout_s is not None:
        config["session_timeout_ms"] = int(session_timeout_s * 1000)
        config["heartbeat_interval_ms"] = max(100, int(session_timeout_s * 1000 / 6))
    return config
