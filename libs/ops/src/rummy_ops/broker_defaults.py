"""Where a ``rummy`` command that reads the brokers looks by default (``--bootstrap``,
``--database-url`` of ``rummy replay``, ``export``, ``proof``, ``audit``, ``backup``,
``restore``): ``KAFKA_BOOTSTRAP_SERVERS`` / ``DATABASE_URL`` when set, else the local brokers on
the ports ``deploy/local`` starts them on (``RUMMY_KAFKA_PORT`` / ``RUMMY_PG_PORT``, else the
table of ports, :mod:`rummy_platform.ports`, read by :func:`rummy_ops.stack.broker_ports`), so
a checkout whose brokers were moved reads its own and not another's. ``--help`` shows the
default in force (:class:`EffectiveDefault`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import click

from rummy_ops.reach import redact
from rummy_ops.stack import StackError, broker_ports
from rummy_platform.ports import local_database_url, local_kafka_bootstrap

F = TypeVar("F", bound=Callable[..., Any])


def _local_port(environ: Mapping[str, str], broker: str) -> int:
    try:
        return broker_ports(environ)[broker][0].port
    except StackError as error:
        raise click.UsageError(str(error)) from None


def default_kafka_bootstrap(environ: Mapping[str, str] | None = None) -> str:
    """``KAFKA_BOOTSTRAP_SERVERS`` of ``environ`` (default: this process's) when set, else the
    local broker, ``127.0.0.1:<RUMMY_KAFKA_PORT or 19092>``. Raises click.UsageError for a
    malformed port variable."""
    env = os.environ if environ is None else environ
    return env.get("KAFKA_BOOTSTRAP_SERVERS") or local_kafka_bootstrap(_local_port(env, "kafka"))


def default_database_url(environ: Mapping[str, str] | None = None) -> str:
    """``DATABASE_URL`` of ``environ`` (default: this process's) when set, else the local
    PostgreSQL on ``RUMMY_PG_PORT`` (else 15432). Raises click.UsageError for a malformed port
    variable."""
    env = os.environ if environ is None else environ
    return env.get("DATABASE_URL") or local_database_url(_local_port(env, "postgres"))


class EffectiveDefault(click.Option):
    """An option whose default is computed when asked, and shown so in ``--help`` (click shows
    a callable default as ``(dynamic)``), a URL's password hidden."""

    def get_default(self, ctx: click.Context, call: bool = True) -> Any:
        return super().get_default(ctx, call=True)

    def get_help_extra(self, ctx: click.Context) -> Any:
        extra = super().get_help_extra(ctx)
        if isinstance(extra.get("default"), str):  # a URL's password is not shown
            extra["default"] = redact(extra["default"])
        return extra


def _effective_default_option(flag: str, default: Callable[[], str], help: str) -> Callable[[F], F]:
    """A click option ``flag`` whose default is ``default()``, computed when asked
    (:class:`EffectiveDefault`), with ``help``."""
    return click.option(flag, cls=EffectiveDefault, default=default, show_default=True, help=help)


#: ``--bootstrap``: the Kafka brokers to read (:func:`default_kafka_bootstrap`).
bootstrap_option = _effective_default_option(
    "--bootstrap",
    default_kafka_bootstrap,
    "Kafka bootstrap servers (default: KAFKA_BOOTSTRAP_SERVERS, else the local broker on "
    "RUMMY_KAFKA_PORT).",
)
#: ``--database-url``: the services' PostgreSQL (:func:`default_database_url`).
database_url_option = _effective_default_option(
    "--database-url",
    default_database_url,
    "The services' PostgreSQL database (default: DATABASE_URL, else the local server on "
    "RUMMY_PG_PORT).",
)
