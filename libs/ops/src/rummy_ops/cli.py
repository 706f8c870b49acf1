"""The ``rummy`` command: one click group; each subcommand lives in its own module."""

from __future__ import annotations

import click

from rummy_ops.token import token


@click.group()
def main() -> None:
    """Operate the Bombay Baazi rummy backend."""


main.add_command(token)
