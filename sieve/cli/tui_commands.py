"""The commands that open the TUI: play, review, pair (and `sieve` alone, which opens Home)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from sieve.cli.common import (
    db_option,
    emit_json,
    endpoint_option,
    fail,
    given_settings,
    json_option,
    load_scenario,
    open_db,
    reviewer_option,
    run_id,
    screenshots_option,
    settings_options,
    viewer,
    who,
)
from sieve.tables import counted, render


def run_tui(
    db_path: str | None,
    reviewer: str | None,
    first=None,
    pool=None,
    blind: bool = False,
    screenshots: str | None = None,
) -> None:
    """Open the TUI on the database, with `first(app)` (a screen factory) over Home; the palette's Screenshot
    saves into `screenshots` (default: the user data directory's screenshots/)."""
    # Textual is imported here, not at the top: the CLI's other commands stay light
    # and the non-visual core never loads it.
    from sieve.engine.endpoints import Endpoints
    from sieve.tui.app import SieveApp

    db = open_db(db_path, read_only_ok=True)
    pool = pool or Endpoints(announce=lambda text: click.echo(text, err=True))
    name, blind_only, _ = who(reviewer)
    try:
        app = SieveApp(
            db,
            pool,
            name,
            first=(lambda: first(app)) if first else None,
            blind=blind,
            blind_only=blind_only,
            screenshots=Path(screenshots) if screenshots else None,
        )
        app.run()
    finally:
        pool.stop()


@click.command("play")
@click.argument("scenario")
@click.option("-m", "--model", help="The model (default: the embedded SmolLM2-135M).")
@endpoint_option
@settings_options
@reviewer_option
@db_option
@screenshots_option
def play_command(scenario, model, endpoint, reviewer, db_path, screenshots, **options) -> None:
    """Open the Play screen on a new run of SCENARIO."""
    from sieve.engine.endpoints import Endpoints, is_local, settings_for

    _, blind_only, config = who(reviewer)
    if blind_only:
        viewer(open_db(db_path, reads_only=True), reviewer).refuse(
            "playing names the model; let someone who is not blind play, then review the run with --blind"
        )
    loaded = load_scenario(scenario)
    if model is None and not is_local(endpoint):
        fail("name the model to play against with -m")
    settings = settings_for(loaded, model, is_local(endpoint), given_settings(options))
    open_db(db_path)  # a bad path fails here, before a model server starts
    pool = Endpoints(announce=lambda text: click.echo(text, err=True))
    try:
        gateway = pool.gateway(endpoint)  # starts the embedded model when there is no endpoint
    except BaseException:
        pool.stop()
        raise

    def first(app):
        from sieve.engine.session import Session
        from sieve.tui.screens.play import PlayScreen

        return PlayScreen(Session.start(app.db, loaded, gateway, settings, retry=app.retry))

    run_tui(db_path, reviewer, first, pool, screenshots=screenshots)


@click.command("review")
@click.argument("run", required=False)
@click.option(
    "--blind", is_flag=True, help="Runs under your own neutral codes: no model, endpoint, time or cost shown."
)
@click.option(
    "--next",
    "next_run",
    is_flag=True,
    help="The first run you have not finished (blind: in your own shuffled order); when you leave it done, the next.",
)
@click.option("--scenario", "scenario_name", help="With --next: only the runs of this scenario.")
@click.option(
    "--catch",
    type=click.IntRange(0, 10_000),
    default=0,
    help="With --next --blind: up to N runs you have finished come back later under new codes (catch trials).",
)
@reviewer_option
@db_option
@screenshots_option
def review_command(
    run: str | None,
    blind: bool,
    next_run: bool,
    scenario_name: str | None,
    catch: int,
    reviewer: str | None,
    db_path: str | None,
    screenshots: str | None,
) -> None:
    """Open the Review screen on RUN (an id, or Home's short id); --next: the runs you have not finished, one after
    another; --blind and no RUN: the runs, blind."""
    db = open_db(db_path, read_only_ok=True)
    name, blind_only, config = who(reviewer)
    if run is not None and next_run:
        fail("give a RUN or --next, not both")
    if run is None and not (blind or next_run):
        fail("name a RUN (or use --next for the runs you have not finished, or --blind to pick runs under codes)")
    if run is not None and blind_only and not blind:
        fail(
            f"{name} reviews blind only (blind = true under [reviewer] in {config.path}): "
            f"open the run with --blind; in the review, R shows the model once every item is scored"
        )
    if catch and not (next_run and (blind or blind_only)):
        fail("catch trials (--catch) are for --next --blind: a run you recognise is no test")
    blind = blind or blind_only
    if next_run:
        from sieve.store.scoring import field

        if (
            scenario_name is not None
            and not db.execute("SELECT 1 FROM runs WHERE scenario = ?", [scenario_name]).fetchone()
        ):
            fail(f"no run of the scenario {scenario_name}")
        if field.next_run(db, name, blind=blind, scenario=scenario_name, catch=catch) is None:
            scope = f" of {scenario_name}" if scenario_name else ""
            click.echo(f"Nothing left to score: {name} has finished every complete run{scope}.", err=True)
            return

        def field_screen(app):
            from sieve.tui.screens.field import FieldScreen

            return FieldScreen(scenario_name, catch)

        run_tui(db_path, reviewer, field_screen, blind=blind, screenshots=screenshots)
        return
    chosen = run_id(db, run, reviewer) if run is not None else None

    def review_screen(app):
        from sieve.tui.screens.review import ReviewScreen

        return ReviewScreen(app.run_view(chosen))

    run_tui(db_path, reviewer, review_screen if chosen else None, blind=blind, screenshots=screenshots)


@click.command("pair")
@click.argument("runs", nargs=-1)
@click.option(
    "--a", "set_a", multiple=True, help="A run of the first set (repeatable): every run of it meets every run of --b."
)
@click.option("--b", "set_b", multiple=True, help="A run of the second set (repeatable).")
@click.option(
    "--scenario", "scenario_name", help="With two --model: their runs of this scenario, every one against every one."
)
@click.option("--model", "models", multiple=True, help="A model whose runs make one set (give two).")
@click.option(
    "--adaptive",
    is_flag=True,
    help="With --scenario: every model of it, the queue built in rounds: anchors spread across the order first, "
    "then the pairs least certain under the ratings so far (a round is added when the last one is judged), until "
    "--budget pairs, or two rounds leave the order unchanged.",
)
@click.option(
    "--budget",
    type=click.IntRange(1),
    help="With --adaptive: the most pairs the queue may hold (default: 30% of the round robin's, at least the "
    "anchors).",
)
@click.option("--queue", "queue_id", help="Open (or, with --summary, report) an existing queue.")
@click.option("--seed", type=int, help="Seed for drawing the sides.")
@click.option(
    "--catch",
    type=click.IntRange(0, 10_000),
    default=0,
    help="Show N of the pairs again later, sides swapped (catch trials: each reviewer's self-consistency).",
)
@click.option(
    "--summary",
    is_flag=True,
    help="Print the queue's head-to-head results instead of opening it: per criterion, each verdict counted for the "
    "side (--model, --a/--b set) its run stands for; each evaluator's share of pairs won, then their mean, with a 95% "
    "Wilson interval (continuity-corrected, over pairs, ties half); ahead, within noise (the interval includes "
    "even) or unresolved (evaluators on opposite sides of even).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "csv", "md"]),
    default="text",
    show_default=True,
    help="With --summary: the head to head as a table, CSV or Markdown (--json for everything).",
)
@click.option(
    "--no-open",
    is_flag=True,
    help="Make the queue (or find it, with --queue), print its id on stdout and exit, without opening the Pairs "
    "screen; also what happens with --json (the queue as JSON) and when stdin or stdout is not a terminal. For "
    "scripts: Q=$(sieve pair --scenario S --adaptive --no-open); sieve judge --pairs $Q --adaptive.",
)
@reviewer_option
@json_option
@db_option
@screenshots_option
def pair_command(
    runs,
    set_a,
    set_b,
    scenario_name,
    models,
    adaptive,
    budget,
    queue_id,
    seed,
    catch,
    summary,
    fmt,
    no_open,
    reviewer,
    as_json,
    db_path,
    screenshots,
) -> None:
    """Blind A/B pairs: RUN RUN, or every pair of two sets (--a/--b, or two --model of a --scenario), or an
    adaptive queue over a scenario's models (--scenario S --adaptive). The queue opens in the Pairs screen; with
    --no-open or --json, or without a terminal, its id is printed instead."""
    from sieve import store
    from sieve.cli import compare_commands
    from sieve.store.record import pairs as pairing
    from sieve.store.scoring import pair_summary

    db = open_db(db_path, reads_only=summary and queue_id is not None)
    looking = viewer(db, reviewer)
    if models:
        looking.refuse("--model names the sides; give the runs by your codes, or --a and --b")
    if summary:
        looking.refuse("the summary tells the head to head by side, and a side is a model or its runs")
    if catch and queue_id is not None:
        fail("catch trials are drawn when a queue is made: give --catch with the runs, not with --queue")
    if budget is not None and not adaptive:
        fail("--budget goes with --adaptive")
    if adaptive and (queue_id is not None or runs or set_a or set_b or models or not scenario_name):
        fail("--adaptive makes a queue of every model of a --scenario: give it alone with --scenario")
    made: dict[str, object] | None = None
    if adaptive:
        from sieve.store.scoring import adaptive_queue

        queue_id, made = adaptive_queue.create(db, scenario_name, budget, catch, seed)
        click.echo(
            f"queue {queue_id}: adaptive over {made['sides']} models of {scenario_name}, at most {made['budget']} "
            f"pairs; round 1: {made['pairs']} {'pair' if made['pairs'] == 1 else 'pairs'}, each model against others "
            "spread across the order "
            f"({made['order']}); the next round comes when these are judged",
            err=True,
        )
    if queue_id is None:
        sides: dict[str, str] = {}
        if len(runs) == 2:
            chosen = [(run_id(db, runs[0], reviewer), run_id(db, runs[1], reviewer))]
        elif set_a and set_b:
            sets = [[run_id(db, r, reviewer) for r in set_a], [run_id(db, r, reviewer) for r in set_b]]
            chosen = pairing.every_pair(*sets)
            sides = _set_sides(db, sets)
        elif scenario_name and len(models) == 2:
            listed = store.list_runs(db, scenario_name)
            sets = [[r["id"] for r in listed if r["model"] == m and r["status"] == "complete"] for m in models]
            if not all(sets):
                fail(f"each --model needs complete runs of {scenario_name}")
            chosen = pairing.every_pair(*sets)
            sides = {run: model for model, runs_of in zip(models, sets) for run in runs_of}
        else:
            fail("give two runs, or --a and --b sets, or --scenario with two --model")
        scenario_of = {r["id"]: r["scenario"] for r in store.list_runs(db)}
        for a, b in chosen:
            if scenario_of[a] != scenario_of[b]:
                fail(f"{a} and {b} are runs of different scenarios")
        queue_id = pairing.create_queue(db, chosen, seed, catch, sides)
        shown = min(catch, len(chosen))
        again = f" and {shown} shown again later (catch trials)" if shown else ""
        click.echo(f"queue {queue_id}: {counted(len(chosen), 'pair')}{again}", err=True)
    if not pairing.queue_pairs(db, queue_id):
        fail(f"no pair queue {queue_id}")
    if summary:
        result = pair_summary.summary(db, queue_id)
        if as_json:
            emit_json({"queue": queue_id, **result})
            return
        if fmt == "text" and not result["criteria"] and not any(p["totals"] for p in result["pairs"]):
            click.echo(
                f"queue {queue_id}: no verdict yet, so no head to head; judge its pairs "
                f"(sieve pair --queue {queue_id}, or sieve judge --pairs {queue_id} -m MODEL)"
            )
            return
        click.echo(compare_commands.render_head_to_head(result["criteria"], fmt))
        if fmt != "text":
            return  # an export holds the head to head alone; the text adds the totals and self-consistency
        click.echo()
        click.echo(
            render(
                ["pair", "reviewer", "A", "B"],
                [
                    (p["position"] + 1, reviewer_name, *p["totals"][reviewer_name])
                    for p in result["pairs"]
                    for reviewer_name in sorted(p["totals"])
                ],
            )
        )
        if result["self_consistency"]:
            click.echo()
            click.echo("each reviewer's catch trials against their first verdicts:")
            click.echo(
                render(
                    ["reviewer", "pairs", "criteria", "same", "share", "weighted kappa"],
                    [
                        (r["reviewer"], r["trials"], r["compared"], r["same"], f"{r['share']:.2f}", _figure(r["value"]))
                        for r in result["self_consistency"]
                    ],
                )
            )
        return
    terminal = sys.stdin.isatty() and sys.stdout.isatty()
    if no_open or as_json or not terminal:
        _print_queue(db, queue_id, made, as_json)
        if not (no_open or as_json):
            click.echo(f"not opened (no terminal): sieve pair --queue {queue_id} opens it", err=True)
        return

    def first(app):
        from sieve.tui.screens.pairs import PairScreen

        return PairScreen(queue_id)

    run_tui(db_path, reviewer, first, blind=True, screenshots=screenshots)


def _print_queue(db, queue_id: str, made: dict[str, object] | None, as_json: bool) -> None:
    """A queue not opened: its id alone on stdout (for a script to hand on), or with --json what it holds."""
    from sieve.store.record import pairs as pairing

    if not as_json:
        click.echo(queue_id)
        return
    shown = pairing.queue_pairs(db, queue_id)
    again = sum(1 for p in shown if p["catch_of"] is not None)
    emit_json({"queue": queue_id, "pairs": len(shown) - again, "catch_trials": again, "adaptive": made})


def _set_sides(db, sets: list[list[str]]) -> dict[str, str]:
    """--a and --b sets: each named by its model when each set is one model and they differ, else `a` and `b`."""
    model_of = {r["id"]: r["model"] for r in db.execute_returning_dicts("SELECT id, model FROM runs")}
    models = [{model_of[run] for run in runs_of} for runs_of in sets]
    if all(len(m) == 1 for m in models) and models[0] != models[1]:
        names = [next(iter(m)) for m in models]
    else:
        names = ["a", "b"]
    return {run: name for name, runs_of in zip(names, sets) for run in runs_of}


def _figure(value: float | None) -> str:
    return "undefined" if value is None else f"{value:.2f}"
