"""`sieve judge`: score runs with language models, judge pair queues head to head, list where judges and people differ."""

from __future__ import annotations

import shlex
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
    viewer,
)
from sieve.cli.cost_options import dry_run_option, judge_dry_run, max_cost_option, pair_dry_run, set_budget
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


def _recorded_judges(pool, db, ids: list[str], sharing: int = 1) -> list:
    """The judges that have judged these runs, each with the settings and endpoint its latest card judging used."""
    import dataclasses
    import json

    from sieve.engine.config import LOCAL
    from sieve.engine.gateway import Endpoint, Gateway, RequestSettings
    from sieve.engine.judge import client as client

    marks = ",".join("?" * len(ids))
    rows = db.execute(
        f"SELECT reviewer, model, endpoint, settings FROM judgings WHERE kind = 'card' AND run_id IN ({marks}) "
        "AND status IN ('complete', 'partial') ORDER BY id",
        ids,
    ).fetchall()
    latest = {reviewer: (model, endpoint, json.loads(settings or "{}")) for reviewer, model, endpoint, settings in rows}
    fields = {f.name for f in dataclasses.fields(RequestSettings)} - {"model", "response_format"}
    out = []
    for reviewer, (model, endpoint, settings) in latest.items():
        if endpoint == LOCAL or endpoint in pool.config.endpoint_names():
            gateway = pool.gateway(endpoint, sharing)
        else:
            key = f"record:{settings.get('endpoint_url') or endpoint}"
            if key not in pool.gateways:
                pool.gateways[key] = Gateway(
                    Endpoint(settings.get("endpoint_url") or endpoint, api_key_env=settings.get("api_key_env"))
                )
            gateway = pool.gateways[key]
        request = RequestSettings(model=model, **{k: v for k, v in settings.items() if k in fields})
        context = settings.get("context") or client.REMOTE_CONTEXT
        out.append(client.Judge(gateway, request, reviewer, context, settings.get("structured") or "json_schema"))
    return out


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


# What a judging's summary row says of the run judged that a blind reviewer must not see: who played it, where,
# and what it cost (a price names a model); a maker shared with the judge names it too.
BLIND_HIDDEN = ("model", "cost", "conflict", "provider")


def _blind(rows: list[dict[str, Any]], looking) -> list[dict[str, Any]]:
    """Summary rows as the person looking may see them: for a blind reviewer, runs by their codes, in their own
    order, nothing of BLIND_HIDDEN, and every text in codes."""
    if not looking.blind:
        return rows
    order = {run: n for n, run in enumerate(looking.order(list(dict.fromkeys(r["run"] for r in rows))))}
    shown = []
    for r in sorted(rows, key=lambda r: order.get(r["run"], 0)):
        row = {k: v for k, v in r.items() if k not in BLIND_HIDDEN}
        row["run"] = looking.label(r["run"])
        for key in ("error", "judge"):
            if isinstance(row.get(key), str):
                row[key] = looking.scrub(row[key])
        for key in ("addressed", "failed", "strays"):
            if isinstance(row.get(key), list):
                row[key] = [looking.scrub(str(v)) for v in row[key]]
        shown.append(row)
    return shown


def _summary(rows: list[dict[str, Any]]) -> None:
    from sieve.store.scoring.labels import money

    blind = bool(rows) and "model" not in rows[0]  # rows made blind leave out the model, the cost, the maker
    if blind:
        coded: list[tuple[Any, ...]] = [
            (
                r["run"],
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
            )
            for r in rows
        ]
        headers = ["run", "judge", "status", "items", "exact", "fuzzy", "absent", "altered", "short", "player"]
        click.echo(render([*headers, "no quote", "repairs", "failed", "tokens"], coded))
        _notes(rows)
        _totals(rows, blind)
        return
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
            r["ambiguous"],
            r["off step"],
            r["no quote"],
            r["unsupported"],
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
        "ambiguous",
        "off step",
        "no quote",
        "unsupported",
    ]
    click.echo(render([*headers, "repairs", "failed", "tokens", "cost", "conflict"], table))
    _notes(rows)
    _totals(rows, blind)


def _notes(rows: list[dict[str, Any]]) -> None:
    for r in rows:
        if r["error"]:
            click.echo(one_line(f"{r['run']} ({r['judge']}): {r['error']}"))
        if r["failed"] and r["status"] == "partial":
            click.echo(one_line(f"{r['run']} ({r['judge']}): no usable answer for {', '.join(r['failed'])}"))
        for label, reason in r["set aside"].items():
            click.echo(one_line(f"{r['run']} ({r['judge']}): {label} set aside, not stored: {reason}"))
        if r["strays"]:
            click.echo(one_line(f"{r['run']} ({r['judge']}): answers to no item, ignored: {', '.join(r['strays'])}"))
        for warning in r.get("addressed", ()):
            click.echo(one_line(f"{r['run']} ({r['judge']}): ⚑ {warning}"))


def _totals(rows: list[dict[str, Any]], blind: bool) -> None:
    from sieve.store.scoring.labels import money

    quotes = {
        k: sum(r[k] for r in rows)
        for k in ("exact", "fuzzy", "absent", "altered", "short", "player", "ambiguous", "off step", "no quote")
    }
    tokens = sum(r["prompt_tokens"] + r["completion_tokens"] for r in rows)
    spent = "" if blind else f"; {money(sum(r['cost'] or 0.0 for r in rows))}"
    click.echo(
        f"{len(rows)} judgings, {sum(r['items'] for r in rows)} items scored; quotes: "
        + ", ".join(f"{n} {k}" for k, n in quotes.items())
        + f"; {sum(r['unsupported'] for r in rows)} unsupported (left out of the judges' totals)"
        + f"; {sum(r['repairs'] for r in rows)} repairs; {tokens} tokens{spent}"
    )


def _pairs(n: int) -> str:
    return "pair" if n == 1 else "pairs"


def _pair_summary(result: dict[str, Any]) -> None:
    from sieve.store.scoring.labels import money

    if result["cards"]:
        click.echo("Absolute cards first, from the same judges:")
        _summary(result["cards"])
        click.echo()
    blind = "criteria" not in result  # a blind reviewer's: no cost, no head to head by side
    headers = ["pair", "judge", "status", "criteria", "flips", "tokens"] + ([] if blind else ["cost"])
    rows = [
        (
            r["pair"],
            r["judge"],
            r["status"],
            r.get("criteria", 0),
            r.get("flips", 0),
            (r.get("prompt_tokens") or 0) + (r.get("completion_tokens") or 0),
            *([] if blind else [money(r.get("cost"))]),
        )
        for r in result["pairs"]
    ]
    click.echo(render(headers, rows))
    for r in result["pairs"]:
        if r.get("error"):
            click.echo(one_line(f"pair {r['pair']} ({r['judge']}): {r['error']}"))
    click.echo()
    if blind:
        click.echo("the head to head is told by side (a model, or its runs): not shown to a blind reviewer")
    else:
        from sieve.cli.compare_commands import render_head_to_head

        click.echo(render_head_to_head(result["criteria"]))
    if "stopped" in result:
        rounds = "; ".join(f"round {r['round']}: {r['pairs']} {_pairs(r['pairs'])}" for r in result["rounds"])
        said = f"adaptive: {rounds}" if rounds else "adaptive: no round added after the first"
        click.echo(one_line(f"{said}; stopped: {result['stopped']}"))
        if result.get("scenario"):
            click.echo(
                one_line(
                    f"the ratings of the field: sieve results --scenario {shlex.quote(result['scenario'])} "
                    "--ratings --voters judges"
                )
            )
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
    looking = viewer(db)
    rows = calibration.differences(db, scenario, [run_id(db, r) for r in given] or None)[:limit]
    if looking.blind:  # runs by their codes, in the reviewer's own order where differences tie, the quotes masked
        place = {run: n for n, run in enumerate(looking.order(list(dict.fromkeys(r["run"] for r in rows))))}
        rows = sorted(rows, key=lambda r: (-r["difference"], place[r["run"]]))
        rows = [
            {
                **r,
                "run": looking.label(r["run"]),
                "judge_quote": looking.scrub(r["judge_quote"] or ""),
                "person_quote": looking.scrub(r["person_quote"] or ""),
            }
            for r in rows
        ]
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
                    looking.short(r["run"]) if not looking.blind else r["run"],
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
@click.option(
    "--again",
    is_flag=True,
    help="Judge runs a judge has judged once more, as a catch trial of the judge: its first card stays, and "
    "sieve results --judge-report compares the two. Without -m: every judge of the runs, with the settings and "
    "endpoint its last judging used.",
)
@click.option("--pairs", "queue", help="Judge a pair queue (from sieve pair) head to head, each pair twice.")
@click.option(
    "--adaptive",
    is_flag=True,
    help="With --pairs and a queue from sieve pair --adaptive: judge it round by round, each next round the pairs "
    "least certain under the judges' ratings so far; stop at the queue's budget or when two rounds leave the "
    "order unchanged.",
)
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
@dry_run_option
@max_cost_option
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
    again: bool,
    queue: str | None,
    adaptive: bool,
    calibration: bool,
    limit: int,
    concurrency: int,
    dry_run: bool,
    max_cost: float | None,
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
    from sieve.store.record.judgings import judged_runs as judgings_of

    if calibration:
        _calibration(open_db(db_path, reads_only=True), scenario_name, runs, limit, as_json)
        return
    db = open_db(db_path)
    looking = viewer(db)
    if not_blind:
        looking.refuse("--not-blind shows the judge the model, and the judge's words come back to you")
    if queue and (runs or scenario_name):
        raise click.UsageError("--pairs judges the queue's own runs: give no RUNS or --scenario with it")
    if adaptive and not queue:
        raise click.UsageError("--adaptive goes with --pairs QUEUE (a queue from sieve pair --scenario S --adaptive)")
    if adaptive and queue:
        from sieve.store.record import queue_plans

        if queue_plans.get(db, queue) is None:
            raise SieveUsageError(f"queue {queue} is not adaptive: make one with sieve pair --scenario S --adaptive")
    if again and (queue or unjudged):
        raise click.UsageError("--again judges runs once more: give RUNS or --scenario, without --pairs or --unjudged")
    chosen = judging.Options(blind=not not_blind, precedents=precedents, again=again)
    asked = None if again and not models else _judge_requests(models, endpoint, reviewer, options)
    ids = [] if queue else _runs(db, runs, scenario_name, unjudged)
    # The embedded judge answers as many packets at once as judgings can run at once.
    sharing = concurrency if queue else min(concurrency, len(ids) * (len(asked[0]) if asked else 1))
    with endpoint_pool() as pool:
        if asked is None:
            judges = _recorded_judges(pool, db, ids, sharing)
            if not judges:
                raise SieveUsageError("no judge has judged these runs yet: nothing to judge again")
        else:
            judges = _judges(pool, endpoint, reviewer, asked, sharing)
        for judge in judges:
            judge.retry = RetryPolicy(base=retry_base)
        if dry_run and queue:
            pair_dry_run(db, judges, queue, chosen, as_json, adaptive, label=looking.label)
            return
        budget = set_budget(max_cost, [(j.gateway, j.model) for j in judges]) if max_cost and not dry_run else None

        async def go(work):
            try:
                return await work
            finally:
                await pool.aclose()

        if queue:
            from sieve.engine.judge import pairs as judge_pairs
            from sieve.store.scoring import pair_summary

            if adaptive:
                from sieve.engine.judge.adaptive import judge_adaptive
                from sieve.store.record import queue_plans

                say = lambda text: click.echo(one_line(looking.scrub(text)), err=True)  # noqa: E731
                result = run_async(go(judge_adaptive(db, judges, queue, chosen, concurrency=concurrency, announce=say)))
                result["scenario"] = (queue_plans.get(db, queue) or {}).get("scenario")
            else:
                result = run_async(
                    go(judge_pairs.judge_queue(db, judges, queue, chosen, concurrency=concurrency, label=looking.short))
                )
            if looking.blind:  # the head to head is told by side, and a side is a model or its runs
                result["cards"] = _blind(result["cards"], looking)
                result["pairs"] = [{k: v for k, v in r.items() if k not in BLIND_HIDDEN} for r in result["pairs"]]
            else:
                result["criteria"] = pair_summary.head_to_head(db, queue)
            result["position_bias"] = pair_summary.position_bias(db, queue)
            if as_json:
                emit_json(result)
            else:
                _pair_summary(result)
            statuses = [r["status"] for r in result["cards"] + result["pairs"]]
        else:
            work = _work(db, judges, ids, unjudged)
            if again:  # only what each judge has judged: a repeat needs a first card to compare with
                done = {j.reviewer: judgings_of(db, j.reviewer) for j in judges}
                work = [(judge, run) for judge, run in work if run in done[judge.reviewer]]
            if dry_run:
                judge_dry_run(db, judges, work, chosen, as_json, label=looking.label)
                return
            if not work and again:
                click.echo(f"{', '.join(j.reviewer for j in judges)} judged none of these runs yet: nothing to repeat")
                return
            if not work:
                click.echo(
                    f"every complete run of {scenario_name} is judged already by {', '.join(j.reviewer for j in judges)}"
                )
                return
            rows = run_async(go(judging.judge_runs(db, work, chosen, concurrency=concurrency, label=looking.short)))
            rows = _blind(rows, looking)
            if as_json:
                emit_json(rows)
            else:
                _summary(rows)
            statuses = [r["status"] for r in rows]
    if budget is not None:
        click.echo(one_line(budget.summary()), err=True)
    raise SystemExit(0 if all(s == "complete" for s in statuses) else 1)
