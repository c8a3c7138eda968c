"""`sieve suggest`: what the detectors see in runs, printed, or stored for reviewers to confirm."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

import click

from sieve.cli.common import db_option, emit_json, fail, json_option, open_db, open_run, viewer
from sieve.safe_text import one_line
from sieve.scenarios.detectors import NAMES as DETECTOR_NAMES
from sieve.tables import render

if TYPE_CHECKING:
    from sieve.store.scoring.runview import RunView


@click.command("suggest")
@click.argument("runs", nargs=-1)
@click.option("--scenario", "scenario_name", help="Store suggestions for every run of this scenario that has none.")
@click.option("--store", "do_store", is_flag=True, help="Store the named runs' suggestions (none is stored twice).")
@click.option(
    "--detector",
    "only",
    multiple=True,
    type=click.Choice(DETECTOR_NAMES),
    help="Only this detector (repeatable; default: every detector).",
)
@json_option
@db_option
def suggest_command(
    runs: tuple[str, ...],
    scenario_name: str | None,
    do_store: bool,
    only: tuple[str, ...],
    as_json: bool,
    db_path: str | None,
) -> None:
    """Events the detectors suggest in RUNs (ids or short ids): looping, out-of-game voice, the player's
    character played, leaked markup. They count for nothing until a reviewer accepts them in Review.

    With --scenario NAME, store them for every run of that scenario that has none yet.
    """
    from sieve.store.scoring import detectors, suggestions
    from sieve.store.scoring.runview import RunView

    if bool(runs) == bool(scenario_name):
        fail("name RUNs to print their suggestions, or --scenario NAME to store them for its runs")
    db = open_db(db_path)
    looking = viewer(db)
    chosen = set(only) or None
    if scenario_name:
        views = RunView.of_scenario(db, scenario_name, blind=looking.blind, viewer=looking.name)
        if not views:
            fail(f"no runs of the scenario '{scenario_name}' in this database")
        _report_stored(views, suggestions.store_missing(db, views, chosen), as_json)
        return
    views = [open_run(db, r) for r in runs]
    found = {view.id: suggestions.detect(view, chosen) for view in views}
    stored = {view.id: suggestions.store(db, view, chosen) for view in views} if do_store else {}
    if as_json:
        emit_json(
            [
                {
                    "run": view.name if view.blind else view.id,
                    **({} if view.blind else {"model": view.run["model"]}),
                    "scenario": view.run["scenario"],
                    "stored": len(stored[view.id]) if do_store else None,
                    "suggestions": [_shown(view, suggestions.suggestion_dict(s)) for s in found[view.id]],
                    "read_in_part": [
                        {"turn": idx, "read": read, "of": size} for idx, read, size in detectors.partly_read(view.turns)
                    ],
                }
                for view in views
            ]
        )
        return
    for view in views:
        _print_run(view, found[view.id], stored.get(view.id))


def _shown(view: RunView, suggestion: dict[str, Any]) -> dict[str, Any]:
    """A suggestion as its viewer may see it: blind, its quotes and reason masked and no turn ids (they are dated)."""
    if not view.blind:
        return suggestion
    spans = [
        {k: view.mask(v) if k == "text" else v for k, v in sp.items() if k != "turn_id"} for sp in suggestion["spans"]
    ]
    return {**suggestion, "spans": spans, "reason": view.mask(suggestion["reason"] or "")}


def _print_run(view: RunView, found: list, stored: list[str] | None) -> None:
    from sieve.store.scoring import detectors

    tally = Counter(s.item for s in found)
    summary = ", ".join(f"{item} ×{n}" for item, n in sorted(tally.items())) or "nothing"
    if view.blind:
        named = f"{view.name} ({view.run['scenario']})"
    else:
        named = f"{view.id} ({view.run['model']}, {view.run['scenario']})"
    click.echo(one_line(f"run {named}: {len(found)} suggestions: {summary}"))
    for idx, read, size in detectors.partly_read(view.turns):
        click.echo(
            f"turn {idx} read in part: its first {_size(read)} of {_size(size)} "
            f"(the detectors read at most {_size(detectors.READ_BUDGET)} of a run)"
        )
    if stored is not None:
        click.echo(
            f"stored {len(stored)} (the rest were stored before)"
            if len(stored) < len(found)
            else f"stored {len(stored)}"
        )
    if not found:
        return
    rows = []
    for s in found:
        turns = sorted({span.turn_idx for span in s.spans})
        rows.append(
            (
                s.item,
                _turns_text(turns),
                s.detector,
                "" if s.score is None else f"chain {int(s.score)}",
                f"{s.finding.confidence:.2f}",
                _cut(view.mask(s.spans[0].text) if s.spans else "", 70),
                view.mask(s.finding.reason),
            )
        )
    click.echo(render(["item", "turns", "detector", "score", "confidence", "quote", "reason"], rows))
    click.echo()


def _size(chars: int) -> str:
    return f"{chars / 1e6:.1f} MB" if chars >= 1e6 else f"{chars / 1e3:.0f} KB"


def _cut(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _turns_text(turns: list[int]) -> str:
    if len(turns) <= 4:
        return " ".join(str(t) for t in turns)
    return f"{turns[0]} {turns[1]} … {turns[-1]} ({len(turns)})"


def _report_stored(views: list[RunView], counts: dict[str, int | None], as_json: bool) -> None:
    blind = any(v.blind for v in views)
    if blind:  # under codes, in the reviewer's own order: the order of ids says when runs were played
        from sieve.store.scoring import blind as blinding

        by_id = {v.id: v for v in views}
        views = [by_id[i] for i in blinding.shuffled(views[0].db, by_id, views[0].viewer)]
    if as_json:
        emit_json(
            [
                {"run": v.name, "stored": counts[v.id]}
                if blind
                else {"run": v.id, "model": v.run["model"], "stored": counts[v.id]}
                for v in views
            ]
        )
        return
    stored = ["had some already" if counts[v.id] is None else counts[v.id] for v in views]
    if blind:
        click.echo(render(["run", "stored"], [(v.name, n) for v, n in zip(views, stored)]))
    else:
        click.echo(render(["run", "model", "stored"], [(v.id, v.run["model"], n) for v, n in zip(views, stored)]))
    done = [n for n in counts.values() if n is not None]
    click.echo(f"{sum(done)} suggestions stored for {len(done)} runs; {len(counts) - len(done)} runs had some already.")
