"""A run as a readable Markdown document: the transcript, then each reviewer's score card with every quote's verdict.

What the seeds publish as a run's appendix. Model text goes in fenced blocks, so
nothing in it is read as Markdown; every other outside string is escaped.
"""

from __future__ import annotations

from sieve.safe_text import md_cell, md_fence, md_inline
from sieve.scenarios import format_value
from sieve.store.record.annotations import VERDICT_WORDS
from sieve.store.record.rows import Annotation
from sieve.store.scoring.evidence import OFF_STEP
from sieve.store.scoring.labels import ROLE_TITLES, money, played_label, turn_label
from sieve.store.scoring.navigation import chapter_of
from sieve.store.scoring.runview import RunView
from sieve.store.scoring.scorecard import Card, value_text
from sieve.store.scoring.standing import unsupported

VERDICT = {
    "exact": "exact",
    "fuzzy": "fuzzy",
    "absent": "ABSENT",
    "altered": f"ALTERED, {VERDICT_WORDS['altered']}",
    "short": VERDICT_WORDS["short"],
    "player": "player's words",
    "ambiguous": f"AMBIGUOUS, {VERDICT_WORDS['ambiguous']}",
    None: "no quote",
}


def run_document(view: RunView) -> str:
    """The run as Markdown; a blind view (RunView.blind) under its code, names masked, no endpoint, date or cost."""
    run, scenario = view.run, view.scenario
    settings = run["settings"]
    shown = ("temperature", "max_tokens", "reasoning_effort", "seed", "timeout")
    lines = [f"# {md_inline(scenario.title)}: {md_inline(view.name)}", ""]
    if view.blind:
        lines.append(f"- run: {md_inline(view.code)} (blind: no model, endpoint, provider, date or cost)")
    else:
        lines.append(
            f"- run: {md_inline(view.id)}"
            + (f" (branch of {md_inline(run['parent_run'])} at turn {run['parent_turn']})" if run["parent_run"] else "")
        )
    lines.append(
        f"- scenario: {md_inline(scenario.name)}, version {scenario.version} (sha256 `{scenario.sha256[:12]}`)"
    )
    if view.blind:
        lines.append(f"- status: {md_inline(run['status'])}")
    else:
        lines.append(
            f"- endpoint: {md_inline(run['endpoint'])}; status: {md_inline(run['status'])}; "
            f"started {md_inline(run['started'])}"
        )
    lines.append(
        "- settings: " + ", ".join(f"{k} {md_inline(str(settings[k]))}" for k in shown if settings.get(k) is not None)
    )
    tokens = f"- tokens: {run['prompt_tokens'] or 0} in, {run['completion_tokens'] or 0} out"
    lines += [tokens + ("" if view.blind else f"; cost: {money(run['cost'])}"), "", "## Transcript"]
    for turn in view.turns:
        where = ""
        if turn["role"] == "user" and turn["origin"] == "player":
            where = f" · {md_inline(view.mask(played_label(turn)))}"
        elif turn["role"] == "user":
            where = f" · {turn_label(turn, md_inline(view.steps[turn['id']]))}"
            chapter = chapter_of(scenario, turn["step_id"])
            where += f" · chapter {chapter[0]}: {md_inline(chapter[1].title)}" if chapter else ""
        status = "" if turn["status"] == "complete" else f" · {md_inline(turn['status'])}"
        speaker = f" ({md_inline(view.mask(turn.get('speaker') or ''))})" if turn.get("speaker") else ""
        who = ROLE_TITLES[turn["role"]] + speaker
        lines += ["", f"### {turn['idx']} · {who}{where}{status}", "", md_fence(view.mask(turn["text"]))]
        if turn["error"] and turn["status"] != "complete":
            lines += ["", f"*{md_inline(view.mask(turn['error']))}*"]
    for reviewer, card in view.cards().items():
        lines += card_section(view, reviewer, card)
    return "\n".join(lines) + "\n"


def card_section(view: RunView, reviewer: str, card: Card) -> list[str]:
    scenario = view.scenario
    lines = ["", f"## Score card: {md_inline(reviewer)}", ""]
    for r in card.rubrics:
        lines.append(f"- {r.rubric.id} {md_inline(r.rubric.title)}: {r.total()}{r.state()}")
        if r.deduction_annotations:
            capped = ", capped" if r.deductions_capped else ""
            lines.append(
                f"  - deducted outside the items: {r.deductions:g} (at most {r.deduction_limit:g}{capped}), "
                + "; ".join(f"{format_value(a['score'] or 0)} at {_where(view, a)}" for a in r.deduction_annotations)
            )
        for written_id, judgment in r.written.items():
            lines.append(
                f"  - written judgment {md_inline(written_id)}: {md_inline(view.mask(judgment['note'] or ''))}"
            )
        for written_id in r.unwritten:
            lines.append(f"  - written judgment {md_inline(written_id)}: not written")
    if card.counters:
        judged = sum(1 for c in card.counters if c.judged and c.answered)
        lines.append(f"- {md_inline(scenario.counters_title)}: {judged} of {len(card.counters)} judged")
    for c in card.counters:
        flag = "  (disqualifying)" if c.disqualifies else ""
        lines.append(f"- {c.counter.id} {md_inline(c.counter.title)}: {md_inline(c.display())}{flag}")
    for p in card.probes:
        lines.append(f"- {p.probe.id} {md_inline(p.probe.title)}: {md_inline(p.display())}")
    if card.disqualified_by:
        lines.append(f"- **disqualified by {md_inline(', '.join(card.disqualified_by))}**")
    if card.disqualification_claimed:
        lines.append(
            f"- disqualification claimed without evidence: {md_inline(', '.join(card.disqualification_claimed))}"
        )
    lines += [f"- **⚑ {md_inline(view.mask(warning))}**" for warning in card.warnings]
    lines += ["", "| item | score | verdict | turn | quote | note |", "|---|---|---|---|---|---|"]
    for a in view.annotations(reviewer):
        try:
            scale = scenario.item(a["item"])[1].scale
        except KeyError:
            scale = None
        verdict = VERDICT.get(a["verification"]) or str(a["verification"])
        if a["verification"] == "fuzzy" and a["similarity"]:
            verdict += f" {a['similarity'] * 100:.0f}%"
        if a.get("off_step"):
            verdict += f", {OFF_STEP}"
        if unsupported(a):
            verdict += ", unsupported (not counted)"
        elif a.get("confidence") == "low":
            verdict += ", low confidence"
        turn = view.index_of.get(a["quote_turn_id"] or "", "")
        quote = view.mask(a["quote"] or "")
        lines.append(
            f"| {md_cell(a['item'])} | {md_cell(value_text(a, scale))} | {md_cell(verdict)} | {turn} | {md_cell(quote)} "
            f"| {md_cell(view.mask(a['note'] or ''))} |"
        )
    if card.unscored:
        lines += ["", f"Not scored ({md_inline(card.progress.text())}): {md_inline(' '.join(card.unscored))}"]
    return lines


def _where(view: RunView, annotation: Annotation) -> str:
    """The turn and step an annotation was given on: `turn 13 (turn7)`."""
    turn = annotation["quote_turn_id"] or annotation["turn_id"]
    step = annotation.get("step_id") or view.steps.get(turn or "")
    return f"turn {view.index_of.get(turn or '', '?')}" + (f" ({md_inline(step)})" if step else "")
