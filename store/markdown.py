"""A run as a readable Markdown document: the transcript, then each reviewer's score card with every quote's verdict.

What the seeds publish as a run's appendix. Model text goes in fenced blocks, so
nothing in it is read as Markdown.
"""

from __future__ import annotations

import re

from sqlite_utils import Database

import scenarios
from scenarios import format_value

from . import annotations as notes
from . import turns as record
from .scorecard import build_card, total_text

VERDICT = {"exact": "exact", "fuzzy": "fuzzy", "absent": "ABSENT", "player": "player's words", None: "no quote"}


def _fence(text: str) -> str:
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text}\n{fence}"


def _cell(text: str | None) -> str:
    return (text or "").replace("|", "\\|").replace("\n", " ")


def run_document(db: Database, run_id: str) -> str:
    run = record.get_run(db, run_id)
    scenario = scenarios.load_text(record.scenario_text(db, run["scenario_sha256"]), f"<snapshot>/{run['scenario']}.toml")
    turns = record.chosen_turns(db, run_id)
    settings = run["settings"]
    lines = [
        f"# {scenario.title}: {run['model']}",
        "",
        f"- run: `{run_id}`" + (f" (branch of `{run['parent_run']}` at turn {run['parent_turn']})" if run["parent_run"] else ""),
        f"- scenario: {scenario.name}, version {scenario.version} (sha256 `{scenario.sha256[:12]}`)",
        f"- endpoint: {run['endpoint']}; status: {run['status']}; started {run['started']}",
        "- settings: " + ", ".join(f"{k} {settings[k]}" for k in ("temperature", "max_tokens", "reasoning_effort", "seed", "timeout") if settings.get(k) is not None),
        f"- tokens: {run['prompt_tokens'] or 0} in, {run['completion_tokens'] or 0} out; cost: " + ("-" if run["cost"] is None else f"${run['cost']:.4f}"),
        "",
        "## Transcript",
    ]
    step_of: dict[str, str] = {}
    step = None
    for turn in turns:
        who = {"user": "player", "assistant": "model", "system": "system prompt"}[turn["role"]]
        where = ""
        if turn["role"] == "user":
            step = turn["step_id"] or "live"
            where = f" · {step}" + (f" #{turn['step_repeat']}" if (turn["step_repeat"] or 1) > 1 else "")
        elif step:
            step_of[turn["id"]] = step
        status = "" if turn["status"] == "complete" else f" · {turn['status']}"
        lines += ["", f"### {turn['idx']} · {who}{where}{status}", "", _fence(turn["text"])]
        if turn["error"] and turn["status"] != "complete":
            lines += ["", f"*{_cell(turn['error'])}*"]
    by_reviewer: dict[str, list] = {}
    for a in notes.active(db, run_id):
        by_reviewer.setdefault(a["reviewer"], []).append(a)
    index_of = {t["id"]: t["idx"] for t in record.all_turns(db, run_id)}
    for reviewer, given in sorted(by_reviewer.items()):
        card = build_card(scenario, given, step_of)
        lines += ["", f"## Score card: {reviewer}", ""]
        lines += [f"- {r.rubric.id} {r.rubric.title}: {total_text(r)}" for r in card.rubrics]
        for c in card.counters:
            lines.append(f"- {c.counter.id} {c.counter.title}: {c.display()}" + ("  (disqualifying)" if c.disqualifies else ""))
        if card.disqualified_by:
            lines.append(f"- **disqualified by {', '.join(card.disqualified_by)}**")
        lines += ["", "| item | score | verdict | turn | quote | note |", "|---|---|---|---|---|---|"]
        for a in given:
            if a["kind"] == "score":
                score = format_value(a["score"]) + (f"–{format_value(a['score_high'])}" if a["score_high"] is not None else "")
            elif a["kind"] == "count":
                score = f"chain {int(a['score'])}" if a["score"] is not None else "+1"
            else:
                score = a["value"] or ""
            verdict = VERDICT.get(a["verification"], a["verification"])
            if a["verification"] == "fuzzy" and a["similarity"]:
                verdict += f" {a['similarity'] * 100:.0f}%"
            turn = index_of.get(a["quote_turn_id"], "")
            lines.append(f"| {a['item']} | {score} | {verdict} | {turn} | {_cell(a['quote'])} | {_cell(a['note'])} |")
        unscored = [i for r in card.rubrics for i in r.unscored]
        if unscored:
            lines += ["", f"Not scored: {' '.join(unscored)}"]
    return "\n".join(lines) + "\n"
