"""The ``rummy demo`` command: start the stack, :func:`~rummy_ops.demo.run.play`, print the
summary, replay, write the proofs, stop."""

from __future__ import annotations

import sys

import click
import grpc

from rummy_ops.demo.endpoints import stack_endpoints
from rummy_ops.demo.plans import DemoOptions, default_games, game_help, games, tables_of
from rummy_ops.demo.report import succeeded, summary
from rummy_ops.demo.run import play
from rummy_ops.demo.verify import replay_verdict, write_demo_proofs
from rummy_ops.legend import LegendCommand, demo_legend
from rummy_ops.stack import repository_root
from rummy_ops.stack_command import clock_speed_option, insecure_option, running_stack


class _GameOption(click.Option):
    """``--game``, its help listing the games of the installed variants when it is shown."""

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        self.help = game_help()
        return super().get_help_record(ctx)


@click.command(cls=LegendCommand, legend=demo_legend)
@click.option(
    "--hands",
    default=30,
    show_default=True,
    type=click.IntRange(min=1),
    help="Hands to play in all, shared among the points tables.",
)
@click.option("--game", "game", cls=_GameOption, default=None)
@click.option(
    "--seed",
    default=7,
    show_default=True,
    type=int,
    help="Seed of the bots' randomness (their choices are reproducible from it).",
)
@click.option(
    "--turn-seconds",
    default=10,
    show_default=True,
    type=click.IntRange(min=1),
    help="The tables' turn time in rule-set seconds (divided by --clock-speed).",
)
@clock_speed_option(10.0)
@click.option(
    "--grant",
    "grant_tokens",
    default=500,
    show_default=True,
    type=click.IntRange(min=1),
    help="House Tokens granted to each bot.",
)
@click.option(
    "--mischief",
    default=1.0,
    show_default=True,
    type=click.FloatRange(min=0),
    help="Scales how often bots stall or declare wrongly (0: never).",
)
@click.option(
    "--timeout",
    "timeout_seconds",
    default=900.0,
    show_default=True,
    type=click.FloatRange(min=1),
    help="Seconds to wait for the hands at most.",
)
@click.option(
    "--keep-running", is_flag=True, help="Leave the services and brokers running at the end."
)
@insecure_option
def demo(
    hands: int,
    game: str | None,
    seed: int,
    turn_seconds: int,
    clock_speed: float,
    grant_tokens: int,
    mischief: float,
    timeout_seconds: float,
    keep_running: bool,
    insecure: bool,
) -> None:
    """Start Kafka, PostgreSQL and the five services, let bots play at the tables of each game
    (--game; points: HANDS hands at three tables of 4, 6 and 8 seats; a match format: one
    table's match to its end), print every hand and match and check the books. Stops what it
    started on exit (also on Ctrl-C) unless --keep-running. Exit status 1 when a check fails or
    a table is refused. A progress bar only when stdout and stderr are a terminal."""
    known = games()
    if game is not None and game not in known:
        raise click.BadParameter(
            f"{game!r} is not one of {', '.join(known)}", param_hint="'--game'"
        )
    options = DemoOptions(
        hands=hands,
        tables=tables_of([game] if game else default_games()),
        seed=seed,
        turn_seconds=turn_seconds,
        grant_hundredths=grant_tokens * 100,
        mischief=mischief,
        timeout_seconds=timeout_seconds,
        records_dir=repository_root() / ".local" / "records",
    )
    with running_stack(
        clock_speed,
        starting=lambda s: (
            f"starting the infrastructure and the services (logs in {s.config.log_dir})"
        ),
        interrupted=("interrupted", 130),
        keep_running=keep_running,
        insecure=insecure,
    ) as stack:
        for service, status in stack.health().items():
            click.echo(f"  {service:<9} {stack.address(service):<16} {status}")
        try:
            # the progress bar (redrawn in place) only on a terminal: piped or in a file, hand
            # lines only
            progress = sys.stdout.isatty() and sys.stderr.isatty()
            report = play(
                stack_endpoints(stack),
                options,
                echo=click.echo,
                progress=progress,
                broken=stack.broken,
            )
        except grpc.RpcError as error:  # a grant, an OpenTable or a TakeSeat refused
            raise click.ClickException(
                f"the services refused the demo: {error.code().name}: {error.details()}"
            ) from None
        verdict = replay_verdict(report)
        for line in summary(report, verdict):
            click.echo(line)
        click.echo(write_demo_proofs(report, repository_root() / ".local" / "proofs"))
    if not succeeded(report, verdict):
        raise SystemExit(1)
