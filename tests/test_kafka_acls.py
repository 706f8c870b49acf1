"""The Kafka ACL table (rummy_platform.eventlog.kafka_acls, issue 32) says what the services do:
its names are the services' own, each principal writes only its own topic, only the table and
ops read the dealer's dealt cards, and the Strimzi manifests (deploy/k8s/kafka-users.yaml,
services.yaml) grant exactly it. The settings that point a service (and the ``rummy`` tools,
``ops`` by default) at its principal are checked too. (What a real secured broker does with
them: tests/integration/test_kafka_security.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from kafka.admin import ACLOperation, ACLResourcePatternType, ResourceType

from rummy_clock.config import ClockSettings
from rummy_clock.entrypoints.events import CONSUMER_GROUP as CLOCK_GROUP
from rummy_dealer.config import DealerSettings
from rummy_dealer.entrypoints.events import CONSUMER_GROUP as DEALER_GROUP
from rummy_fairness.entrypoints.events import CONSUMER_GROUP as FAIRNESS_GROUP
from rummy_ledger.entrypoints.events import CONSUMER_GROUP as LEDGER_GROUP
from rummy_ops.cli import ToolKafkaSettings, main
from rummy_platform.config import ConfigError, KafkaSecuritySettings
from rummy_platform.eventlog import KafkaSecurity, ensure_password_file
from rummy_platform.eventlog.kafka_acls import (
    GRANTS,
    OPS_USER,
    SCRAM_USERS,
    TABLE_OWNERS,
    TABLE_SNAPSHOTS,
    acl_bindings,
)
from rummy_platform.ports import SERVICES
from rummy_platform.topics import DEALER_EVENTS, EVENT_TOPICS, TABLE_EVENTS
from rummy_table.adapters.directory import TABLE_OWNERS as TABLES_OWNERS_TOPIC
from rummy_table.adapters.snapshot import SNAPSHOT_TOPIC
from rummy_table.application.commit import INPUT_GROUP
from rummy_table.config import DEFAULT_WRITER_ID
from rummy_testing.deploy_files import DEPLOY, k8s_document, yaml_documents

GRANT = {grant.user: grant for grant in GRANTS}
#: Strimzi's names of what kafka-python's enums name.
STRIMZI_TYPES = {
    ResourceType.TOPIC: "topic",
    ResourceType.GROUP: "group",
    ResourceType.TRANSACTIONAL_ID: "transactionalId",
}
STRIMZI_PATTERNS = {
    ACLResourcePatternType.LITERAL: "literal",
    ACLResourcePatternType.PREFIXED: "prefix",
}


def _allowed(prefix: str = "") -> set[tuple[str, str, str, str, str]]:
    """(user, resource type, name, pattern, operation) of every binding for ``prefix``."""
    return {
        (
            acl.principal.removeprefix("User:"),
            STRIMZI_TYPES[acl.resource_pattern.resource_type],
            acl.resource_pattern.resource_name,
            STRIMZI_PATTERNS[acl.resource_pattern.pattern_type],
            acl.operation.name,
        )
        for acl in acl_bindings(prefix)
    }


def _may(user: str, operation: str, topic: str, prefix: str = "") -> bool:
    return (user, "topic", prefix + topic, "literal", operation) in _allowed(prefix)


def test_one_principal_per_service_plus_ops_and_the_broker() -> None:
    assert set(GRANT) == {*SERVICES, OPS_USER}
    assert set(SCRAM_USERS) == {*GRANT, "kafka"}


def test_the_tables_names_are_the_services_own() -> None:
    assert (TABLE_SNAPSHOTS, TABLE_OWNERS) == (SNAPSHOT_TOPIC, TABLES_OWNERS_TOPIC)
    groups = {user: grant.groups for user, grant in GRANT.items()}
    assert groups == {
        "table": (INPUT_GROUP,),
        "dealer": (DEALER_GROUP,),
        "ledger": (LEDGER_GROUP,),
        "fairness": (FAIRNESS_GROUP,),
        "clock": (CLOCK_GROUP,),
        OPS_USER: (),
    }
    dealer = DealerSettings.model_fields["transactional_id"].default
    clock = ClockSettings.model_fields["transactional_id"].default
    assert GRANT["table"].transactional_ids == (DEFAULT_WRITER_ID,)
    assert GRANT["dealer"].transactional_ids == (dealer,)
    assert GRANT["clock"].transactional_ids == (clock,)


@pytest.mark.parametrize("prefix", ["", "run-7-"])
def test_each_service_writes_only_its_own_topics(prefix: str) -> None:
    for topic in (*EVENT_TOPICS, TABLE_SNAPSHOTS, TABLE_OWNERS):
        writers = {user for user in GRANT if _may(user, "WRITE", topic, prefix)}
        owner = "table" if topic.startswith("table-") else topic.removesuffix("-events")
        assert writers == {owner}, topic


@pytest.mark.parametrize("prefix", ["", "run-7-"])
def test_only_the_table_and_ops_read_the_dealt_cards_besides_the_dealer(prefix: str) -> None:
    readers = {user for user in GRANT if _may(user, "READ", DEALER_EVENTS, prefix)}
    assert readers == {"table", "dealer", OPS_USER}
    everyone = {user for user in GRANT if _may(user, "READ", TABLE_EVENTS, prefix)}
    assert everyone == set(GRANT)


def test_a_prefix_narrows_every_binding_to_the_deployment() -> None:
    for _user, kind, name, pattern, _operation in _allowed("run-7-"):
        assert name.startswith("run-7-"), (kind, name)
        assert pattern == (
            "literal" if kind != "transactionalId" and name != "run-7-" else "prefix"
        )
    # Without a prefix the deployment's topics are all topics: the literal wildcard.
    assert ("dealer", "topic", "*", "literal", "CREATE") in _allowed("")


def test_the_strimzi_users_grant_exactly_the_table() -> None:
    declared: set[tuple[str, str, str, str, str]] = set()
    for user in yaml_documents(DEPLOY / "k8s" / "kafka-users.yaml"):
        assert user["kind"] == "KafkaUser"
        assert user["spec"]["authentication"] == {"type": "scram-sha-512"}
        assert user["spec"]["authorization"]["type"] == "simple"
        for acl in user["spec"]["authorization"]["acls"]:
            resource = acl["resource"]
            for operation in acl["operations"]:
                declared.add(
                    (
                        user["metadata"]["name"],
                        resource["type"],
                        resource["name"],
                        resource["patternType"],
                        ACLOperation[_snake(operation)].name,
                    )
                )
    assert declared == _allowed("")


def _snake(operation: str) -> str:
    """Strimzi's ``DescribeConfigs`` as kafka-python's ``DESCRIBE_CONFIGS``."""
    return "".join(f"_{c}" if c.isupper() and i else c for i, c in enumerate(operation)).upper()


def test_the_strimzi_services_connect_as_their_own_user() -> None:
    kafka = k8s_document(DEPLOY / "k8s" / "kafka.yaml", "Kafka", "rummy")["spec"]["kafka"]
    assert kafka["authorization"] == {"type": "simple"}
    (listener,) = kafka["listeners"]
    assert listener["tls"] is True
    assert listener["authentication"] == {"type": "scram-sha-512"}
    for service in SERVICES:
        pod = k8s_document(DEPLOY / "k8s" / "services.yaml", "Deployment", f"rummy-{service}")
        spec = pod["spec"]["template"]["spec"]
        (container,) = spec["containers"]
        env = {variable["name"]: variable.get("value") for variable in container["env"]}
        assert env["KAFKA_BOOTSTRAP_SERVERS"] == f"rummy-kafka-bootstrap:{listener['port']}"
        assert env["RUMMY_KAFKA_SECURITY_PROTOCOL"] == "SASL_SSL"
        assert "RUMMY_KAFKA_USERNAME" not in env  # the service's name, its KafkaUser's
        volumes = {volume["name"]: volume["secret"] for volume in spec["volumes"]}
        mounts = {mount["name"]: mount["mountPath"] for mount in container["volumeMounts"]}
        assert volumes["kafka-user"]["secretName"] == service
        assert env["RUMMY_KAFKA_PASSWORD_FILE"] == f"{mounts['kafka-user']}/password"
        assert volumes["kafka-ca"]["secretName"] == "rummy-cluster-ca-cert"
        assert env["RUMMY_KAFKA_CA_FILE"] == f"{mounts['kafka-ca']}/ca.crt"


class _Table(KafkaSecuritySettings):
    service = "table"


def test_plaintext_is_the_default_and_configures_nothing() -> None:
    settings = _Table.load()
    assert settings.kafka_security == KafkaSecurity()
    assert settings.kafka_security.client_config() == {}


def test_sasl_ssl_is_the_services_principal_with_the_password_of_its_file(tmp_path: Path) -> None:
    password = ensure_password_file(tmp_path / "table.password")
    assert (tmp_path / "table.password").stat().st_mode & 0o777 == 0o600
    assert ensure_password_file(tmp_path / "table.password") == password  # made once
    settings = _Table.load(
        kafka_security_protocol="SASL_SSL",
        kafka_password_file=tmp_path / "table.password",
        kafka_ca_file=None,
    )
    security = settings.kafka_security
    assert security.principal == "User:table"
    assert security.client_config() == {
        "security_protocol": "SASL_SSL",
        "sasl_mechanism": "SCRAM-SHA-512",
        "sasl_plain_username": "table",
        "sasl_plain_password": password,
    }
    assert password not in repr(security) and password not in repr(settings)


@pytest.mark.parametrize(
    ("values", "named"),
    [
        ({}, "RUMMY_KAFKA_PASSWORD_FILE"),
        ({"kafka_password_file": Path("/nonexistent/table.password")}, "RUMMY_KAFKA_PASSWORD_FILE"),
        ({"kafka_ca_file": Path("/nonexistent/ca.pem")}, "RUMMY_KAFKA_CA_FILE"),
    ],
)
def test_sasl_ssl_without_usable_files_stops_the_start(
    tmp_path: Path, values: dict[str, Path], named: str
) -> None:
    if named == "RUMMY_KAFKA_CA_FILE":
        values = {**values, "kafka_password_file": tmp_path / "p"}
        ensure_password_file(tmp_path / "p")
    with pytest.raises(ConfigError, match=named):
        _Table.load(kafka_security_protocol="SASL_SSL", **values)


def test_the_tools_connect_as_ops_unless_told_another_user(tmp_path: Path) -> None:
    password = ensure_password_file(tmp_path / "ops.password")
    tools = ToolKafkaSettings.load(
        kafka_security_protocol="SASL_SSL", kafka_password_file=tmp_path / "ops.password"
    )
    assert tools.kafka_security == KafkaSecurity("SASL_SSL", username=OPS_USER, password=password)
    assert ToolKafkaSettings.load().kafka_security == KafkaSecurity()


def test_rummy_refuses_sasl_ssl_without_a_password_file_with_status_2() -> None:
    result = CliRunner().invoke(main, ["tables"], env={"RUMMY_KAFKA_SECURITY_PROTOCOL": "SASL_SSL"})
    assert result.exit_code == 2
    assert result.output.startswith(
        "Error: RUMMY_KAFKA_SECURITY_PROTOCOL=SASL_SSL needs RUMMY_KAFKA_PASSWORD_FILE"
    )
