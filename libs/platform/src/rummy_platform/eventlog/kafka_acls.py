"""Who may do what on a secured broker (issue 32): one principal per service, each writing only
its own topic and reading only what it consumes, and ``ops`` reading everything.

:data:`GRANTS` is the table, the one source of the ACLs: the local broker's
(``deploy/local/kafka.sh`` applies :func:`acl_bindings` after it starts), the tests' and the
Kubernetes manifests' ``KafkaUser`` resources (deploy/k8s/kafka-users.yaml, held to this table by
``tests/test_kafka_acls.py``). Names are after the topic prefix (``RUMMY_TOPIC_PREFIX``): the
bindings of a deployment are made for its prefix. Topic names the services own are literal here
(``table-snapshots``, ``table-owners``: the table's; consumer groups and transactional ids: each
service's defaults), and the same test holds them to the services' constants.

Every service may create and describe every topic of its deployment (each one creates the five
event topics it may find missing at start, with the one spec, see
:func:`rummy_platform.topics.event_topic_specs`), but writing needs the grant below. The
broker's own principal (``kafka``) is a super user and needs no grant.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from kafka.admin import (
    ACL,
    ACLOperation,
    ACLPermissionType,
    ACLResourcePatternType,
    KafkaAdminClient,
    ResourcePattern,
    ResourceType,
)

from rummy_platform.topics import (
    CLOCK_EVENTS,
    DEALER_EVENTS,
    EVENT_TOPICS,
    FAIRNESS_EVENTS,
    LEDGER_EVENTS,
    TABLE_EVENTS,
    TABLE_INPUT_TOPICS,
)

#: The broker's own principal: a super user (inter-broker and controller traffic).
BROKER_USER = "kafka"
#: The principal of the replay, audit and operators' read-only tools.
OPS_USER = "ops"
#: The table service's own topics besides table-events (rummy_table.adapters).
TABLE_SNAPSHOTS = "table-snapshots"
TABLE_OWNERS = "table-owners"


@dataclass(frozen=True)
class Grant:
    """What the principal ``User:<user>`` may do, every name after the topic prefix: write
    (and read) ``writes``, read ``reads``, consume in the groups ``groups`` and use the
    transactional ids that start with one of ``transactional_ids``."""

    user: str
    writes: tuple[str, ...] = ()
    reads: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()
    transactional_ids: tuple[str, ...] = ()

    @property
    def readable(self) -> tuple[str, ...]:
        """Every topic it may read: what it writes, then what it reads."""
        return tuple(dict.fromkeys((*self.writes, *self.reads)))


#: The table of grants. The table consumes the other four topics and rebuilds from its own;
#: the dealer, ledger, fairness and clock consume table-events and read back their own topic;
#: ``ops`` (replay, audit) reads every topic and writes none. Only the table and ops read
#: dealer-events (the dealt cards) besides the dealer.
GRANTS: tuple[Grant, ...] = (
    Grant(
        "table",
        writes=(TABLE_EVENTS, TABLE_SNAPSHOTS, TABLE_OWNERS),
        reads=TABLE_INPUT_TOPICS,
        groups=("table",),
        transactional_ids=("table-writer",),
    ),
    Grant(
        "dealer",
        writes=(DEALER_EVENTS,),
        reads=(TABLE_EVENTS,),
        groups=("dealer",),
        transactional_ids=("dealer",),
    ),
    Grant("ledger", writes=(LEDGER_EVENTS,), reads=(TABLE_EVENTS,), groups=("ledger",)),
    Grant("fairness", writes=(FAIRNESS_EVENTS,), reads=(TABLE_EVENTS,), groups=("fairness",)),
    Grant(
        "clock",
        writes=(CLOCK_EVENTS,),
        reads=(TABLE_EVENTS,),
        groups=("clock",),
        transactional_ids=("clock",),
    ),
    Grant(OPS_USER, reads=(*EVENT_TOPICS, TABLE_SNAPSHOTS, TABLE_OWNERS)),
)

#: Every SCRAM user a secured broker is formatted with: its own, then one per grant.
SCRAM_USERS: tuple[str, ...] = (BROKER_USER, *(grant.user for grant in GRANTS))


def _allow(user: str, operation: ACLOperation, pattern: ResourcePattern) -> ACL:
    return ACL(f"User:{user}", "*", operation, ACLPermissionType.ALLOW, pattern)


def _named(kind: ResourceType, name: str, *, prefixed: bool = False) -> ResourcePattern:
    pattern = ACLResourcePatternType.PREFIXED if prefixed else ACLResourcePatternType.LITERAL
    return ResourcePattern(kind, name, pattern)


def _deployment_topics(prefix: str) -> ResourcePattern:
    """Every topic of the deployment: those starting with ``prefix`` (any topic without one)."""
    if prefix:
        return _named(ResourceType.TOPIC, prefix, prefixed=True)
    return _named(ResourceType.TOPIC, "*")


def acl_bindings(prefix: str = "", grants: Iterable[Grant] = GRANTS) -> list[ACL]:
    """The ACLs of ``grants`` for the deployment whose names start with ``prefix``: topics and
    groups literal, transactional ids prefixed, create/describe over the deployment's topics."""
    acls: list[ACL] = []
    for grant in grants:
        user = grant.user
        if grant.user != OPS_USER:
            everything = _deployment_topics(prefix)
            acls += [
                _allow(user, operation, everything)
                for operation in (
                    ACLOperation.CREATE,
                    ACLOperation.DESCRIBE,
                    ACLOperation.DESCRIBE_CONFIGS,
                )
            ]
        acls += [
            _allow(user, ACLOperation.WRITE, _named(ResourceType.TOPIC, prefix + topic))
            for topic in grant.writes
        ]
        acls += [
            _allow(user, ACLOperation.READ, _named(ResourceType.TOPIC, prefix + topic))
            for topic in grant.readable
        ]
        acls += [
            _allow(user, ACLOperation.READ, _named(ResourceType.GROUP, prefix + group))
            for group in grant.groups
        ]
        acls += [
            _allow(
                user,
                ACLOperation.WRITE,
                _named(ResourceType.TRANSACTIONAL_ID, prefix + name, prefixed=True),
            )
            for name in grant.transactional_ids
        ]
    return acls


def apply_acls(admin: KafkaAdminClient, prefix: str = "") -> int:
    """Create the ACLs of :data:`GRANTS` for ``prefix`` through ``admin`` (a super user's
    client; existing ones are kept: the broker adds none twice); return how many were asked.
    Raises RuntimeError naming the ACLs the broker refused."""
    acls = acl_bindings(prefix)
    result = admin.create_acls(acls)
    failed = result.get("failed") or []
    if failed:
        raise RuntimeError(f"the broker refused {len(failed)} ACLs: {failed[:3]}")
    return len(acls)
