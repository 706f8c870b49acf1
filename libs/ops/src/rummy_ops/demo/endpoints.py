"""Where the demo's services answer (:class:`Endpoints`), from a started stack or given."""

from __future__ import annotations

from dataclasses import dataclass

from rummy_ops.stack import Stack
from rummy_platform.token_keys import KeyFiles


@dataclass(frozen=True)
class Endpoints:
    """Where the services answer and the token keys' files (the issuer's private key mints the
    demo's tokens); and, for the replay of the hands afterwards, where their event log and
    ledger live (``topic_prefix`` as the services' ``RUMMY_TOPIC_PREFIX``)."""

    table: str
    ledger: str
    token_keys: KeyFiles
    kafka_bootstrap_servers: str = ""
    database_url: str = ""
    topic_prefix: str = ""


def stack_endpoints(stack: Stack) -> Endpoints:
    """The :class:`Endpoints` of a started ``stack`` (its table and ledger, token keys, brokers and
    ``RUMMY_TOPIC_PREFIX``)."""
    return Endpoints(
        table=stack.address("table"),
        ledger=stack.address("ledger"),
        token_keys=stack.config.keys,
        kafka_bootstrap_servers=stack.kafka_bootstrap_servers,
        database_url=stack.database_url,
        topic_prefix=stack.topic_prefix,
    )
