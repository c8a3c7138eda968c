"""The results table of a scenario: one row per run, the table the seeds publish.

People and model judges are never pooled: the table shows people's cards by
default, judges' on request, or both as rows of their own (`voters`), and each row
says whose (`cards`). With several reviewers of a group, each reviewer's own totals
come first and the row shows their mean (the story benchmark's rule); `reviewer`
shows one reviewer's. `extreme` lists what in the run says one run is not enough.
Every figure comes from the runs' RunViews, so it is what Review shows. Blind,
the table keeps only what cannot tell one run from another, of the reviewer's own cards (see `blind_rows`).
"""

from __future__ import annotations

import csv
import io
import re
from statistics import mean
from typing import Any

from sqlite_utils import Database

from sieve.safe_text import dumps_json, md_cell, one_line
from sieve.store.record import judgings
from sieve.store.scoring import blind as blinding
from sieve.store.scoring import comparison, draft, extreme
from sieve.store.scoring.agreement import Figure, among_people, judge_against_people
from sieve.store.scoring.field import done_share
from sieve.store.scoring.runview import RunView
from sieve.store.scoring.scorecard import Card, number_text, total_text
from sieve.tables import render as render_table

BASE_HEADERS = [
    "run",
    "model",
    "provider",
    "date",
    "status",
    "kind",
    "replies",
    "filtered",
    "cost",
    "reviewers",
    "progress",
]
KINDS = ("scripted", "explored", "live")
TABLE_CELL = 60  # characters of a cell in the plain table (csv, json and md hold every one)
# What names a run's model or maker: hidden from a blind report and a blind reviewer alike. "same maker" names
# the maker.
HIDDEN_WHEN_BLIND = ("model", "provider", "date", "cost", "same maker")
# What else tells one run from another besides its transcript (how it went, how long it is, what kind of run it
# is, a refusal flagged, who else scored it): hidden from a reviewer who scores blind, whose lists show a run's
# code and their own card only (blind_rows).
HIDDEN_FROM_BLIND_REVIEWER = (
    *HIDDEN_WHEN_BLIND,
    "status",
    "kind",
    "replies",
    "filtered",
    "reviewers",
    "cards",
    "extreme",
)
DONE = "_done"  # a row's share of its cards scored, 0 to 1 (not a column: what sorting by progress sorts by)
CLAIMED = "disqualification claimed without evidence"


def _mean_total(cards: list[Card], i: int) -> str:
    """A rubric's total as the mean of the reviewers' own totals, in decimals (this is data)."""
    rubrics = [c.rubrics[i] for c in cards]
    bonus = None
    if rubrics[0].rubric.bonuses:
        bonus = (mean(r.bonus_low for r in rubrics), mean(r.bonus_high for r in rubrics))
    text = total_text(mean(r.low for r in rubrics), mean(r.high for r in rubrics), bonus, decimals=True)
    if any(not r.complete for r in rubrics):
        left = sum(len(r.left_out) for r in rubrics)
        text += " (partial" + (f", {left} unsupported left out" if left else "") + ")"
    return text


VOTER_GROUPS = {"humans": "people", "judges": "judges"}


def run_row(
    view: RunView, reviewer: str | None = None, voters: str = "humans", flags: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """One run's row: who played it, how it went, and each rubric, counter and probe as scored by the
    `voters` (people or judges; `reviewer`, when named, alone)."""
    scenario = view.scenario
    by_reviewer = view.cards(reviewer)
    if reviewer is None:
        chosen = comparison.chooses(view.db, voters)
        by_reviewer = {r: c for r, c in by_reviewer.items() if chosen(r)}
    cards = list(by_reviewer.values())
    run = view.run
    row: dict[str, Any] = {
        "run": view.id,
        "model": run["model"],
        "provider": view.provider,
        "date": run["started"][:10],
        "status": run["status"],
        "kind": view.kind,
        "replies": len(view.replies()),
        # A run stopped by a filter is documented, not scored (the keykeeper seed).
        "filtered": view.count_replies("filtered"),
        "cost": None if run["cost"] is None else round(run["cost"], 6),
        "reviewers": len(cards),
        "cards": reviewer or VOTER_GROUPS.get(voters, voters),
        "progress": " | ".join(c.progress.text() for c in cards) if cards else None,
        DONE: mean(done_share(c) for c in cards) if cards else 0.0,
    }
    for i, rubric in enumerate(scenario.rubrics):
        row[rubric.id] = _mean_total(cards, i) if cards else None
        if rubric.deductions:
            # Capped at the rubric's maximum; a reviewer who scored the rubric and took nothing off deducted 0.
            amounts = [
                c.rubrics[i].deductions
                for c in cards
                if c.rubrics[i].deduction_annotations or any(x.scored for x in c.rubrics[i].items)
            ]
            row[deduction_item(rubric.id)] = number_text(mean(amounts), True) if amounts else None
        for written in rubric.written:
            given = [
                (r, c.rubrics[i].written[written.id]["note"] or "")
                for r, c in by_reviewer.items()
                if written.id in c.rubrics[i].written
            ]
            texts = [f"{r}: {t}" if len(given) > 1 else t for r, t in given]
            row[f"{rubric.id} {written.id}"] = " | ".join(texts) or None
    for j, counter in enumerate(scenario.counters):
        # Only the cards that say something of the counter: one nobody counted on is empty, never 0.
        values = [c.counters[j].value for c in cards if c.counters[j].answered]
        if counter.kind == "verdict":
            for v in counter.values:
                row[f"{counter.id} {v}"] = number_text(mean(x.get(v, 0) for x in values), True) if values else None
        elif counter.kind == "yesno":
            answers = sorted({x for x in values if x})
            row[counter.id] = "/".join(answers) if answers else None
        else:
            row[counter.id] = number_text(mean(values), True) if values else None
    for k, probe in enumerate(scenario.probes):
        marks = sorted({mark for c in cards if (mark := c.probes[k].mark)})
        row[probe.id] = "/".join(marks) if marks else None
    row["extreme"] = extreme.flags(view) if flags is None else flags
    disqualified = sorted({d for c in cards for d in c.disqualified_by})
    if disqualified:
        row["disqualified by"] = " ".join(disqualified)
    claimed = sorted({d for c in cards for d in c.disqualification_claimed})
    if claimed:  # a disqualifying value without the evidence to disqualify: said, never counted
        row[CLAIMED] = ", ".join(claimed)
    conflicts = judgings.conflicts(view.db, view.id)
    if conflicts and (reviewer is None or reviewer in conflicts):
        # A judge from the scored model's own maker (the keykeeper seed calls it out).
        row["same maker"] = " ".join(f"{r} ({m})" for r, m in sorted(conflicts.items()) if reviewer in (None, r))
    return row


def headers_for(view: RunView) -> list[str]:
    scenario = view.scenario
    out = list(BASE_HEADERS)
    for rubric in scenario.rubrics:
        out.append(rubric.id)
        out += [deduction_item(rubric.id)] if rubric.deductions else []
        out += [f"{rubric.id} {w.id}" for w in rubric.written]
    for counter in scenario.counters:
        out += [f"{counter.id} {v}" for v in counter.values] if counter.kind == "verdict" else [counter.id]
    out += [p.id for p in scenario.probes]
    return out


def table(
    db: Database,
    scenario_name: str,
    reviewer: str | None = None,
    views: list[RunView] | None = None,
    kind: str | None = None,
    voters: str = "humans",
) -> tuple[list[str], list[dict[str, Any]]]:
    """Headers and one row (a dict keyed by header) per run of the scenario, oldest first.

    `kind` keeps only scripted, explored (a model played the player) or live runs. `voters`: whose cards,
    `humans` (people, the default), `judges`, or `all`: a row for each group that scored the run, people's first.
    """
    views = RunView.of_scenario(db, scenario_name) if views is None else views
    if kind is not None:
        views = [v for v in views if v.kind == kind]
    rows = []
    for view in views:
        flags = extreme.flags(view)
        if voters == "all" and reviewer is None:
            both = [run_row(view, None, group, flags) for group in ("humans", "judges")]
            rows += [r for r in both if r["reviewers"]] or both[:1]
        else:
            rows.append(run_row(view, reviewer, voters, flags))
    headers: list[str] = []
    for view in views:  # runs of several versions of a scenario: every column any of them has
        headers += [h for h in headers_for(view) if h not in headers]
    if not headers:
        headers = list(BASE_HEADERS)
    if voters == "all":
        headers.insert(headers.index("reviewers"), "cards")
    for extra in ("disqualified by", CLAIMED, "same maker"):
        if any(extra in r for r in rows):
            headers.append(extra)
    if any(r["extreme"] for r in rows):
        headers.append("extreme")
    return headers, rows


AGREEMENT_HEADERS = [
    "item",
    "judge",
    "judge vs people",
    "judge 95%",
    "judge runs",
    "people",
    "people 95%",
    "people runs",
    "raters",
    "adopted",
]


def deduction_item(rubric_id: str) -> str:
    """How a rubric's deductions are named where they stand beside its items (results, agreement)."""
    return f"{rubric_id} deducted"


def item_scores(
    db: Database, scenario_name: str, exclude_adopted: bool = False
) -> dict[str, tuple[tuple[float, ...], dict[str, dict[str, float]]]]:
    """item -> (its scale's values, run -> reviewer -> score), over every run of the scenario.

    A rubric's deductions stand as one more item (`T deducted`, on a scale of its
    steps): what each reviewer who scored the rubric took off, capped; 0 for none.
    `exclude_adopted` leaves out the scores adopted from a judge's draft (draft.is_adopted).
    """
    by_item: dict[str, tuple[tuple[float, ...], dict[str, dict[str, float]]]] = {}
    for view in RunView.of_scenario(db, scenario_name):
        for reviewer, card in view.cards().items():
            for rubric in card.rubrics:
                for item in rubric.items + rubric.bonuses:
                    if exclude_adopted and draft.is_adopted(item.annotation):
                        continue
                    if item.counted and item.annotation is not None and item.annotation["score"] is not None:
                        scale, scores = by_item.setdefault(item.item.id, (item.item.scale.values, {}))
                        scores.setdefault(view.id, {})[reviewer] = item.low
                d = rubric.rubric.deductions
                if d and (rubric.deduction_annotations or any(i.scored for i in rubric.items)):
                    steps = tuple(n * d.step for n in range(int(d.maximum / d.step + 1e-9) + 1))
                    scale, scores = by_item.setdefault(deduction_item(rubric.rubric.id), (steps, {}))
                    scores.setdefault(view.id, {})[reviewer] = rubric.deductions
    return by_item


def agreement(db: Database, scenario_name: str, exclude_adopted: bool = False) -> list[dict[str, Any]]:
    """Per rubric item: each model judge against the people (weighted kappa), and the people among themselves
    (weighted kappa for two, alpha for more), each with a bootstrap 95% interval and the runs it rests on.

    `adopted` says how many of the people's scores of the item were adopted from a judge's
    draft (they agree with that judge by construction); `exclude_adopted` leaves them out of
    the figures, and `adopted_left_out` says so.

    Deductions are among the items, between people only (a judge is not asked for
    them). A written judgment has a row saying how many people wrote one; prose has
    no scale to agree on, so it has no figure.
    """
    judges = judgings.judges(db)
    adopted = draft.adopted_by_item(db, scenario_name, judges)
    out = []
    scored = item_scores(db, scenario_name, exclude_adopted)
    for item, (scale, scores) in sorted(scored.items(), key=lambda kv: _item_order(kv[0])):
        if item.endswith(" deducted"):  # item ids hold no spaces: a rubric's deductions
            scores = {run: {r: s for r, s in by.items() if r not in judges} for run, by in scores.items()}
        reviewers = sorted({r for by in scores.values() for r in by})
        people = [r for r in reviewers if r not in judges]
        among = among_people(scores, people, scale) if len(people) >= 2 else None
        rows: list[tuple[str | None, Figure | None]]
        rows = [(j, judge_against_people(scores, j, people, scale)) for j in reviewers if j in judges and people]
        rows = [(j, f) for j, f in rows if f is not None] or ([(None, None)] if among else [])
        for judge, figure in rows:
            row: dict[str, Any] = {"item": item, "judge": judge}
            row.update(_figure("judge", figure))
            row.update(_figure("people", among))
            row["people"] = among.raters if among else len(people)
            row["adopted"] = adopted.get(item, 0)
            row["adopted_left_out"] = exclude_adopted
            out.append(row)
    for item, writers in written_judgments(db, scenario_name, judges).items():
        row = {"item": item, "judge": None, **_figure("judge", None), **_figure("people", None)}
        out.append({**row, "people": len(writers), "adopted": 0, "adopted_left_out": exclude_adopted})
    return out


def written_judgments(db: Database, scenario_name: str, judges: set[str] | list[str]) -> dict[str, set[str]]:
    """`RUBRIC WRITTEN (written)` -> the people who wrote that judgment on some run of the scenario."""
    out: dict[str, set[str]] = {}
    for view in RunView.of_scenario(db, scenario_name):
        for rubric in view.scenario.rubrics:
            for written in rubric.written:
                key = f"{rubric.id} {written.id} (written)"
                out.setdefault(key, set())
                for reviewer, card in view.cards().items():
                    given = next(r for r in card.rubrics if r.rubric.id == rubric.id).written
                    if written.id in given and reviewer not in judges:
                        out[key].add(reviewer)
    return out


def _figure(prefix: str, figure: Figure | None) -> dict[str, Any]:
    def r(x: float | None) -> float | None:
        return None if x is None else round(x, 3)

    if figure is None:
        return {f"{prefix}_{k}": None for k in ("measure", "value", "low", "high", "runs", "note")}
    return {
        f"{prefix}_measure": figure.measure,
        f"{prefix}_value": r(figure.value),
        f"{prefix}_low": r(figure.low),
        f"{prefix}_high": r(figure.high),
        f"{prefix}_runs": figure.runs,
        f"{prefix}_note": figure.note,
    }


def agreement_table(rows: list[dict[str, Any]]) -> list[dict[str, str]]:
    """The agreement rows keyed by AGREEMENT_HEADERS, for `render`."""
    return [dict(zip(AGREEMENT_HEADERS, agreement_cells(r))) for r in rows]


def agreement_cells(row: dict[str, Any]) -> list[str]:
    """An agreement row as the table shows it: the judge's figure beside the people's."""

    def value(prefix: str) -> str:
        v = row[f"{prefix}_value"]
        if row[f"{prefix}_measure"] is None:
            return ""
        measure = "κw" if row[f"{prefix}_measure"] == "weighted kappa" else "α"
        if v is None:
            # The reason, where one is known ("undefined: the judge gives every run the same score").
            return f"{row.get(f'{prefix}_note') or 'undefined'} ({measure})"
        return f"{v:.2f} ({measure})"

    def interval(prefix: str) -> str:
        low, high = row[f"{prefix}_low"], row[f"{prefix}_high"]
        return "" if low is None else f"{low:.2f} to {high:.2f}"

    def runs(prefix: str) -> str:
        return "" if row[f"{prefix}_runs"] is None else str(row[f"{prefix}_runs"])

    return [
        row["item"],
        row["judge"] or "",
        value("judge"),
        interval("judge"),
        runs("judge"),
        value("people"),
        interval("people"),
        runs("people"),
        str(row["people"]),
        (f"{row['adopted']} left out" if row.get("adopted_left_out") else str(row["adopted"]))
        if row.get("adopted")
        else "",
    ]


def _item_order(item_id: str) -> tuple[str, int, str]:
    return (item_id[0], int(re.sub(r"\D", "", item_id) or 0), item_id)


def sort_key(value: Any) -> tuple[Any, ...]:
    """Order for a column: numbers (a total's first number) before text, empty cells last."""
    if isinstance(value, list):  # the extreme flags: by what the cell says
        value = extreme.flag_text(value)
    if value is None or value == "":
        return (2, 0.0, "")
    if isinstance(value, (int, float)):
        return (0, float(value), "")
    found = re.match(r"-?\d+(?:\.\d+)?", str(value))
    if found:
        return (0, float(found.group()), str(value))
    return (1, 0.0, str(value).lower())


def sort_rows(rows: list[dict[str, Any]], header: str, reverse: bool = False) -> list[dict[str, Any]]:
    """The rows sorted by a column; `progress` by how much is scored (least first), the others by `sort_key`."""
    if header == "progress":
        return sorted(rows, key=lambda r: r.get(DONE, 0.0), reverse=reverse)
    return sorted(rows, key=lambda r: sort_key(r.get(header)), reverse=reverse)


def blind_headers(headers: list[str]) -> list[str]:
    """The columns a reviewer who scores blind sees: the code, their own card (totals, counters, probes, progress)."""
    return [h for h in headers if h not in HIDDEN_FROM_BLIND_REVIEWER]


def blind_rows(
    db: Database, headers: list[str], rows: list[dict[str, Any]], reviewer: str
) -> tuple[list[str], list[dict[str, Any]]]:
    """What a blind reviewer may see of the table (its rows made of their own cards: `table(…, reviewer)`): the
    runs under their own codes and in their own order, and nothing else that tells one run from another (no
    model, provider, date, cost, status, kind, reply count, filter count, extreme flag or other reviewers)."""
    codes = blinding.codes(db, [r["run"] for r in rows], reviewer)
    by_run = {r["run"]: r for r in rows}
    shown_headers = blind_headers(headers)
    shown = [
        {**{h: by_run[run_id].get(h) for h in shown_headers}, "run": codes[run_id], DONE: by_run[run_id][DONE]}
        for run_id in blinding.shuffled(db, by_run, reviewer)
    ]
    return shown_headers, shown


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, list):  # the extreme flags
        return extreme.flag_text(value)
    return str(value)


def render(headers: list[str], rows: list[dict[str, Any]], fmt: str) -> str:
    """The table as text: table (aligned), csv, json or md. Outside text is made safe for each."""
    if fmt == "json":  # whose cards a row shows, and its extreme flags (a list, maybe empty), are always there
        always = [k for k in ("cards", "extreme") if k not in headers]
        return (
            dumps_json([{**{h: r.get(h) for h in headers}, **{k: r[k] for k in always if k in r}} for r in rows]) + "\n"
        )
    cells = [[_cell(r.get(h)) for h in headers] for r in rows]
    if fmt == "table":  # a written judgment can be long: the terminal's table shows its start, the others all
        cells = [[c if len(c) <= TABLE_CELL else c[: TABLE_CELL - 1] + "…" for c in row] for row in cells]
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow([one_line(h) for h in headers])
        writer.writerows([[one_line(c) for c in row] for row in cells])
        return out.getvalue()
    if fmt == "md":
        lines = ["| " + " | ".join(md_cell(h) for h in headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
        lines += ["| " + " | ".join(md_cell(c) for c in row) + " |" for row in cells]
        return "\n".join(lines) + "\n"
    return render_table(headers, cells) + "\n"
