"""The ``rummy`` command: one click group; each subcommand lives in its own module."""

from __future__ import annotations

import os
from typing import NoReturn

import click

import rummy_ops.certs
from rummy_ops.audit import audit
from rummy_ops.backup.command import backup, restore
from rummy_ops.close_table import close_table
from rummy_ops.demo.command import demo
from rummy_ops.hands_command import hands
from rummy_ops.limits_command import limits
from rummy_ops.proof import proof
from rummy_ops.replay.command import export, replay
from rummy_ops.sim_command import sim
from rummy_ops.soak import soak_command
from rummy_ops.stack_command import up
from rummy_ops.tables_command import tables
from rummy_ops.token import token
from rummy_ops.watch_command import watch
from rummy_platform.config import PLUGINS_VARIABLE, ConfigError, KafkaSecuritySettings
from rummy_platform.eventlog import use_kafka_security
from rummy_platform.eventlog.kafka_acls import OPS_USER
from rummy_platform.plugins import PluginError, import_plugins, plugin_names
from rummy_rules import registry
from rummy_rules.console import run_console


class PluginFailure(click.ClickException):
    """A plugin of RUMMY_VARIANT_PLUGINS could not be loaded, or the RUMMY_KAFKA_* variables
    are unusable: ``Error: ...``, exit status 2 (click's status for a bad invocation; 1 is a
    command's own failure)."""

    exit_code = 2


class ToolKafkaSettings(KafkaSecuritySettings):
    """How the tools' Kafka clients connect: the services' ``RUMMY_KAFKA_*`` variables, the
    user name ``ops`` (read-only, every topic) unless ``RUMMY_KAFKA_USERNAME`` names another."""

    service = OPS_USER


@click.group()
def main() -> None:
    """Operate the Bombay Baazi rummy backend.

    Variants not in the product (RUMMY_VARIANT_PLUGINS, comma-separated module names) are
    loaded before any subcommand runs: replay verifies and the bots play their hands. The
    RUMMY_KAFKA_* variables (a secured broker: SASL_SSL, user ops by default) are read then too.
    """
    try:
        import_plugins(plugin_names(os.environ.get(PLUGINS_VARIABLE, "")), registry.names)
    except PluginError as error:
        raise PluginFailure(str(error)) from None
    try:
        use_kafka_security(ToolKafkaSettings.load().kafka_security)
    except (ConfigError, OSError, ValueError) as error:
        raise PluginFailure(str(error)) from None


main.add_command(token)
main.add_command(rummy_ops.certs.certs)
main.add_command(up)
main.add_command(demo)
main.add_command(soak_command)
main.add_command(replay)
main.add_command(export)
main.add_command(proof)
main.add_command(audit)
main.add_command(tables)
main.add_command(close_table)
main.add_command(limits)
main.add_command(hands)
main.add_command(backup)
main.add_command(restore)
main.add_command(watch)
main.add_command(sim)


def script() -> NoReturn:
    """The ``rummy`` console script: :func:`main` inside :func:`~rummy_rules.console.run_console`
    (a closed pipe, ``rummy ... | head -1``, ends it quietly)."""
    run_console(main)
