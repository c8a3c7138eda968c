"""The results table of a scenario: one row per run, the table the seeds publish.

With several reviewers, each reviewer's own totals come first and the row shows
their mean (the story benchmark's rule); `--reviewer` shows one reviewer's.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections import Counter
from statistics import mean
from typing import Any

from sqlite_utils import Database

import scenarios

from . import annotations as notes
from .agreement import item_agreement
from . import turns as record
from .runs import list_runs
from .scorecard import build_card


def _number(value: float) -> float | int:
    value = round(value, 2)
    return int(value) if value == int(value) else value


def _span(low: float, high: float) -> str:
    # Decimals, as the seeds' score tables print them (7.5–8), not glyphs: this is data.
    return str(low) if low == high else f"{low}–{high}"


def table(db: Database, scenario_name: str, reviewer: str | None = None) -> tuple[list[str], list[dict[str, Any]]]:
    """Headers and one row (a dict keyed by header) per run of the scenario, oldest first."""
    runs = list_runs(db, scenario_name)
    cache: dict[str, scenarios.Scenario] = {}
    headers = ["run", "model", "provider", "date", "status", "replies", "filtered", "cost", "reviewers"]
    rows = []
    extra: list[str] = []
    for run in runs:
        full = record.get_run(db, run["id"])
        sha = full["scenario_sha256"]
        if sha not in cache:
            cache[sha] = scenarios.load_text(record.scenario_text(db, sha), f"<snapshot>/{scenario_name}.toml")
        scenario = cache[sha]
        turns = record.chosen_turns(db, run["id"])
        providers = Counter(t["provider"] for t in turns if t["role"] == "assistant" and t["provider"])
        steps, step = {}, None
        for t in turns:
            if t["role"] == "user":
                step = t["step_id"]
            elif step:
                steps[t["id"]] = step
        active = notes.active(db, run["id"], reviewer)
        by_reviewer: dict[str, list[dict[str, Any]]] = {}
        for a in active:
            by_reviewer.setdefault(a["reviewer"], []).append(a)
        cards = [build_card(scenario, annotations, steps) for annotations in by_reviewer.values()]
        row: dict[str, Any] = {
            "run": run["id"],
            "model": run["model"],
            "provider": providers.most_common(1)[0][0] if providers else None,
            "date": run["started"][:10],
            "status": run["status"],
            "replies": run["replies"],
            # A run stopped by a filter is documented, not scored (the keykeeper seed).
            "filtered": sum(1 for t in turns if t["role"] == "assistant" and t["status"] == "filtered"),
            "cost": None if run["cost"] is None else round(run["cost"], 6),
            "reviewers": len(cards),
        }
        for i, rubric in enumerate(scenario.rubrics):
            key = rubric.id
            if cards:
                low = mean(c.rubrics[i].low for c in cards)
                high = mean(c.rubrics[i].high for c in cards)
                text = _span(_number(low), _number(high))
                if rubric.bonuses:
                    text += "+" + _span(_number(mean(c.rubrics[i].bonus_low for c in cards)), _number(mean(c.rubrics[i].bonus_high for c in cards)))
                row[key] = text
            else:
                row[key] = None
            if key not in extra:
                extra.append(key)
        for j, counter in enumerate(scenario.counters):
            values = [c.counters[j].value for c in cards]
            if counter.kind == "verdict":
                for v in counter.values:
                    name = f"{counter.id} {v}"
                    row[name] = _number(mean(x.get(v, 0) for x in values)) if values else None
                    if name not in extra:
                        extra.append(name)
            else:
                if counter.kind == "yesno":
                    answers = [x for x in values if x]
                    row[counter.id] = "/".join(sorted(set(answers))) if answers else None
                else:
                    row[counter.id] = _number(mean(values)) if values else None
                if counter.id not in extra:
                    extra.append(counter.id)
        if cards and any(c.disqualified_by for c in cards):
            row["disqualified by"] = " ".join(sorted({d for c in cards for d in c.disqualified_by}))
        rows.append(row)
    headers += extra
    if any("disqualified by" in r for r in rows):
        headers.append("disqualified by")
    return headers, rows


def agreement(db: Database, scenario_name: str) -> list[dict[str, Any]]:
    """Per rubric item, how far reviewers agree over the runs they both (or all) scored."""
    by_item: dict[str, dict[str, dict[str, float]]] = {}
    for run in list_runs(db, scenario_name):
        latest: dict[tuple[str, str], float] = {}
        for a in notes.active(db, run["id"]):
            if a["kind"] == "score" and a["score"] is not None:
                latest[(a["item"], a["reviewer"])] = a["score"]
        for (item, reviewer), score in latest.items():
            by_item.setdefault(item, {}).setdefault(run["id"], {})[reviewer] = score
    out = []
    for item, scores in sorted(by_item.items(), key=lambda kv: (kv[0][0], int(re.sub(r"\D", "", kv[0]) or 0), kv[0])):
        reviewers = {r for by in scores.values() for r in by}
        if len(reviewers) < 2:
            continue
        measure, value, units = item_agreement(scores)
        out.append({"item": item, "measure": measure, "value": None if value is None else round(value, 3), "units": units, "reviewers": len(reviewers)})
    return out


def sort_key(value: Any) -> tuple:
    """Order for a column: numbers (a total's first number) before text, empty cells last."""
    if value is None or value == "":
        return (2, 0.0, "")
    if isinstance(value, (int, float)):
        return (0, float(value), "")
    found = re.match(r"-?\d+(?:\.\d+)?", str(value))
    if found:
        return (0, float(found.group()), str(value))
    return (1, 0.0, str(value).lower())


def render(headers: list[str], rows: list[dict[str, Any]], fmt: str) -> str:
    """The table as text: table (aligned), csv, json or md."""
    if fmt == "json":
        return json.dumps([{h: r.get(h) for h in headers} for r in rows], indent=2, ensure_ascii=False) + "\n"
    cells = [["" if r.get(h) is None else str(r.get(h)) for h in headers] for r in rows]
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(headers)
        writer.writerows(cells)
        return out.getvalue()
    if fmt == "md":
        lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
        lines += ["| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in row) + " |" for row in cells]
        return "\n".join(lines) + "\n"
    widths = [max([len(h)] + [len(row[i]) for row in cells]) for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths)).rstrip(), "  ".join("-" * w for w in widths)]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in cells]
    return "\n".join(lines) + "\n"
