"""The repository's pytest plugin: broker fixtures, the integration marker, hypothesis profiles.

Fixtures (session scope):

- ``kafka_bootstrap`` -> ``str``, bootstrap servers of a real Kafka broker;
- ``database_url`` -> ``str``, a ``postgresql://`` URL of a real PostgreSQL (its role may create
  databases, so a suite can make its own).

Fixture (function scope): ``own_kafka`` -> :class:`rummy_ops.own_brokers.OwnServer`, a Kafka
broker of the test's own (free ports, its own data folder, started with ``deploy/local/kafka.sh``)
that the test may stall (``pause``/``resume``) or restart; stopped afterwards. Never the shared one.

Fixture (session scope): ``secure_kafka`` -> :class:`rummy_ops.own_brokers.OwnBrokers` whose
Kafka broker is the secured one (``RUMMY_KAFKA_SECURE=1``: SASL_SSL/SCRAM, one principal per
service, ACLs), started once on free ports; ``.kafka.address``, ``.kafka_security(user)``,
``.grant_kafka(prefix)``.

Every test outside ``tests/e2e`` (not marked ``e2e``) runs with this process's TLS client
variables as they were before any test stack set them
(:func:`rummy_testing.client_env.without_stack_clients`): the e2e tier's session stack, left running
until the session ends, does not make a later in-process server's plaintext client dial TLS.

See ``rummy_testing.brokers`` for where they come from. A test that uses either fixture is marked
``integration`` automatically. When no broker can be had the test fails (setup error), saying
what was tried: a missing broker is never a skip, and no variable (such as ``CI``) changes that.

Hypothesis: the profiles ``ci`` and ``dev`` and ``examples`` (how many examples a long property
runs in each) live in ``rummy_testing.profiles``, which this plugin loads before collection.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack

import pytest

import rummy_testing.profiles  # noqa: F401 - registers and loads the hypothesis profiles
from rummy_ops.own_brokers import OwnBrokers, OwnServer
from rummy_ops.stack import StackError
from rummy_testing.brokers import BrokerUnavailable, kafka_bootstrap_servers, postgres_database_url
from rummy_testing.client_env import without_stack_clients

BROKER_FIXTURES = frozenset({"kafka_bootstrap", "database_url", "own_kafka", "secure_kafka"})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if BROKER_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.integration)


def _unavailable(what: str, error: BrokerUnavailable | StackError) -> None:
    pytest.fail(f"no {what}: {error}", pytrace=False)


@pytest.fixture(scope="session")
def _broker_resources() -> Iterator[ExitStack]:
    with ExitStack() as resources:
        yield resources


@pytest.fixture(scope="session")
def kafka_bootstrap(_broker_resources: ExitStack) -> str:
    """Bootstrap servers of a real Kafka broker (env, container or deploy/local)."""
    try:
        return kafka_bootstrap_servers(_broker_resources)
    except BrokerUnavailable as error:
        _unavailable("Kafka broker", error)
        raise


@pytest.fixture(scope="session")
def database_url(_broker_resources: ExitStack) -> str:
    """A URL of a real PostgreSQL database (env, container or deploy/local)."""
    try:
        return postgres_database_url(_broker_resources)
    except BrokerUnavailable as error:
        _unavailable("PostgreSQL", error)
        raise


@pytest.fixture
def own_kafka(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OwnServer]:
    """A Kafka broker of this test's own (see the module doc); stopped (resumed first) after."""
    with OwnBrokers(tmp_path_factory.mktemp("own-kafka")) as brokers:
        try:
            brokers.start_kafka()
        except StackError as error:
            _unavailable("Kafka broker of the test's own", error)
        yield brokers.kafka


@pytest.fixture(scope="session")
def secure_kafka(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OwnBrokers]:
    """A secured Kafka broker of this session's own (see the module doc); stopped after."""
    with OwnBrokers(tmp_path_factory.mktemp("secure-kafka"), secure_kafka=True) as brokers:
        try:
            brokers.start_kafka()
        except StackError as error:
            _unavailable("secured Kafka broker", error)
        yield brokers


@pytest.fixture(autouse=True)
def _no_stack_clients_outside_e2e(request: pytest.FixtureRequest) -> Iterator[None]:
    if request.node.get_closest_marker("e2e") is not None:
        yield
        return
    with without_stack_clients():
        yield
