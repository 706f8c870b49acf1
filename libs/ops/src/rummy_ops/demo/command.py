"""The ``rummy demo`` command: start the stack, :func:`~rummy_ops.demo.run.play`, print the
summary, replay, write the proofs, stop."""

from __future__ import annotations

import click

from rummy_ops.demo.endpoints import stack_endpoints
from rummy_ops.demo.plans import DemoOptions
from rummy_ops.demo.report import succeeded, summary
from rummy_ops.demo.run import play
from rummy_ops.demo.verify import replay_verdict, write_demo_proofs
from rummy_ops.stack import repository_root
from rummy_ops.stack_command import clock_speed_option, running_stack


@click.command()
@click.option(
    "--hands",
    default=30,
    show_default=True,
    type=click.IntRange(min=1),
    help="Hands to play in all, shared among the three tables.",
)
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
def demo(
    hands: int,
    seed: int,
    turn_seconds: int,
    clock_speed: float,
    grant_tokens: int,
    mischief: float,
    timeout_seconds: float,
    keep_running: bool,
) -> None:
    """Start Kafka, PostgreSQL and the five services, let bots play HANDS hands at three tables
    (4, 6 and 8 seats), print every hand and check the books. Stops what it started on exit
    (also on Ctrl-C) unless --keep-running. Exit status 1 when a check fails."""
    options = DemoOptions(
        hands=hands,
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
    ) as stack:
        for service, status in stack.health().items():
            click.echo(f"  {service:<9} {stack.address(service):<16} {status}")
        report = play(stack_endpoints(stack), options, echo=click.echo, broken=stack.broken)
        verdict = replay_verdict(report)
        for line in summary(report, verdict):
            click.echo(line)
        click.echo(write_demo_proofs(report, repository_root() / ".local" / "proofs"))
    if not succeeded(report, verdict):
        raise SystemExit(1)
