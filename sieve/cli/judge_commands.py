"""`sieve judge`: score runs with language models, judge pair queues head to head, list where judges and people differ."""

from __future__ import annotations

from typing import Any

import click

from sieve.cli.common import (
    db_option,
    emit_json,
    endpoint_option,
    endpoint_pool,
    given_settings,
    json_option,
    open_db,
    or_the_groups,
    run_async,
    run_id,
    settings_options,
)
from sieve.errors import SieveUsageError
from sieve.safe_text import one_line, visible
from sieve.tables import render


def _judge_requests(models: tuple[str, ...], endpoint: str | None, reviewer: str | None, options: dict[str, Any]):
    """Each judge's request settings, checked before anything is read or started: (requests, context, structured)."""
    from sieve.engine.endpoints import is_local
    from sieve.engine.judge import client as client
    from sieve.engine.local_model import MODEL_NAME

    local = is_local(endpoint)
    if not models and not local:
        raise click.UsageError(
            "name the judge's model with -m (the embedded model is the judge only without --endpoint)"
        )
    if reviewer and len(models) > 1:
        raise click.UsageError("--reviewer names one judge: give one -m with it")
    settings = given_settings(options)
    context = options.pop("context") or (client.LOCAL_CONTEXT if local else client.REMOTE_CONTEXT)
    structured = options.pop("structured") or ("json_object" if local else "json_schema")
    requests = []
    for model in models or (MODEL_NAME,):
        request = client.judge_settings(model, local, settings)
        if (request.max_tokens or 0) + client.MARGIN >= context:
            raise click.UsageError(
                f"--max-tokens {request.max_tokens} leaves no room for a packet in --context {context}"
            )
        requests.append(request)
    return requests, context, structured


def _judges(pool, endpoint: str | None, reviewer: str | None, asked, sharing: int):
    """The judges, on the endpoint's gateway; the embedded model answers `sharing` packets at once."""
    from sieve.engine.judge import client as client
    from sieve.store.record.judgings import judge_name

    requests, context, structured = asked
    gateway = pool.gateway(endpoint, sharing)
    return [client.Judge(gateway, r, reviewer or judge_name(r.model), context, structured) for r in requests]


def _runs(db, given: tuple[str, ...], scenario: str | None, unjudged: bool) -> list[str]:
    from sieve import store

    ids = [run_id(db, r) for r in given]
    if scenario:
        # A run stopped early is documented, not scored (the keykeeper seed): a scenario means its complete runs.
        ids += [r["id"] for r in store.list_runs(db, scenario) if r["status"] == "complete" and r["id"] not in ids]
    elif unjudged:
        raise click.UsageError("--unjudged needs --scenario NAME")
    if not ids:
        raise SieveUsageError("nothing to judge: name runs, or a --scenario with complete runs")
    return ids


def _work(db, judges, ids: list[str], unjudged: bool) -> list:
    """(judge, run) for each judging to do: with --unjudged, only what that judge has not scored."""
    from sieve.store.record import judgings

    done = {j.reviewer: judgings.judged_runs(db, j.reviewer) if unjudged else set() for j in judges}
    return [(judge, run) for judge in judges for run in ids if run not in done[judge.reviewer]]


def _summary(rows: list[dict[str, Any]]) -> None:
    from sieve.store.scoring.labels import money

    table = [
        (
            r["run"][-8:],
            r["model"],
            r["judge"],
            r["status"],
            r["items"],
            r["exact"],
            r["fuzzy"],
            r["absent"],
            r["altered"],
            r["short"],
            r["player"],
            r["no quote"],
            r["repairs"],
            len(r["failed"]),
            r["prompt_tokens"] + r["completion_tokens"],
            money(r["cost"]),
            f"same maker: {r['conflict']}" if r["conflict"] else "",
        )
        for r in rows
    ]
    headers = [
        "run",
        "model",
        "judge",
        "status",
        "items",
        "exact",
        "fuzzy",
        "absent",
        "altered",
        "short",
        "player",
        "no quote",
    ]
    click.echo(render([*headers, "repairs", "failed", "tokens", "cost", "conflict"], table))
    for r in rows:
        if r["error"]:
            click.echo(one_line(f"{r['run']} ({r['judge']}): {r['error']}"))
        if r["failed"] and r["status"] == "partial":
            click.echo(one_line(f"{r['run']} ({r['judge']}): no usable answer for {', '.join(r['failed'])}"))
        if r["strays"]:
            click.echo(one_line(f"{r['run']} ({r['judge']}): answers to no item, ignored: {', '.join(r['strays'])}"))
    quotes = {
        k: sum(r[k] for r in rows) for k in ("exact", "fuzzy", "absent", "altered", "short", "player", "no quote")
    }
    cost = sum(r["cost"] or 0.0 for r in rows)
    tokens = sum(r["prompt_tokens"] + r["completion_tokens"] for r in rows)
    click.echo(
        f"{len(rows)} judgings, {sum(r['items'] for r in rows)} items scored; quotes: "
        + ", ".join(f"{n} {k}" for k, n in quotes.items())
        + f"; {sum(r['repairs'] for r in rows)} repairs; {tokens} tokens; {money(cost)}"
    )


def _pair_summary(result: dict[str, Any]) -> None:
    from sieve.store.scoring.labels import money

    if result["cards"]:
        click.echo("Absolute cards first, from the same judges:")
        _summary(result["cards"])
        click.echo()
    headers = ["pair", "judge", "status", "criteria", "flips", "tokens", "cost"]
    rows = [
        (
            r["pair"],
            r["judge"],
            r["status"],
            r.get("criteria", 0),
            r.get("flips", 0),
            (r.get("prompt_tokens") or 0) + (r.get("completion_tokens") or 0),
            money(r.get("cost")),
        )
        for r in result["pairs"]
    ]
    click.echo(render(headers, rows))
    for r in result["pairs"]:
        if r.get("error"):
            click.echo(one_line(f"pair {r['pair']} ({r['judge']}): {r['error']}"))
    click.echo()
    from sieve.cli.compare_commands import render_head_to_head

    click.echo(render_head_to_head(result["criteria"]))
    bias = result.get("position_bias") or {}
    for reviewer, b in sorted(bias.items()):
        click.echo(
            one_line(
                f"{reviewer}: {b['flipped']} of {b['verdicts']} verdicts flipped with position "
                f"({b['first']} for the first shown, {b['second']} for the second); bias {b['bias']:+.2f}"
            )
        )


def _calibration(db, scenario: str | None, given: tuple[str, ...], limit: int, as_json: bool) -> None:
    from sieve.store.scoring import calibration

    if not scenario and not given:
        raise click.UsageError("--calibration needs --scenario NAME (or runs)")
    rows = calibration.differences(db, scenario, [run_id(db, r) for r in given] or None)[:limit]
    if as_json:
        emit_json(rows)
        return
    if not rows:
        click.echo("no item scored by both a judge and a person")
        return
    click.echo(
        render(
            ["run", "item", "judge", "score", "quote", "person", "score", "quote"],
            [
                (
                    r["run"][-8:],
                    r["item"],
                    r["judge"],
                    r["judge_score"],
                    (r["judge_quote"] or "")[:50],
                    r["person"],
                    r["person_score"],
                    (r["person_quote"] or "")[:50],
                )
                for r in rows
            ],
        )
    )
    click.echo(visible(f"{len(rows)} differences, largest first; settle them in Review: sieve review RUN"))


@click.command("judge")
@click.argument("runs", nargs=-1)
@click.option("-m", "--model", "models", multiple=True, help="The judge's model (repeatable: several judges).")
@endpoint_option
@click.option("--reviewer", callback=or_the_groups, help="The judge's name on its annotations (default: judge:MODEL).")
@click.option("--scenario", "scenario_name", help="Judge every complete run of this scenario.")
@click.option("--unjudged", is_flag=True, help="With --scenario: only the runs this judge has not scored yet.")
@click.option("--not-blind", is_flag=True, help="Show the judge the model's name, unmasked (the keykeeper seed's way).")
@click.option("--precedents", is_flag=True, help="Add other runs' verified cards (same scenario and version).")
@click.option("--pairs", "queue", help="Judge a pair queue (from sieve pair) head to head, each pair twice.")
@click.option("--calibration", is_flag=True, help="List the items where judges and people differ most.")
@click.option("--limit", type=click.IntRange(1), default=30, show_default=True, help="With --calibration: rows.")
@click.option("--concurrency", type=click.IntRange(1, 1024), default=4, show_default=True, help="Judgings at once.")
@click.option(
    "--context", type=click.IntRange(512), help="The judge's context in tokens (default: 8192 embedded, else 128000)."
)
@click.option(
    "--structured",
    type=click.Choice(["json_schema", "json_object", "off"]),
    help="How structured output is asked for (default: json_object for the embedded model's llama.cpp, "
    "else json_schema; an endpoint that answers 400 is asked in prose).",
)
@settings_options
@click.option("--retry-base", type=float, default=1.0, hidden=True, help="First backoff delay in seconds.")
@json_option
@db_option
def judge_command(
    runs: tuple[str, ...],
    models: tuple[str, ...],
    endpoint: str | None,
    reviewer: str | None,
    scenario_name: str | None,
    unjudged: bool,
    not_blind: bool,
    precedents: bool,
    queue: str | None,
    calibration: bool,
    limit: int,
    concurrency: int,
    retry_base: float,
    as_json: bool,
    db_path: str | None,
    **options: Any,
) -> None:
    """Score RUNS with a model judge (or --scenario NAME [--unjudged]); --pairs QUEUE head to head.

    Every quote is verified as a person's is. Exit status 0 when every judging completed,
    1 when any failed, was refused or left items without an answer, 2 on bad input.
    """
    from sieve.engine.judge import runs as judging
    from sieve.engine.session import RetryPolicy

    if calibration:
        _calibration(open_db(db_path, reads_only=True), scenario_name, runs, limit, as_json)
        return
    db = open_db(db_path)
    if queue and (runs or scenario_name):
        raise click.UsageError("--pairs judges the queue's own runs: give no RUNS or --scenario with it")
    chosen = judging.Options(blind=not not_blind, precedents=precedents)
    asked = _judge_requests(models, endpoint, reviewer, options)
    ids = [] if queue else _runs(db, runs, scenario_name, unjudged)
    # The embedded judge answers as many packets at once as judgings can run at once.
    sharing = concurrency if queue else min(concurrency, len(ids) * len(asked[0]))
    with endpoint_pool() as pool:
        judges = _judges(pool, endpoint, reviewer, asked, sharing)
        for judge in judges:
            judge.retry = RetryPolicy(base=retry_base)

        async def go(work):
            try:
                return await work
            finally:
                await pool.aclose()

        if queue:
            from sieve.engine.judge import pairs as judge_pairs
            from sieve.store.scoring import pair_summary

            result = run_async(go(judge_pairs.judge_queue(db, judges, queue, chosen, concurrency=concurrency)))
            result["criteria"] = pair_summary.head_to_head(db, queue)
            result["position_bias"] = pair_summary.position_bias(db, queue)
            if as_json:
                emit_json(result)
            else:
                _pair_summary(result)
            statuses = [r["status"] for r in result["cards"] + result["pairs"]]
        else:
            work = _work(db, judges, ids, unjudged)
            if not work:
                click.echo(
                    f"every complete run of {scenario_name} is judged already by {', '.join(j.reviewer for j in judges)}"
                )
                return
            rows = run_async(go(judging.judge_runs(db, work, chosen, concurrency=concurrency)))
            if as_json:
                emit_json(rows)
            else:
                _summary(rows)
            statuses = [r["status"] for r in rows]
    raise SystemExit(0 if all(s == "complete" for s in statuses) else 1)
