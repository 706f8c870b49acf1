"""Configuration is read in one place: each service's settings class, once, at start.

No library or service module reads the environment except the settings modules (pydantic-settings
does it for them) and the ``rummy`` command's own documented inputs (it reads the brokers, the
token secret and the plug-ins for itself, and builds the environment of the processes it
starts). docs/configuration.md's table of variables is generated from the classes and must
match them; a bad value stops each service at start, before it binds a port, naming the variable."""

from __future__ import annotations

import importlib.util
import re
import socket
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from pydantic_settings import BaseSettings

from rummy_testing.deploy_files import DEPLOY, k8s_document, load_yaml
from rummy_testing.service_process import SUPPORT_DIR
from rummy_testing.token_keys import token_environment

ROOT = Path(__file__).resolve().parent.parent
READS_ENVIRONMENT = re.compile(r"\bos\.environ\b|\bgetenv\b|\bfrom os import\b.*\benviron\b")
#: The ``rummy`` command's documented environment passing (docs/configuration.md).
CLI_ENVIRONMENT = {
    "libs/ops/src/rummy_ops/cli.py",
    "libs/ops/src/rummy_ops/stack.py",
    "libs/ops/src/rummy_ops/own_brokers.py",
    "libs/ops/src/rummy_ops/token.py",
    "libs/ops/src/rummy_ops/replay/command.py",
    "libs/ops/src/rummy_ops/broker_defaults.py",
}
GENERATED = ("libs/proto/src/rummy/",)


def environment_readers(root: Path) -> list[str]:
    """``path:line`` of every line of the libraries' and services' code under ``root`` that
    reads the environment outside the settings modules and the CLI's documented passing."""
    found = []
    sources = [*root.glob("libs/*/src/**/*.py"), *root.glob("services/*/src/**/*.py")]
    for path in sorted(sources):
        name = path.relative_to(root).as_posix()
        if name in CLI_ENVIRONMENT or name.startswith(GENERATED) or path.name == "config.py":
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if READS_ENVIRONMENT.search(line):
                found.append(f"{name}:{number}: {line.strip()}")
    return found


def test_no_library_or_service_reads_the_environment_outside_its_settings() -> None:
    assert environment_readers(ROOT) == []


def test_the_scan_finds_a_read_of_the_environment(tmp_path: Path) -> None:
    module = tmp_path / "services" / "acme" / "src" / "rummy_acme" / "bootstrap.py"
    module.parent.mkdir(parents=True)
    module.write_text('import os\nprefix = os.environ.get("RUMMY_TOPIC_PREFIX", "")\n')
    (module.parent / "config.py").write_text("import os\nos.environ\n")
    assert environment_readers(tmp_path) == [
        "services/acme/src/rummy_acme/bootstrap.py:2: "
        'prefix = os.environ.get("RUMMY_TOPIC_PREFIX", "")'
    ]


def settings_table() -> ModuleType:
    """``deploy/settings_table.py`` (its ``PROCESSES``: each service's settings class)."""
    spec = importlib.util.spec_from_file_location("settings_table", DEPLOY / "settings_table.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def variables_of(settings: type[BaseSettings]) -> set[str]:
    names: set[str] = set()
    for field in settings.model_fields.values():
        alias = field.validation_alias
        if alias is None:
            continue
        assert isinstance(alias, str), f"{settings.__name__}: {alias!r} is not one variable"
        names.add(alias)
    return names


def test_the_deployments_give_the_services_only_variables_they_read() -> None:
    processes = dict(settings_table().PROCESSES)
    manifests = DEPLOY / "k8s" / "services.yaml"
    for service, settings in processes.items():
        deployment = k8s_document(manifests, "Deployment", f"rummy-{service}")
        (container,) = deployment["spec"]["template"]["spec"]["containers"]
        # a variable only interpolated into another's value ($(POD_IP)) is Kubernetes' own
        values = " ".join(str(variable.get("value", "")) for variable in container["env"])
        given = {v["name"] for v in container["env"] if f"$({v['name']})" not in values}
        assert given <= variables_of(settings), f"k8s {service}: {given - variables_of(settings)}"
    # compose gives the five one shared block (DATABASE_URL too: ignored where unused)
    known = set().union(*(variables_of(settings) for settings in processes.values()))
    compose = load_yaml(DEPLOY / "compose.yaml")["services"]
    for service in processes:
        given = set(compose[service]["environment"])
        assert given <= known, f"compose {service}: {given - known}"


def test_readme_s_table_of_variables_is_the_settings_classes() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "deploy" / "settings_table.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr


#: One malformed variable per service, and the start of the line it must print.
BAD_STARTS = [
    ("table", {"RUMMY_TABLE_SNAPSHOT_SECONDS": "0"}, "RUMMY_TABLE_SNAPSHOT_SECONDS='0': "),
    ("dealer", {"RUMMY_LOG_LEVEL": "loud"}, "RUMMY_LOG_LEVEL='loud': Input should be"),
    ("ledger", {"RUMMY_LEDGER_MAX_GRANT_HUNDREDTHS": "1e9"}, "RUMMY_LEDGER_MAX_GRANT_HUNDREDTHS="),
    ("fairness", {"RUMMY_RATE_LIMIT_PLAYER": "fast"}, "RUMMY_RATE_LIMIT_PLAYER='fast': not '<"),
    (
        "clock",
        {"RUMMY_CLOCK_SPEED": "-3"},
        "RUMMY_CLOCK_SPEED='-3': Input should be greater than 0",
    ),
]


@pytest.mark.slow
@pytest.mark.integration
@pytest.mark.parametrize(("service", "bad", "expected"), BAD_STARTS)
def test_a_service_with_a_malformed_variable_exits_2_naming_it_before_it_binds(
    service: str, bad: dict[str, str], expected: str, tmp_path: Path
) -> None:
    with socket.socket() as held:  # the service's gRPC port, held here: binding it would fail
        held.bind(("127.0.0.1", 0))
        port = held.getsockname()[1]
        env = {
            "PATH": "/usr/bin:/bin",
            "PYTHONPATH": str(SUPPORT_DIR),
            **token_environment(),
            "KAFKA_BOOTSTRAP_SERVERS": "127.0.0.1:1",
            "DATABASE_URL": "postgresql://nobody@127.0.0.1:1/none",
            "RUMMY_GRPC_PORT": str(port),
            "RUMMY_METRICS_PORT": "0",
            **bad,
        }
        done = subprocess.run(
            [sys.executable, "-m", f"rummy_{service}"],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(f"rummy {service}: configuration error: {expected}")
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
