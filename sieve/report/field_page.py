"""The field's page (index.html): its contents, the results table, each run in one sentence, the filter
table, repeats as distributions, ratings, each model against the next, and agreement with their intervals, and
two charts."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from sieve.report import charts, run_page
from sieve.report.markup import cell, esc, slug, table
from sieve.store.scoring import extreme, neighbours
from sieve.store.scoring.results import BASE_HEADERS, DONE, HIDDEN_WHEN_BLIND
from sieve.store.scoring.runview import RunView
from sieve.store.scoring.scorecard import Card

NUMERIC = {"replies", "filtered", "ceiling", "tokens", "cost", "reviewers"}


def results_section(
    headers: list[str],
    rows: list[dict[str, Any]],
    views: dict[str, RunView],
    *,
    blind: bool,
    name: Callable[[str], str],
    href: Callable[[str], str],
    mask: Callable[[str], str],
) -> str:
    """The results table: the same rows and columns as `sieve results`, each rubric apart, plus ceiling hits and
    tokens, the scores before the facts; the field's total cost below it. Blind, no model, provider, date or cost
    column."""
    shown = [h for h in headers if not (blind and h in HIDDEN_WHEN_BLIND)]
    # The scores first, after what names the row (a wide table scrolls; the run stays in view): then the facts.
    lead = [h for h in ("run", "model", "cards") if h in shown]
    scores = [h for h in shown if h not in BASE_HEADERS and h not in lead]
    facts = [h for h in shown if h in BASE_HEADERS and h not in lead]
    at = facts.index("cost") + 1 if "cost" in facts else facts.index("filtered") + 1
    facts[at:at] = ["ceiling", "tokens"]
    shown = lead + scores + facts
    body = []
    for row in rows:
        view = views[row["run"]]
        row = {**row, "ceiling": view.count_replies("length"), "tokens": _tokens(view)}
        cells = []
        for n, h in enumerate(shown):
            value = row.get(h)
            if h == "run":
                link = f'<a href="{href(row["run"])}">{esc(name(row["run"]))}</a>'
                cells.append(cell(name(row["run"]), html_value=link, first=True))
            elif h == "extreme":
                cells.append(cell(mask(extreme.flag_text(value or [], limit=99))))
            elif h == "progress":
                cells.append(f'<td data-sort="{row.get(DONE, 0.0):.4f}">{esc(value or "")}</td>')
            elif h in NUMERIC:
                cells.append(cell(value, number=True))
            else:
                cells.append(cell(None if value is None else mask(str(value)), first=n == 0))
        body.append("".join(cells))
    total = sum(v.run["cost"] or 0.0 for v in views.values())
    priced = sum(1 for v in views.values() if v.run["cost"] is not None)
    foot = (
        f'<tr><td colspan="{len(shown)}">the field: {len(views)} runs, total cost ${total:.4f}'
        + (f" ({priced} of {len(views)} runs priced)" if priced < len(views) else "")
        + "</td></tr>"
    )
    return '<h2 id="results">Results</h2>' + table(shown, body, foot=foot)


def _tokens(view: RunView) -> int | None:
    run = view.run
    parts = [run["prompt_tokens"], run["completion_tokens"]]
    if all(p is None for p in parts):
        counted = [(t["prompt_tokens"] or 0) + (t["completion_tokens"] or 0) for t in view.replies()]
        return sum(counted) if any(counted) else None
    return sum(p or 0 for p in parts)


SECTIONS = {  # a section's id -> its name in the page's contents, in the order the page holds them
    "results": "results",
    "summaries": "in one sentence",
    "filters": "filters",
    "models": "models",
    "ratings": "ratings",
    "neighbours": "neighbours",
    "agreement": "agreement",
    "charts": "charts",
}


def contents(body: str, excerpts_href: str) -> str:
    """The field page's own contents: a link to each section the page holds (and to none it does not), and the
    excerpts."""
    present = set(re.findall(r'<h2 id="([\w-]+)"', body))
    links = [(f"#{ident}", label) for ident, label in SECTIONS.items() if ident in present]
    links.append((excerpts_href, "excerpts"))
    return "<nav>" + "".join(f'<a href="{h}">{esc(label)}</a>' for h, label in links) + "</nav>"


def summaries_section(
    views: list[RunView],
    cards: dict[str, dict[str, Card]],
    names: dict[str, str],
    href: Callable[[str], str],
    mark_link: Callable[[str, str], str],
    shown: run_page.Shown,
) -> str:
    """Each run in one sentence, as the seed's appendix prints them: the sentence and the quote it rests on,
    linked to the quote's mark on the run's page."""
    rows = []
    for view in views:
        for a in run_page.summaries(cards[view.id]):
            link = mark_link(view.id, a["id"]) if run_page.span_of(a) is not None else None
            run = f'<a href="{href(view.id)}">{esc(names[view.id])}</a>'
            rows.append(f'<tr><td class="table-first">{run}</td><td>{run_page.summary_line(a, shown, link)}</td></tr>')
    if not rows:
        return (
            '<h2 id="summaries">In one sentence</h2><p>No run has a one-sentence summary yet (a judge writes one).</p>'
        )
    head = '<thead><tr><th scope="col" class="table-first">run</th><th scope="col">in one sentence</th></tr></thead>'
    return f'<h2 id="summaries">In one sentence</h2><div class="scroll"><table>{head}<tbody>{"".join(rows)}</tbody></table></div>'


def filter_section(views: list[RunView], side: Callable[[RunView], str]) -> str:
    """The seed's filter table: side (a model, or a run's code when blind) × step: passed, filtered, not measured."""
    steps: list[str] = []
    for view in views:
        for scripted in view.scenario.steps:
            if scripted.kind != "setup" and scripted.id not in steps:
                steps.append(scripted.id)
    by_side: dict[str, dict[str, list[str]]] = {}
    for view in views:
        seen = by_side.setdefault(side(view), {})
        for reply in view.replies():
            answered = view.steps.get(reply["id"])
            if answered is not None:
                seen.setdefault(answered, []).append(reply["status"])
    if not any(s == "filtered" for seen in by_side.values() for got in seen.values() for s in got):
        return '<h2 id="filters">Filters</h2><p>No reply of the field was filtered.</p>'
    rows = []
    for name, seen in by_side.items():
        cells = [cell(name, first=True)]
        for step in steps:
            got = seen.get(step, [])
            filtered = got.count("filtered")
            text = "not measured" if not got else (f"filtered {filtered} of {len(got)}" if filtered else "passed")
            cells.append(cell(text))
        rows.append("".join(cells))
    return '<h2 id="filters">Filters</h2>' + table(["side", *steps], rows)


def distribution_section(groups: dict[str, list[dict[str, Any]]]) -> str:
    """Each model's runs as a distribution per rubric: runs, mean, sd, 95% interval, range, each evaluator's mean."""
    out = ['<h2 id="models">Models: repeats as distributions</h2>']
    headers = ["model", "figure", "runs", "mean", "sd", "95% interval", "min–max", "evaluators", "note"]
    for group, rows in groups.items():
        if not rows:
            continue
        body = []
        for r in rows:
            interval = "" if r["low"] is None else f"{r['low']:g} to {r['high']:g}"
            span = "" if r["min"] is None else f"{r['min']:g}–{r['max']:g}"
            evaluators = ", ".join(f"{e} {v:g}" for e, v in r["evaluators"].items() if v is not None)
            body.append(
                cell(r["model"], first=True)
                + cell(r["figure"])
                + cell(r["runs"], number=True)
                + cell(r["mean"], number=True)
                + cell(r["sd"], number=True)
                + cell(interval)
                + cell(span)
                + cell(evaluators)
                + cell(r["note"])
            )
        out.append(f"<h3>{esc(group)}</h3>" + table(headers, body))
    if len(out) == 1:
        out.append("<p>No complete run is scored yet.</p>")
    return "".join(out)


def ratings_section(board: dict[str, Any]) -> str:
    """Bradley-Terry ratings from the head-to-head judgments, each with its 95% interval."""
    headers = ["side", "rating", "95% interval", "votes", "wins", "ties", "losses", "stability"]
    out = []
    for group, rows in board["groups"].items():
        if not rows:
            continue
        body = [
            cell(r["side"], first=True)
            + cell(r["rating"], number=True)
            + cell(f"{r['low']:g} to {r['high']:g}")
            + "".join(cell(r[k], number=True) for k in ("votes", "wins", "ties", "losses"))
            + cell(r["stability"])
            for r in rows
        ]
        out.append(f"<h3>{esc(group)}</h3>" + table(headers, body))
    if not out:
        return ""
    return '<h2 id="ratings">Ratings (head to head)</h2>' + "".join(out)


def agreement_section(headers: list[str], rows: list[dict[str, str]], mask: Callable[[str], str]) -> str:
    """Agreement between the judges and the people, and among the people, per item, with 95% intervals."""
    if not rows:
        return '<h2 id="agreement">Agreement</h2><p>No item is scored by two evaluators yet.</p>'
    body = ["".join(cell(mask(r[h]) if r[h] else "", first=n == 0) for n, h in enumerate(headers)) for r in rows]
    return '<h2 id="agreement">Agreement</h2>' + table(headers, body)


def charts_section(points: list[charts.Point], heat: charts.Heat) -> str:
    parts = ['<h2 id="charts">Charts</h2>']
    if points:
        parts.append(charts.scatter(points))
    if heat.rows and heat.columns:
        parts.append(charts.heat_map(heat))
    return "".join(parts) if len(parts) > 1 else ""


def neighbours_section(
    groups: dict[str, list[dict[str, Any]]],
    card_link: Callable[[str, str], str],
    name: Callable[[str], str],
    notes: Callable[[list[dict[str, Any]]], list[str]],
) -> str:
    """Each model against the next in the ranking, per group of evaluators and rubric total, as `sieve compare`
    compares them (store.scoring.neighbours): who is ahead, the difference with its 95% interval, p, or within
    noise. Every number links to its evidence: a mean, the difference, its interval and p to the row's runs,
    each run's value by each evaluator to that evaluator's card on the run's page, where each score links to
    its quote."""
    headers = ["figure", "model", "next", "mean", "next's mean", "difference", "95% interval", "p", "verdict", "runs"]
    out = []
    for group, found in groups.items():
        body: list[str] = []
        rows: list[dict[str, Any]] = []
        for entry in found:
            for k, row in enumerate(entry["pairs"]):
                ident = f"nb-{slug(group)}-{slug(entry['figure'])}-{k}"

                def linked(text: str, ident: str = ident) -> str:
                    return f'<a href="#{ident}">{esc(text)}</a>'

                interval = f"{_signed(row['low'])} to {_signed(row['high'])}"
                evidence = " · ".join(
                    f"{esc(row[side])}: " + "; ".join(_run_values(run, by, card_link, name) for run, by in runs.items())
                    for side, runs in row["evidence"].items()
                )
                body.append(
                    cell(entry["figure"], first=True)
                    + cell(row["a"])
                    + cell(row["b"])
                    + cell(row["a_mean"], number=True, html_value=linked(f"{row['a_mean']:.2f}"))
                    + cell(row["b_mean"], number=True, html_value=linked(f"{row['b_mean']:.2f}"))
                    + cell(row["difference"], number=True, html_value=linked(_signed(row["difference"])))
                    + cell(interval, html_value=linked(interval))
                    + cell(row["p"], number=True, html_value=linked(f"{row['p']:.3f}"))
                    + cell(neighbours.verdict(row))
                    + f'<td id="{ident}">{evidence}</td>'
                )
                rows.append(row)
        unranked = [
            f"not ranked on {entry['figure']}: {', '.join(entry['unranked'])} (no run with a whole {entry['figure']} "
            "total on these cards; sieve results shows partial ones)"
            for entry in found
            if entry["unranked"]
        ]
        if body:
            said = "".join(f'<p class="muted">{esc(n)}</p>' for n in [*notes(rows), *unranked])
            out.append(f"<h3>{esc(group)}</h3>" + table(headers, body) + said)
    if not out:
        return ""
    intro = (
        "<p>Per rubric, the models ranked by their mean total, each against the next: the difference of the means "
        "with its 95% bootstrap interval and the permutation p, as <code>sieve compare</code> gives them. A model "
        "is ahead only where the interval excludes no difference and p is below 0.05; otherwise the two are "
        "within noise.</p>"
    )
    return '<h2 id="neighbours">Neighbours: each model against the next</h2>' + intro + "".join(out)


def _signed(value: float) -> str:
    return f"{value:+.2f}"


def _run_values(
    run: str, by: dict[str, float], card_link: Callable[[str, str], str], name: Callable[[str], str]
) -> str:
    """A run and its value by each evaluator, each value a link to that evaluator's card on the run's page."""
    values = ", ".join(f'{esc(e)} <a href="{card_link(run, e)}">{v:g}</a>' for e, v in by.items())
    return f"{esc(name(run))} ({values})"
