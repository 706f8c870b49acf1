"""The ``rummy`` command: one click group; each subcommand lives in its own module."""

from __future__ import annotations

import os
import time

import click

from rummy_ops.audit import audit
from rummy_ops.close_table import close_table
from rummy_ops.demo import demo
from rummy_ops.proof import proof
from rummy_ops.replay.command import export, replay
from rummy_ops.soak import soak_command
from rummy_ops.stack import (
    Stack,
    StackConfig,
    StackError,
    interrupt_on_sigterm,
    shielded_from_interrupts,
)
from rummy_ops.token import token
from rummy_platform.config import PLUGINS_VARIABLE
from rummy_platform.plugins import PluginError, import_plugins, plugin_names
from rummy_rules import registry


@click.group()
def main() -> None:
    """Operate the Bombay Baazi rummy backend.

    Variants not in the product (RUMMY_VARIANT_PLUGINS, comma-separated module names) are
    loaded before any subcommand runs: replay verifies and the bots play their hands.
    """
    try:
        import_plugins(plugin_names(os.environ.get(PLUGINS_VARIABLE, "")), registry.names)
    except PluginError as error:
        failure = click.ClickException(str(error))
        failure.exit_code = 2
        raise failure from None


@click.command()
@click.option(
    "--clock-speed",
    default=1.0,
    show_default=True,
    type=click.FloatRange(min=0.01),
    help="How many times faster than real time deadlines pass (RUMMY_CLOCK_SPEED).",
)
@click.option(
    "--interval",
    default=10.0,
    show_default=True,
    type=click.FloatRange(min=0.5),
    help="Seconds between health reports.",
)
def up(clock_speed: float, interval: float) -> None:
    """Start Kafka, PostgreSQL and the five services; print their health until Ctrl-C, then stop
    everything this command started."""
    stack = Stack(StackConfig.from_env(clock_speed=clock_speed))
    click.echo(f"starting (logs in {stack.config.log_dir}); Ctrl-C stops everything")
    with interrupt_on_sigterm():
        try:
            stack.start()
            while True:
                line = "  ".join(
                    f"{name} {stack.address(name)} {status}"
                    for name, status in stack.health().items()
                )
                click.echo(f"{time.strftime('%H:%M:%S')}  {line}")
                time.sleep(interval)
        except StackError as error:
            raise click.ClickException(str(error)) from None
        except KeyboardInterrupt:
            click.echo("stopping")
        finally:
            with shielded_from_interrupts():
                stack.stop()


main.add_command(token)
main.add_command(up)
main.add_command(demo)
main.add_command(soak_command)
main.add_command(replay)
main.add_command(export)
main.add_command(proof)
main.add_command(audit)
main.add_command(close_table)
