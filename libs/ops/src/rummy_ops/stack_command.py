"""The commands that run a whole stack (``rummy up``, ``rummy demo``, ``rummy soak``): their
shared ``--clock-speed`` option and the start / interrupt / stop around their work
(:func:`running_stack`), in one home; and ``rummy up`` itself."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import click

from rummy_ops.local_prometheus import PROMETHEUS_PORT_VARIABLE, LocalPrometheus, listening_port
from rummy_ops.reach import connect_postgres, require_kafka
from rummy_ops.stack import (
    Stack,
    StackConfig,
    StackError,
    environment_port,
    interrupt_on_sigterm,
    shielded_from_interrupts,
)
from rummy_ops.supervisor import Supervisor
from rummy_platform.eventlog import use_kafka_security
from rummy_platform.eventlog.kafka_acls import OPS_USER
from rummy_platform.port_check import PORT_IN_USE_STATUS, PortInUse, ensure_free
from rummy_platform.ports import PROMETHEUS_PORT


class StartRefused(click.ClickException):
    """A start refused before anything ran (a port in use, a malformed port variable):
    ``Error: ...`` and exit status 2, click's status for a bad invocation (1 is a command's own
    failure)."""

    exit_code = PORT_IN_USE_STATUS


def clock_speed_option(default: float) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``--clock-speed`` (a float of at least 0.01, ``default`` when not given) of a command
    that starts a stack: the services' ``RUMMY_CLOCK_SPEED``."""
    return click.option(
        "--clock-speed",
        default=default,
        show_default=True,
        type=click.FloatRange(min=0.01),
        help="How many times faster than real time deadlines pass (RUMMY_CLOCK_SPEED).",
    )


@contextmanager
def running_stack(
    clock_speed: float,
    *,
    starting: Callable[[Stack], str],
    interrupted: tuple[str, int | None],
    keep_running: bool = False,
    insecure: bool = False,
) -> Iterator[Stack]:
    """Start Kafka, PostgreSQL and the five services (``StackConfig.from_env``), yield the
    started :class:`Stack`, and stop what it started when the block ends, also on Ctrl-C or
    SIGTERM (``keep_running``: leave it running, unsupervised, and print how to stop it).

    ``starting(stack)`` is the line printed before the start. ``interrupted`` is (the line
    printed on Ctrl-C, the exit status then; None: the command ends normally). A StackError
    becomes a click error (exit status 1, its message); a port variable that is not a port,
    or a port in use (checked before anything starts), one of status 2 (:class:`StartRefused`:
    ``Error: port 15051, wanted by the table service's gRPC server, is in use by pid ...``).
    External brokers (``KAFKA_BOOTSTRAP_SERVERS`` and ``DATABASE_URL``) that do not answer
    within :data:`~rummy_ops.reach.REACH_TIMEOUT_S` seconds end it first, exit status 1
    (:class:`~rummy_ops.reach.Unreachable`), nothing started. Every gRPC port serves mutual
    TLS with the certificates of ``.local/certs`` (made on first use), and this process's
    clients present the ``client`` one, unless ``insecure`` (``--insecure``) or
    ``RUMMY_INSECURE=1``: plaintext, said by an ``INSECURE:`` line on stderr. With
    ``RUMMY_KAFKA_SECURE=1`` the local broker is the secured one and this process's Kafka
    clients connect as ``ops``."""
    try:
        # --keep-running: the services must outlive this process, so they are not tied to it.
        config = StackConfig.from_env(clock_speed=clock_speed, supervised=not keep_running)
        if insecure:
            config = replace(config, tls_dir=None)
    except StackError as error:
        raise StartRefused(str(error)) from None
    if config.external_infrastructure:
        # brokers given (KAFKA_BOOTSTRAP_SERVERS and DATABASE_URL) that do not answer: one line
        # within seconds, before anything starts, not the topic creation's 30 s wait
        require_kafka(config.kafka_bootstrap_servers or "")
        connect_postgres(config.database_url or "").close()
    stack = Stack(config)
    stack.use_client_certificate()
    click.echo(starting(stack))
    message, status = interrupted
    with interrupt_on_sigterm():
        try:
            stack.start()
            # after the start: a refused one (a port in use) says one line, its Error, only
            click.echo(tls_line(config.tls_dir), err=True)
            if config.kafka_credentials is not None:
                # this command's own readers (the demo's replay) read as the operators' principal
                use_kafka_security(config.kafka_credentials.security(OPS_USER))
                click.echo(KAFKA_SECURE_LINE, err=True)
            yield stack
        except PortInUse as error:
            keep_running, status = False, None  # nothing was started: nothing to stop or say
            raise StartRefused(str(error)) from None
        except StackError as error:
            raise click.ClickException(str(error)) from None
        except KeyboardInterrupt:
            click.echo(message, err=status is not None)
            keep_running = False
            if status is not None:
                raise SystemExit(status) from None
        finally:
            if keep_running:
                click.echo(_still_running(stack))
            else:
                with shielded_from_interrupts():
                    if status is not None:  # the demo says what it stops; `up` said "stopping"
                        brokers = " and the brokers" if stack.owns_brokers else ""
                        click.echo(f"stopping the services{brokers}")
                    stack.stop()


#: What a start on the secured broker (``RUMMY_KAFKA_SECURE=1``) says of Kafka's security.
KAFKA_SECURE_LINE = "Kafka over SASL_SSL: each service its own SCRAM principal, ACLs per topic"


def insecure_option(function: Callable[..., Any]) -> Callable[..., Any]:
    """``--insecure`` of a command that starts a stack (its ``insecure`` argument), and
    ``--tls``, accepted and ignored (TLS is the default; scripts written before it keep
    working)."""
    function = click.option(
        "--tls",
        is_flag=True,
        hidden=True,
        expose_value=False,
        help="Ignored: every gRPC port serves mutual TLS unless --insecure.",
    )(function)
    return click.option(
        "--insecure",
        is_flag=True,
        help="Serve gRPC in plaintext, no certificate made or checked (also RUMMY_INSECURE=1); "
        "by default every port serves mutual TLS with the certificates of .local/certs "
        "(`rummy certs`; made on first use).",
    )(function)


def tls_line(tls_dir: Path | None) -> str:
    """What a start says of gRPC's security, loudly when it is plaintext."""
    if tls_dir is None:
        return (
            "INSECURE: gRPC is plaintext on every port (--insecure or RUMMY_INSECURE=1): "
            "tokens and cards cross the network in the clear"
        )
    return f"gRPC over mutual TLS on every port (CA and certificates in {tls_dir})"


def _still_running(stack: Stack) -> str:
    detached = stack.detach()
    pids = ", ".join(f"{name} {pid}" for name, pid in detached.items())
    brokers = (
        " and then the brokers with `bash deploy/local/stack.sh down`"
        if stack.owns_brokers
        else " (the brokers were already running and are not ours to stop)"
    )
    return (
        f"still running ({pids}); stop the services with "
        f"`kill {' '.join(str(pid) for pid in detached.values())}`{brokers}"
    )


def _say(line: str) -> None:
    click.echo(f"{time.strftime('%H:%M:%S')}  {line}")


def _prometheus_port(wanted: bool) -> int | None:
    """The port of ``--prometheus`` (None without it), checked free before anything starts."""
    if not wanted:
        return None
    try:
        port = environment_port(PROMETHEUS_PORT_VARIABLE, PROMETHEUS_PORT)
        ensure_free([listening_port(port)])
    except (StackError, PortInUse) as error:
        raise StartRefused(str(error)) from None
    return port


@click.command()
@clock_speed_option(1.0)
@click.option(
    "--interval",
    default=10.0,
    show_default=True,
    type=click.FloatRange(min=0.5),
    help="Seconds between health reports.",
)
@click.option(
    "--prometheus",
    is_flag=True,
    help=(
        f"Also start a Prometheus on 127.0.0.1:{PROMETHEUS_PORT} ({PROMETHEUS_PORT_VARIABLE}) "
        "scraping every service's metrics (deploy/prometheus/prometheus.yml); stopped with "
        "the stack."
    ),
)
@insecure_option
def up(clock_speed: float, interval: float, prometheus: bool, insecure: bool) -> None:
    """Start Kafka, PostgreSQL and the five services; print their health until Ctrl-C, then stop
    everything this command started.

    A service that exits is started again after 1 s, the delay doubling with each restart
    (1, 2, 4, 8, 16 s); its status line shows its restarts and last exit status. When one
    exits a sixth time within ten minutes (five restarts), `rummy up` says which and with what
    statuses, stops the rest and exits 1. Ten minutes up and a service starts afresh."""
    prometheus_port = _prometheus_port(prometheus)
    with running_stack(
        clock_speed,
        starting=lambda s: f"starting (logs in {s.config.log_dir}); Ctrl-C stops everything",
        interrupted=("stopping", None),
        insecure=insecure,
    ) as stack:
        _say("started " + ", ".join(f"{name} pid {pid}" for name, pid in stack.pids.items()))
        server = None
        try:
            if prometheus_port is not None:
                metrics = {name: ports[1] for name, ports in stack.config.ports.items()}
                server = LocalPrometheus(stack.config.root, metrics, prometheus_port)
                server.start()
                _say(f"prometheus {server.url} (scraping the services; {server.folder})")
            _supervise(stack, interval)
        except StackError:
            click.echo("stopping the services", err=True)
            raise
        finally:
            if server is not None:
                with shielded_from_interrupts():
                    server.stop()


def _supervise(stack: Stack, interval: float) -> None:
    """Restart what exits (:class:`~rummy_ops.supervisor.Supervisor`) and print the status
    line every ``interval`` seconds, until interrupted or the supervisor gives up."""
    supervisor = Supervisor(stack, _say)
    next_status = time.monotonic()
    while True:
        supervisor.tick()
        if time.monotonic() >= next_status:
            _say(supervisor.status())
            next_status = time.monotonic() + interval
        time.sleep(min(0.5, interval))
