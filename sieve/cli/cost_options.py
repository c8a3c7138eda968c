"""What the commands that spend money share: --dry-run (the packets or turns counted, the cost expected from the
endpoint's published prices) and --max-cost (a limit never passed: sieve.engine.spending.Budget)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import click

from sieve.cli.common import emit_json, run_async
from sieve.safe_text import one_line
from sieve.tables import counted, render


def max_cost_option(f):
    return click.option(
        "--max-cost",
        type=click.FloatRange(0, min_open=True),
        help="Stop before the spend would pass USD: a request is sent only while its worst case (its prompt and its "
        "whole reply ceiling, at the endpoint's published prices) fits, waiting for the requests in flight to settle "
        "when it does not fit beside them; what was not sent is said.",
    )(f)


def dry_run_option(f):
    return click.option(
        "--dry-run",
        is_flag=True,
        help="Send nothing: print each request's estimated tokens and the cost expected from the endpoint's "
        "published prices (its /models), at most with every reply at its ceiling.",
    )(f)


async def _prices(gateways: Sequence[Any]) -> dict[str, Any]:
    from sieve.engine.config import LOCAL

    out: dict[str, Any] = {}
    for gateway in {id(g): g for g in gateways}.values():
        if gateway.endpoint.label == LOCAL:
            continue  # the embedded model costs nothing
        out.update(await gateway.prices())
    return out


def prices_for(gateways: Sequence[Any]) -> dict[str, Any]:
    return run_async(_prices(gateways))


def free_models(pairs: Sequence[tuple[Any, str]]) -> dict[str, Any]:
    """The embedded model's requests are free: (gateway, model) on the local endpoint, priced at nothing."""
    from sieve.engine.config import LOCAL
    from sieve.engine.spending import FREE

    return {model: FREE for gateway, model in pairs if gateway.endpoint.label == LOCAL}


def set_budget(limit: float, pairs: Sequence[tuple[Any, str]]) -> Any:
    """A Budget over these (gateway, model) pairs, set on each gateway; fails before anything is sent when a model
    has no price."""
    from sieve.engine.spending import Budget

    gateways = [g for g, _ in pairs]
    prices = {**prices_for(gateways), **free_models(pairs)}
    budget = Budget(limit, prices)
    for _, model in pairs:
        budget.price(model)  # SieveUsageError names a model without a price
    for gateway in gateways:
        gateway.budget = budget
    return budget


def judge_dry_run(
    db,
    judges: Sequence[Any],
    work: Sequence[tuple[Any, str]],
    options: Any,
    as_json: bool,
    label: Callable[[str], str] = lambda run_id: run_id,
) -> None:
    """`sieve judge --dry-run`: each judging's packets, their tokens (estimated), and what they would cost.
    `label` names a run (a blind reviewer's code)."""
    estimate = _Estimate(db, judges)
    rows = [estimate.card_row(judge, run, options, label) for judge, run in work]
    if as_json:
        emit_json(rows)
        return
    headers = ["run", "judge", "packets", "prompt tokens", "reply ceiling", "expected", "at most"]
    _print_estimate(rows, headers, estimate.money, ("run", "judge", "packets"))


def pair_dry_run(
    db,
    judges: Sequence[Any],
    queue: str,
    options: Any,
    as_json: bool,
    adaptive: bool,
    label: Callable[[str], str] = lambda run_id: run_id,
) -> None:
    """`sieve judge --pairs Q --dry-run`: the cards a side still needs, then each pair's two orders, their tokens
    and cost; with --adaptive, the rounds still to come, bounded by the queue's budget at this round's mean."""
    from sieve.engine.judge import pairs as judge_pairs
    from sieve.store.record import pairs as pairing
    from sieve.store.record import queue_plans

    work, missing = judge_pairs.queue_work(db, judges, queue, skip_judged=adaptive)
    estimate = _Estimate(db, judges)
    rows = [{"what": "card", **estimate.card_row(judge, run, options, label)} for judge, run in missing]
    for judge, pair in work:
        packets = judge_pairs.PairJudging(db, judge, pair, options).rendered_packets()
        rows.append({"what": f"pair {pair['position'] + 1}", **estimate.row(judge, packets, "pair")})
    later = None
    plan = queue_plans.get(db, queue) if adaptive else None
    if plan is not None:
        queued = len(pairing.queue_pairs(db, queue, catches=False))
        pair_rows = [r for r in rows if r["what"] != "card"]
        more = 0 if plan.get("stopped") else max(0, plan["budget"] - queued)
        later = {"pairs_at_most": more, "budget": plan["budget"], "queued": queued}
        if pair_rows and more:
            for key in ("prompt_tokens", "reply_ceiling", "expected_cost", "cost_at_most"):
                values = [r[key] for r in pair_rows]
                later[key] = None if None in values else round(sum(values) / len(values) * more, 6)
    if as_json:
        emit_json({"requests": rows, "later_rounds": later} if adaptive else rows)
        return
    if not rows:
        click.echo(f"queue {queue}: every pair has these judges' verdicts and every side their cards; nothing to send")
    shown = [{**r, "what": f"card of {r['run']}" if r["what"] == "card" else r["what"]} for r in rows]
    headers = ["what", "judge", "packets", "prompt tokens", "reply ceiling", "expected", "at most"]
    if rows:
        _print_estimate(shown, headers, estimate.money, ("what", "judge", "packets"))
    if later is not None:
        if not later["pairs_at_most"]:
            click.echo(
                f"later rounds: none (the queue holds {counted(later['queued'], 'pair')} of its budget of {later['budget']})"
            )
        elif later.get("cost_at_most") is None:
            click.echo(
                f"later rounds: up to {counted(later['pairs_at_most'], 'pair')} more (the budget of {later['budget']} less the "
                f"{later['queued']} queued), about {later.get('prompt_tokens') or 0:.0f} prompt tokens; no price"
            )
        else:
            click.echo(
                f"later rounds: up to {counted(later['pairs_at_most'], 'pair')} more (the budget of {later['budget']} less the "
                f"{later['queued']} queued), at most {estimate.money(later['cost_at_most'])} at this round's mean; "
                "the ranking may settle before the budget is spent"
            )


class _Estimate:
    """Prices and the judges' earlier reply lengths, fetched once for every row of an estimate."""

    def __init__(self, db, judges: Sequence[Any]):
        from sieve.engine.spending import money

        self.db = db
        self.money = money
        self.prices = {**prices_for([j.gateway for j in judges]), **free_models([(j.gateway, j.model) for j in judges])}
        self.replies: dict[tuple[str, str], float | None] = {}

    def _mean_reply(self, reviewer: str, kind: str) -> float | None:
        if (reviewer, kind) not in self.replies:
            self.replies[(reviewer, kind)] = self.db.execute(
                "SELECT AVG(completion_tokens) FROM judgings WHERE reviewer = ? AND kind = ? AND completion_tokens > 0",
                [reviewer, kind],
            ).fetchone()[0]
        return self.replies[(reviewer, kind)]

    def card_row(self, judge: Any, run: str, options: Any, label: Callable[[str], str]) -> dict[str, Any]:
        from sieve.engine.judge import runs as judging

        packets = judging.RunJudging(self.db, judge, run, dataclasses.replace(options, again=False)).rendered_packets()
        return {"run": label(run), **self.row(judge, packets, "card")}

    def row(self, judge: Any, packets: Sequence[str], kind: str) -> dict[str, Any]:
        from sieve.engine.spending import estimate_tokens

        prompt = sum(estimate_tokens(p) for p in packets)
        ceiling = (judge.settings.max_tokens or 0) * len(packets)
        price = self.prices.get(judge.model)
        expected = self._mean_reply(judge.reviewer, kind)
        return {
            "judge": judge.reviewer,
            "packets": len(packets),
            "prompt_tokens": prompt,
            "reply_ceiling": ceiling,
            "expected_reply_tokens": None if expected is None else round(expected * len(packets)),
            "expected_cost": None
            if price is None or expected is None
            else round(price.cost(prompt, expected * len(packets)), 6),
            "cost_at_most": None if price is None else round(price.cost(prompt, ceiling), 6),
            "priced": price is not None,
        }


def _print_estimate(rows: list[dict[str, Any]], headers: list[str], money, keys: Sequence[str]) -> None:
    def cell(row: dict[str, Any], key: str) -> str:
        if not row["priced"]:
            return "no price"
        # Priced, but nothing replied before to say how long a reply runs: the ceiling is all that is known.
        return "no replies yet" if row[key] is None else money(row[key])

    table = [
        (
            *(r[k] for k in keys),
            r["prompt_tokens"],
            r["reply_ceiling"],
            cell(r, "expected_cost"),
            cell(r, "cost_at_most"),
        )
        for r in rows
    ]
    click.echo(render(headers, table))
    priced = [r for r in rows if r["priced"]]
    most = sum(r["cost_at_most"] for r in priced)
    known = [r["expected_cost"] for r in priced if r["expected_cost"] is not None]
    said = f"{sum(r['prompt_tokens'] for r in rows)} prompt tokens (estimated, about 4 characters a token); "
    said += f"at most {money(most)} with every reply at its ceiling"
    if known and len(known) == len(rows):
        said += f"; expected {money(sum(known))} from earlier replies' lengths"
    else:
        said += "; expected: unknown where nothing was replied before"
    if len(priced) < len(rows):
        said += f"; {len(rows) - len(priced)} rows have no price (the endpoint publishes none at /models)"
    click.echo(one_line(said + "; retries and repair rounds not counted. Nothing was sent."))


def run_dry_run(db, scenario, specs: Sequence[Any], as_json: bool) -> None:
    """`sieve run --dry-run`: per model, the scripted turns' prompts (the whole conversation each time), the
    replies' ceiling, and what they would cost: at least with empty replies, at most with every reply at its ceiling,
    expected from the model's earlier runs of the scenario where it has any."""
    from sieve.engine.spending import estimate_tokens, money

    user = [estimate_tokens(step.text) for step, _ in scenario.script()]
    prices = {**prices_for([s.gateway for s in specs]), **free_models([(s.gateway, s.settings.model) for s in specs])}
    by_model: dict[str, list[Any]] = {}
    for spec in specs:
        by_model.setdefault(spec.settings.model, []).append(spec)
    rows = []
    for model, given in by_model.items():
        ceiling = given[0].settings.max_tokens or 0
        turns = len(user)
        low = sum(sum(user[: k + 1]) for k in range(turns))  # empty replies
        high_prompt = low + sum(k * ceiling for k in range(turns))  # every earlier reply at its ceiling
        mean = db.execute(
            "SELECT AVG(t.completion_tokens) FROM turns t JOIN runs r ON r.id = t.run_id WHERE r.model = ? "
            "AND r.scenario = ? AND t.role = 'assistant' AND t.completion_tokens > 0",
            [model, scenario.name],
        ).fetchone()[0]
        price = prices.get(model)
        expected = None
        if price is not None and mean is not None:
            prompt = low + sum(k * mean for k in range(turns))
            expected = round(len(given) * price.cost(prompt, turns * mean), 6)
        rows.append(
            {
                "model": model,
                "runs": len(given),
                "requests": turns * len(given),
                "prompt_tokens": low * len(given),
                "reply_ceiling": turns * ceiling * len(given),
                "expected_cost": expected,
                "cost_at_least": None if price is None else round(len(given) * price.cost(low, 0), 6),
                "cost_at_most": None
                if price is None
                else round(len(given) * price.cost(high_prompt, turns * ceiling), 6),
                "priced": price is not None,
            }
        )
    if as_json:
        emit_json(rows)
        return
    headers = ["model", "runs", "requests", "prompt tokens", "reply ceiling", "expected", "at most"]
    _print_estimate(rows, headers, money, ("model", "runs", "requests"))
