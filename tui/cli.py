"""The `sieve` command line (click). Never imports Textual at module level."""

from __future__ import annotations

import getpass

import click

import scenarios
import store

from .cli_common import db_option, emit_json, fail, json_option, load_scenario, open_db, reviewer_option
from .config import ConfigError
from .evidence_commands import export_command, import_command, results_command, verify_command
from .run_command import run_command
from .scenario_commands import scenarios_group
from .table import render


@click.group(invoke_without_command=True)
@click.version_option(package_name="sieve")
@reviewer_option
@db_option
@click.pass_context
def main(ctx: click.Context, reviewer: str | None, db_path: str | None) -> None:
    """sieve: play roleplay benchmarks against language models and score them.

    Without a command, opens the Home screen: the runs in the database.
    """
    if ctx.invoked_subcommand is None:
        run_tui(db_path, reviewer, None)


def run_tui(db_path: str | None, reviewer: str | None, first=None, pool=None, blind: bool = False) -> None:
    """Open the TUI on the database, with `first(app, db, pool)` (a screen factory) over Home."""
    # Textual is imported here, not at the top: the CLI's other commands stay light
    # and the non-visual core never loads it.
    from .app import SieveApp

    db = open_db(db_path)
    pool = pool or endpoint_pool()
    name = reviewer or pool.config.reviewer or getpass.getuser()
    try:
        app = SieveApp(db, pool, name, first=(lambda: first(app, db, pool)) if first else None, blind=blind)
        app.run()
    finally:
        pool.stop()


def endpoint_pool():
    from .endpoints import Endpoints

    try:
        return Endpoints(announce=lambda text: click.echo(text, err=True))
    except ConfigError as exc:
        fail(str(exc))


@main.command("play")
@click.argument("scenario")
@click.option("-m", "--model", help="The model (default: the embedded SmolLM2-135M).")
@click.option("--endpoint", help="A URL or an endpoint name from the config (default: the embedded local model).")
@click.option("--temperature", type=float)
@click.option("--max-tokens", type=click.IntRange(min=1), help="The output ceiling per reply.")
@click.option("--reasoning-effort", help="OpenRouter's reasoning effort (low, medium, high).")
@click.option("--timeout", type=click.FloatRange(min=1), help="Seconds per request (default 240).")
@click.option("--seed", type=int)
@reviewer_option
@db_option
def play_command(scenario, model, endpoint, temperature, max_tokens, reasoning_effort, timeout, seed, reviewer, db_path) -> None:
    """Open the Play screen on a new run of SCENARIO."""
    from .endpoints import is_local, settings_for
    from .local_model import LocalModelError

    loaded = load_scenario(scenario)
    if model is None and not is_local(endpoint):
        fail("name the model to play against with -m")
    cli = {"temperature": temperature, "max_tokens": max_tokens, "reasoning_effort": reasoning_effort, "timeout": timeout, "seed": seed}
    settings = settings_for(loaded, model, is_local(endpoint), cli)
    open_db(db_path)  # a bad path fails here, before a model server starts
    pool = endpoint_pool()
    try:
        gateway = pool.gateway(endpoint)  # starts the embedded model when there is no endpoint
    except (ConfigError, LocalModelError) as exc:
        pool.stop()
        fail(str(exc))

    def first(app, db, pool):
        from .screens.play import PlayScreen
        from .session import Session

        return PlayScreen(Session.start(db, loaded, gateway, settings, retry=app.retry))

    run_tui(db_path, reviewer, first, pool)


@main.command("review")
@click.argument("run_id", required=False)
@click.option("--blind", is_flag=True, help="Runs under neutral codes: no model, endpoint, provider or cost shown.")
@reviewer_option
@db_option
def review_command(run_id: str | None, blind: bool, reviewer: str | None, db_path: str | None) -> None:
    """Open the Review screen on RUN_ID (with --blind and no RUN_ID: the runs, blind)."""
    db = open_db(db_path)
    if run_id is None and not blind:
        fail("name a RUN_ID (or use --blind to pick runs under neutral codes)")
    if run_id is not None and not db.execute("SELECT 1 FROM runs WHERE id = ?", [run_id]).fetchone():
        fail(f"no run with the id {run_id} in {store.resolve_path(db_path)}")

    def first(app, db, pool):
        from .screens.review import ReviewScreen

        run = store.turns.get_run(db, run_id)
        scenario = scenarios.load_text(store.turns.scenario_text(db, run["scenario_sha256"]), f"<snapshot>/{run['scenario']}.toml")
        return ReviewScreen(db, scenario, run_id, app.reviewer, blind=blind)

    run_tui(db_path, reviewer, first if run_id else None, blind=blind)


@main.command("pair")
@click.argument("runs", nargs=-1)
@click.option("--a", "set_a", multiple=True, help="A run of the first set (repeatable): every run of it meets every run of --b.")
@click.option("--b", "set_b", multiple=True, help="A run of the second set (repeatable).")
@click.option("--scenario", "scenario_name", help="With two --model: their runs of this scenario, every one against every one.")
@click.option("--model", "models", multiple=True, help="A model whose runs make one set (give two).")
@click.option("--queue", "queue_id", help="Open (or, with --summary, report) an existing queue.")
@click.option("--seed", type=int, help="Seed for drawing the sides.")
@click.option("--summary", is_flag=True, help="Print the queue's head-to-head results instead of opening it.")
@reviewer_option
@json_option
@db_option
def pair_command(runs, set_a, set_b, scenario_name, models, queue_id, seed, summary, reviewer, as_json, db_path) -> None:
    """Blind A/B pairs: RUN RUN, or every pair of two sets (--a/--b, or two --model of a --scenario)."""
    from store import pairs as pairing

    db = open_db(db_path)
    if queue_id is None:
        if len(runs) == 2:
            chosen = [tuple(runs)]
        elif set_a and set_b:
            chosen = pairing.every_pair(set_a, set_b)
        elif scenario_name and len(models) == 2:
            listed = store.list_runs(db, scenario_name)
            sets = [[r["id"] for r in listed if r["model"] == m and r["status"] == "complete"] for m in models]
            if not all(sets):
                fail(f"each --model needs complete runs of {scenario_name}")
            chosen = pairing.every_pair(*sets)
        else:
            fail("give two runs, or --a and --b sets, or --scenario with two --model")
        known = {r["id"]: r for r in store.list_runs(db)}
        for a, b in chosen:
            for run_id in (a, b):
                if run_id not in known:
                    fail(f"no run with the id {run_id} in {store.resolve_path(db_path)}")
            if known[a]["scenario"] != known[b]["scenario"]:
                fail(f"{a} and {b} are runs of different scenarios")
        queue_id = pairing.create_queue(db, chosen, seed)
        click.echo(f"queue {queue_id}: {len(chosen)} pairs", err=True)
    if not pairing.queue_pairs(db, queue_id):
        fail(f"no pair queue {queue_id}")
    if summary:
        result = pairing.head_to_head(db, queue_id)
        if as_json:
            emit_json({"queue": queue_id, "criteria": result})
        else:
            click.echo(render(
                ["criterion", "A's share", "status", "unresolved pairs", "reviewers"],
                [(c, f"{r['a_share']:.2f}", r["status"], " ".join(str(p + 1) for p in r["unresolved_pairs"]), len(r["reviewers"])) for c, r in sorted(result.items())],
            ))  # fmt: skip
        return

    def first(app, db, pool):
        from .screens.pairs import PairScreen

        return PairScreen(db, queue_id, app.reviewer)

    run_tui(db_path, reviewer, first, blind=True)


# -- runs ---------------------------------------------------------------------


@main.command("runs")
@click.option("--scenario", help="Only runs of this scenario.")
@json_option
@db_option
def runs_command(scenario: str | None, as_json: bool, db_path: str | None) -> None:
    """The runs in the database."""
    db = open_db(db_path)
    rows = store.list_runs(db, scenario)
    if as_json:
        emit_json(rows)
        return
    if not rows:
        click.echo(f"No runs yet in {store.resolve_path(db_path)}.")
        return
    click.echo(
        render(
            ["id", "scenario", "model", "status", "started", "replies", "cost"],
            [
                (r["id"], r["scenario"], r["model"], r["status"], r["started"][:19].replace("T", " "), r["replies"],
                 "" if r["cost"] is None else f"${r['cost']:.4f}")
                for r in rows
            ],
        )
    )


for command in (scenarios_group, export_command, import_command, results_command, verify_command, run_command):
    main.add_command(command)


if __name__ == "__main__":
    main()
