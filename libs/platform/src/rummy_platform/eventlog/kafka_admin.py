"""Kafka's admin side for the event log: creating and checking topics, and the probe the
services' dependency watch asks whether the brokers answer."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterable

import kafka.errors as kafka_errors
from kafka import KafkaAdminClient
from kafka.admin import ConfigResource, ConfigResourceType

from rummy_platform.topics import TopicSpec

from .base import TopicDescription, TopicMismatch, UnknownTopic
from .kafka_client import connection_config
from .kafka_security import KafkaSecurity


def ensure_topics(admin: KafkaAdminClient, specs: Iterable[TopicSpec]) -> None:
    """Create the topics of ``specs`` that are missing, then check every one against its spec.
    Raises TopicMismatch (partition count or a configuration value differs), UnknownTopic."""
    specs = list(specs)
    existing = set(admin.list_topics())
    missing = {
        spec.name: {
            "num_partitions": spec.partitions,
            "replication_factor": spec.replication_factor,
            "configs": dict(spec.config),
        }
        for spec in specs
        if spec.name not in existing
    }
    if missing:
        # A topic created concurrently by another process is verified below like any other.
        with contextlib.suppress(kafka_errors.TopicAlreadyExistsError):
            admin.create_topics(missing, wait_for_metadata=True)
    for spec in specs:
        described = describe_topic(admin, spec.name)
        if described.partitions != spec.partitions:
            raise TopicMismatch(
                f"topic {spec.name} has {described.partitions} partitions, "
                f"spec says {spec.partitions}"
            )
        for key, value in spec.config.items():
            if described.config.get(key) != value:
                raise TopicMismatch(
                    f"topic {spec.name}: {key}={described.config.get(key)!r}, spec says {value!r}"
                )


def describe_topic(admin: KafkaAdminClient, name: str) -> TopicDescription:
    """Partition count and configuration of topic ``name``. Raises UnknownTopic."""
    try:
        (topic,) = admin.describe_topics([name])
    except kafka_errors.UnknownTopicOrPartitionError:
        raise UnknownTopic(f"topic {name!r} does not exist") from None
    if topic["error_code"] != 0:
        raise UnknownTopic(f"topic {name!r}: error code {topic['error_code']}")
    configs = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, name)])
    config = {key: entry["value"] for key, entry in configs["topic"][name].items()}
    return TopicDescription(name, len(topic["partitions"]), config)


def cluster_probe(
    bootstrap_servers: str,
    *,
    client_id: str = "rummy-probe",
    timeout_s: float = 3.0,
    security: KafkaSecurity | None = None,
) -> Callable[[], None]:
    """A probe asking the brokers ``host:port[,host:port]`` for the cluster's metadata, each
    request timing out after ``timeout_s`` seconds; it raises what the client raises when they
    do not answer. Its admin client is made on the first call and made again after any failure
    (a broker restarted or stalled: kafka-python's admin client does not recover by itself).
    ``security``: how it authenticates (None: the process's)."""
    lock = threading.Lock()
    admin: list[KafkaAdminClient] = []

    def probe() -> None:
        with lock:
            try:
                if not admin:
                    admin.append(
                        KafkaAdminClient(
                            **connection_config(bootstrap_servers, client_id, security),
                            request_timeout_ms=int(timeout_s * 1000),
                            bootstrap_timeout_ms=int(timeout_s * 1000),
                        )
                    )
                admin[0].describe_cluster()
            except Exception:
                if admin:
                    admin.pop().close()
                raise

    return probe
