"""``rummy sim``: run the deterministic simulator (``rummy_sim``, libs/sim/README.md) for one
seed or a range of seeds, no broker needed."""

from __future__ import annotations

import json

import click


def _seed_range(text: str) -> range:
    """``A-B`` (inclusive) or one number ``A``. Raises click.BadParameter."""
    first, dash, last = text.partition("-")
    try:
        low, high = int(first), int(last if dash else first)
    except ValueError:
        raise click.BadParameter(f"{text!r} is not a seed range such as 1-200") from None
    if low < 0 or high < low:
        raise click.BadParameter(f"{text!r}: the range must be A-B with 0 <= A <= B")
    return range(low, high + 1)


@click.command("sim")
@click.option("--seed", type=click.IntRange(min=0), help="Run the world of this one seed.")
@click.option("--seeds", "seed_range", help="Run every seed of a range, e.g. 1-200.")
@click.option(
    "--hands",
    type=click.IntRange(min=1),
    default=3,
    show_default=True,
    help="Hands each world plays before it ends.",
)
@click.option("--no-faults", is_flag=True, help="No crash, redelivery or lost answer.")
@click.option(
    "--max-steps",
    type=click.IntRange(min=1),
    default=20_000,
    show_default=True,
    help="A world stops after this many steps (counted as stalled).",
)
@click.option("--trace", "show_trace", is_flag=True, help="With --seed: print every step.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON object.")
def sim(
    seed: int | None,
    seed_range: str | None,
    hands: int,
    no_faults: bool,
    max_steps: int,
    show_trace: bool,
    as_json: bool,
) -> None:
    """Play seeded worlds of the whole system in this process (the five services' real code on
    the in-memory log, a virtual clock, bots, crashes and redeliveries), check the invariants
    after every step and print each world's trace hash. Exits 1 when an invariant broke."""
    from rummy_platform.logging import configure_logging
    from rummy_sim.run import run_seed, run_seeds

    if (seed is None) == (seed_range is None):
        raise click.UsageError("give --seed S or --seeds A-B")
    configure_logging("critical")  # the services' own logs would drown the summary
    options = {"hands": hands, "faults": not no_faults, "max_steps": max_steps}
    if seed is not None:
        run = run_seed(seed, **options)
        if show_trace:
            for line in run.trace:
                click.echo(line)
        summary = run.summary()
        lines = [
            f"seed {seed}: {run.hands} hands in {run.steps} steps"
            f"{' (stalled)' if run.stalled else ''}, endings {summary['endings']}, "
            f"faults {summary['faults']}, trace {run.trace_hash}",
            *(f"  violation at step {s}: {i}: {m}" for s, i, m in run.violations),
        ]
        failed = bool(run.violations)
    else:
        assert seed_range is not None
        summary = run_seeds(_seed_range(seed_range), **options)
        lines = [
            f"{summary['seeds']} seeds: {summary['hands']} hands in {summary['steps']} steps, "
            f"{summary['stalled']} stalled, {len(summary['violations'])} failing, "
            f"{summary['hands_per_cpu_s']} hands per CPU second",
            *(
                f"  seed {f['seed']}: step {f['violation']['step']}: "
                f"{f['violation']['invariant']}: {f['violation']['message']} "
                f"(rerun: {f['reproduce']})"
                for f in summary["violations"]
            ),
        ]
        failed = bool(summary["violations"])
    for line in [json.dumps(summary, sort_keys=True)] if as_json else lines:
        click.echo(line)
    if failed:
        raise SystemExit(1)
