"""`sieve run`: play a scenario headless against one or many models, or resume a run."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import Iterator
from typing import Any

import click

import scenarios
import store
from scenarios import ScenarioError
from store import turns as record

from .batch import RunSpec, play_sessions, run_batch
from .config import ConfigError
from .endpoints import Endpoints, is_local, settings_for
from .local_model import LocalModelError
from .plan import Plan, load_plan
from .session import RetryPolicy, Session
from .table import render

EXIT_BAD_INPUT = 2


@contextlib.contextmanager
def endpoints() -> Iterator[Endpoints]:
    try:
        pool = Endpoints(announce=lambda text: click.echo(text, err=True))
    except ConfigError as exc:
        raise click.UsageError(str(exc)) from None
    try:
        yield pool
    except (ConfigError, LocalModelError) as exc:
        click.echo(str(exc), err=True)
        sys.exit(EXIT_BAD_INPUT)
    finally:
        pool.stop()


def print_summary(rows: list[dict[str, Any]], as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    table = [
        (
            r["run"],
            r["model"] + (f" #{r['repeat'] + 1}" if r["repeat"] else ""),
            r["status"],
            r["turns"],
            (r["prompt_tokens"] or 0) + (r["completion_tokens"] or 0),
            "" if r["cost"] is None else f"${r['cost']:.4f}",
            r["filtered"],
            r["ceiling"],
        )
        for r in rows
    ]
    click.echo(render(["run", "model", "status", "replies", "tokens", "cost", "filtered", "ceiling hits"], table))
    for r in rows:
        if r["status"] != "complete" and r["error"]:
            click.echo(f"{r['run']} ({r['model']}): {r['error']}")


@click.command("run")
@click.argument("scenario", required=False)
@click.option("-m", "--model", "models", multiple=True, help="A model to play against (repeatable).")
@click.option("--endpoint", help="A URL or an endpoint name from the config (default: the embedded local model).")
@click.option("--concurrency", type=click.IntRange(min=1), help="Runs played at once (default 4).")
@click.option("--repeat", type=click.IntRange(min=1), help="Runs per model.")
@click.option("--temperature", type=float)
@click.option("--max-tokens", type=click.IntRange(min=1), help="The output ceiling per reply.")
@click.option("--reasoning-effort", help="OpenRouter's reasoning effort (low, medium, high).")
@click.option("--timeout", type=click.FloatRange(min=1), help="Seconds per request (default 240).")
@click.option("--seed", type=int)
@click.option("--plan", "plan_path", type=click.Path(dir_okay=False), help="A run plan: models with their own settings.")
@click.option("--resume", "resume_id", help="Continue an interrupted or failed run from its last complete turn.")
@click.option("--retry-base", type=float, default=1.0, hidden=True, help="First backoff delay in seconds.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.option("--db", "db_path", envvar="SIEVE_DB", type=click.Path(dir_okay=False), help="The SQLite file.")
def run_command(
    scenario: str | None,
    models: tuple[str, ...],
    endpoint: str | None,
    concurrency: int | None,
    repeat: int | None,
    temperature: float | None,
    max_tokens: int | None,
    reasoning_effort: str | None,
    timeout: float | None,
    seed: int | None,
    plan_path: str | None,
    resume_id: str | None,
    retry_base: float,
    as_json: bool,
    db_path: str | None,
) -> None:
    """Play SCENARIO headless against every model (and repeat), concurrently.

    Exit status 0 when every run completed (filtered turns included), 1 when any failed.
    """
    try:
        db = store.open_db(db_path)
    except store.DatabaseError as exc:
        click.echo(str(exc), err=True)
        sys.exit(1)
    retry = RetryPolicy(base=retry_base)
    cli_settings = {
        "temperature": temperature,
        "max_tokens": max_tokens,
        "reasoning_effort": reasoning_effort,
        "timeout": timeout,
        "seed": seed,
    }
    if resume_id:
        rows = _resume(db, resume_id, endpoint, retry)
    else:
        try:
            plan = load_plan(plan_path) if plan_path else None
            name = scenario or (plan.scenario if plan else None)
            if not name:
                raise click.UsageError("name a SCENARIO (or give a --plan that names one)")
            loaded = scenarios.load(name)
        except ScenarioError as exc:
            click.echo(str(exc), err=True)
            sys.exit(EXIT_BAD_INPUT)
        rows = _play_new(db, loaded, plan, models, endpoint, concurrency, repeat, cli_settings, retry)
    print_summary(rows, as_json)
    sys.exit(0 if all(r["status"] == "complete" for r in rows) else 1)


def _play_new(
    db, scenario, plan: Plan | None, models, endpoint, concurrency, repeat, cli_settings, retry
) -> list[dict[str, Any]]:
    entries: list[tuple[str, dict[str, Any], int | None, str | None]] = []
    if plan:
        entries += [(m.model, m.settings, m.repeat, m.endpoint) for m in plan.models]
    entries += [(m, {}, None, None) for m in models]
    with endpoints() as pool:
        specs = []
        for model, own, own_repeat, own_endpoint in entries or [(None, {}, None, None)]:
            where = endpoint or own_endpoint or (plan.endpoint if plan else None)
            local = is_local(where)
            if model is None and not local:
                raise click.UsageError("name at least one model with -m (or in a --plan)")
            settings = settings_for(scenario, model, local, plan.settings if plan else None, own, cli_settings)
            count = repeat or own_repeat or (plan.repeat if plan else None) or 1
            gateway = pool.gateway(where)
            specs += [RunSpec(settings, gateway, k) for k in range(count)]
        width = concurrency or (plan.concurrency if plan else None) or 4

        async def go() -> list[dict[str, Any]]:
            try:
                return await run_batch(db, scenario, specs, concurrency=width, retry=retry)
            finally:
                await pool.aclose()

        return asyncio.run(go())


def _resume(db, run_id: str, endpoint: str | None, retry: RetryPolicy) -> list[dict[str, Any]]:
    try:
        run = record.get_run(db, run_id)
    except KeyError:
        click.echo(f"no run with the id {run_id} in {db.conn.execute('PRAGMA database_list').fetchone()[2]}", err=True)
        sys.exit(EXIT_BAD_INPUT)
    with endpoints() as pool:
        gateway = pool.gateway(endpoint) if endpoint else pool.for_record(run)
        session = Session.open(db, run_id, gateway, retry=retry)

        async def go() -> list[dict[str, Any]]:
            try:
                return await play_sessions(db, [session], [run["model"]], len(session.scenario.script()), concurrency=1)
            finally:
                await pool.aclose()

        return asyncio.run(go())
