"""`sieve run`: play a scenario headless against one or many models, or resume a run."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import click

from sieve.cli.common import (
    db_option,
    endpoint_option,
    endpoint_pool,
    given_settings,
    json_option,
    load_scenario,
    open_db,
    run_async,
    run_id,
    settings_options,
    viewer,
)
from sieve.cli.cost_options import dry_run_option, max_cost_option, run_dry_run, set_budget
from sieve.engine.player import DEFAULT_TURNS, PLAYER_MAX_TOKENS, Seat
from sieve.errors import SieveUsageError
from sieve.safe_text import dumps_json, one_line
from sieve.tables import render

if TYPE_CHECKING:
    from sieve.engine.plan import Plan
    from sieve.engine.session import RetryPolicy


def print_summary(rows: list[dict[str, Any]], as_json: bool) -> None:
    from sieve.store.scoring.labels import money

    if as_json:
        click.echo(dumps_json(rows))
        return
    table = [
        (
            r["run"],
            r["model"] + (f" #{r['repeat'] + 1}" if r["repeat"] else ""),
            r["status"],
            r["turns"],
            (r["prompt_tokens"] or 0) + (r["completion_tokens"] or 0),
            money(r["cost"]),
            r["filtered"],
            r["ceiling"],
        )
        for r in rows
    ]
    click.echo(render(["run", "model", "status", "replies", "tokens", "cost", "filtered", "ceiling hits"], table))
    for r in rows:
        if r["status"] != "complete" and r["error"]:
            click.echo(one_line(f"{r['run']} ({r['model']}): {r['error']}"))
        elif mostly_empty(r):
            click.echo(
                one_line(
                    f"{r['run']} ({r['model']}): complete, but {r['empty']} of {r['turns']} replies are empty: "
                    "an extreme run, not a finding (sieve run --again-extreme plays more)"
                )
            )


def mostly_empty(row: dict[str, Any]) -> bool:
    """A run most of whose replies are empty: it finished, but says next to nothing about the model."""
    return row["turns"] > 0 and row["empty"] * 2 > row["turns"]


@click.command("run")
@click.argument("scenario", required=False)
@click.option("-m", "--model", "models", multiple=True, help="A model to play against (repeatable).")
@endpoint_option
@click.option("--concurrency", type=click.IntRange(1, 1024), help="Runs played at once (default 4).")
@click.option("--repeat", type=click.IntRange(1, 1000), help="Runs per model.")
@settings_options
@click.option(
    "--plan", "plan_path", type=click.Path(dir_okay=False), help="A run plan: models with their own settings."
)
@click.option("--resume", "resume", help="Continue an interrupted or failed run (an id or a short id).")
@click.option("--scenario", "scenario_option", help="The scenario (the same as SCENARIO).")
@click.option(
    "--again-extreme",
    is_flag=True,
    help="Play --repeat more runs (default 1) of each model whose runs of the scenario are all extreme (a refusal, "
    "a filtered or empty reply, a switch of language, a reply cut at the ceiling, the scene left), with the settings "
    "its latest run used: one such run is not enough (the keykeeper seed's rule).",
)
@click.option(
    "--player", "player_id", help="A brief of the scenario's [[players]]: a model plays the player after the script."
)
@click.option("--player-model", help="The model in the player's seat (default: the embedded SmolLM2-135M).")
@click.option("--player-endpoint", help="Where the player model is (default: the embedded local model).")
@click.option("--turns", type=click.IntRange(1, 1000), help=f"Model-played turns per run (default {DEFAULT_TURNS}).")
@click.option("--no-script", is_flag=True, help="With --player: only the setup message, then the player model.")
@dry_run_option
@max_cost_option
@click.option("--retry-base", type=float, default=1.0, hidden=True, help="First backoff delay in seconds.")
@json_option
@db_option
def run_command(
    scenario: str | None,
    models: tuple[str, ...],
    endpoint: str | None,
    concurrency: int | None,
    repeat: int | None,
    plan_path: str | None,
    resume: str | None,
    scenario_option: str | None,
    again_extreme: bool,
    player_id: str | None,
    player_model: str | None,
    player_endpoint: str | None,
    turns: int | None,
    no_script: bool,
    dry_run: bool,
    max_cost: float | None,
    retry_base: float,
    as_json: bool,
    db_path: str | None,
    **options: Any,
) -> None:
    """Play SCENARIO headless against every model (and repeat), concurrently.

    Exit status 0 when every run completed (filtered turns included), 1 when any failed, 2 on bad input.
    """
    from sieve.engine.plan import load_plan
    from sieve.engine.session import RetryPolicy

    scenario = scenario or scenario_option
    loaded = plan = None
    if not (again_extreme or resume):
        # The scenario (or plan) first: a file that is wrong fails before a database is made or touched.
        plan = load_plan(plan_path) if plan_path else None
        name = scenario or (plan.scenario if plan else None)
        if not name:
            raise click.UsageError("name a SCENARIO (or give a --plan that names one)")
        loaded = load_scenario(name)
    db = open_db(db_path)
    viewer(db).refuse(
        "a run is played against a model by name and reported with it; let someone who is not blind play, "
        "then review the runs with --blind"
    )
    retry = RetryPolicy(base=retry_base)
    cli_settings = given_settings(options)
    if (dry_run or max_cost) and (again_extreme or resume):
        raise click.UsageError("--dry-run and --max-cost go with new runs (not --again-extreme or --resume)")
    if again_extreme:
        if not scenario:
            raise click.UsageError("--again-extreme needs the scenario: --scenario NAME")
        rows = _again_extreme(db, scenario, repeat or 1, concurrency or 4, retry)
        if not rows:
            click.echo(f"no model has only extreme runs of {scenario}: nothing to play again")
            return
    elif resume:
        rows = _resume(db, run_id(db, resume), endpoint, retry)
    else:
        assert loaded is not None
        if player_id is None and (player_model or player_endpoint or turns or no_script):
            raise click.UsageError("--player-model, --player-endpoint, --turns and --no-script go with --player BRIEF")
        player = PlayerPlan(player_id, player_model, player_endpoint, turns or DEFAULT_TURNS, not no_script)
        spend = Spend(dry_run, max_cost, as_json)
        rows = _play_new(db, loaded, plan, models, endpoint, concurrency, repeat, cli_settings, retry, player, spend)
        if dry_run:
            return
    print_summary(rows, as_json)
    raise SystemExit(0 if all(r["status"] == "complete" for r in rows) else 1)


@dataclass(frozen=True)
class Spend:
    """--dry-run and --max-cost, as given."""

    dry_run: bool = False
    max_cost: float | None = None
    as_json: bool = False


@dataclass(frozen=True)
class PlayerPlan:
    """What --player and its options asked for."""

    brief: str | None
    model: str | None
    endpoint: str | None
    turns: int
    script: bool


def _seat(pool, scenario, player: PlayerPlan, sharing: int = 1) -> Seat | None:
    from sieve.engine.endpoints import is_local, settings_for

    if player.brief is None:
        return None
    try:
        brief = scenario.player(player.brief)
    except KeyError:
        known = ", ".join(p.id for p in scenario.players) or "none"
        raise SieveUsageError(f"{scenario.name} has no player brief '{player.brief}' (briefs: {known})") from None
    local = is_local(player.endpoint)
    if player.model is None and not local:
        raise click.UsageError("name the player model with --player-model")
    settings = settings_for(scenario, player.model, local, {"max_tokens": PLAYER_MAX_TOKENS})
    # The player's seat and the model under test take turns in a run: the runs' count is the seat's too.
    return Seat(brief, pool.gateway(player.endpoint, sharing), settings, turns=player.turns)


def _play_new(
    db,
    scenario,
    plan: Plan | None,
    models,
    endpoint,
    concurrency,
    repeat,
    cli_settings,
    retry,
    player: PlayerPlan,
    spend: Spend | None = None,
) -> list[dict[str, Any]]:
    from sieve.engine.batch import RunSpec, run_batch
    from sieve.engine.endpoints import is_local, settings_for

    entries: list[tuple[str | None, dict[str, Any], int | None, str | None]] = []
    if plan:
        entries += [(m.model, m.settings, m.repeat, m.endpoint) for m in plan.models]
    entries += [(m, {}, None, None) for m in models]
    width = concurrency or (plan.concurrency if plan else None) or 4
    wanted = [
        (
            model,
            own,
            endpoint or own_endpoint or (plan.endpoint if plan else None),
            repeat or own_repeat or (plan.repeat if plan else None) or 1,
        )
        for model, own, own_repeat, own_endpoint in entries or [(None, {}, None, None)]
    ]
    # The embedded model answers as many requests at once as there are runs playing on it (in the
    # model's seat or the player's: the two take turns within a run).
    seated = player.brief is not None and is_local(player.endpoint)
    sharing = min(width, sum(count for _, _, where, count in wanted if seated or is_local(where)))
    with endpoint_pool() as pool:
        seat = _seat(pool, scenario, player, sharing)
        specs = []
        for model, own, where, count in wanted:
            local = is_local(where)
            if model is None and not local:
                raise click.UsageError("name at least one model with -m (or in a --plan)")
            settings = settings_for(scenario, model, local, plan.settings if plan else None, own, cli_settings)
            gateway = pool.gateway(where, sharing)
            specs += [RunSpec(settings, gateway, k, seat, player.script) for k in range(count)]
        spend = spend or Spend()
        if spend.dry_run:
            run_dry_run(db, scenario, specs, spend.as_json)
            return []
        budget = set_budget(spend.max_cost, [(s.gateway, s.settings.model) for s in specs]) if spend.max_cost else None

        async def go() -> list[dict[str, Any]]:
            try:
                return await run_batch(db, scenario, specs, concurrency=width, retry=retry)
            finally:
                await pool.aclose()

        rows = run_async(go())
        if budget is not None:
            click.echo(one_line(budget.summary()), err=True)
        return rows


def _again_extreme(db, scenario: str, count: int, concurrency: int, retry: RetryPolicy) -> list[dict[str, Any]]:
    """More runs of each model whose finished runs are all extreme, as its latest run was played (a new seed each)."""
    from dataclasses import replace

    from sieve.engine.batch import RunSpec, run_batch
    from sieve.engine.session import request_settings_from_record
    from sieve.store.scoring import extreme
    from sieve.store.scoring.runview import RunView

    finished = [v for v in RunView.of_scenario(db, scenario) if v.run["status"] == "complete"]
    by_model: dict[str, list[RunView]] = {}
    for view in finished:
        by_model.setdefault(view.run["model"], []).append(view)
    chosen = {m: runs for m, runs in by_model.items() if all(extreme.flags(v) for v in runs)}
    if not chosen:
        return []
    with endpoint_pool() as pool:
        specs = []
        for model, runs in chosen.items():
            latest = runs[-1]
            settings = replace(request_settings_from_record(latest.run["settings"]), seed=None)
            first = max(v.run["repeat"] for v in runs) + 1
            click.echo(f"{model}: {len(runs)} of {len(runs)} runs extreme; playing {count} more", err=True)
            gateway = pool.for_record(latest.run, sharing=min(concurrency, count * len(chosen)))
            specs += [RunSpec(settings, gateway, first + k) for k in range(count)]

        async def go() -> list[dict[str, Any]]:
            try:
                return await run_batch(db, latest.scenario, specs, concurrency=concurrency, retry=retry)
            finally:
                await pool.aclose()

        return run_async(go())


def _resume(db, resumed: str, endpoint: str | None, retry: RetryPolicy) -> list[dict[str, Any]]:
    from sieve.engine.batch import play_sessions
    from sieve.engine.session import Session
    from sieve.store.scoring.runview import RunView

    run = RunView.open(db, resumed).run
    if run["endpoint"] == "sillytavern":  # an imported chat has no model to ask (sillytavern.import_chat)
        raise SieveUsageError(
            f"{resumed}: an imported chat cannot be resumed; import the whole chat again (sieve import --again)"
        )
    with endpoint_pool() as pool:
        gateway = pool.gateway(endpoint) if endpoint else pool.for_record(run)
        session = Session.open(db, resumed, gateway, retry=retry)

        async def go() -> list[dict[str, Any]]:
            try:
                return await play_sessions(db, [session], [run["model"]], concurrency=1)
            finally:
                await pool.aclose()

        return run_async(go())
