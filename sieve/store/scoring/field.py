"""A field of runs as one reviewer works through it: their order, where each run stands, the next run, catch trials.

`next_run` is the one answer to "which run now?": `sieve review --next` asks it, and
so should anything else that moves a reviewer on (Review's next-run key), so that
they agree. Blind, the order is the reviewer's own shuffle (blind.shuffled), the
order blind Home lists; otherwise the runs come in the order they were played.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sqlite_utils import Database

from sieve.store.record import catches
from sieve.store.record.annotations import annotations_by_run, trial_annotations
from sieve.store.record.rows import Run
from sieve.store.record.runs import NOT_ARCHIVED, read_runs
from sieve.store.scoring import blind as blinding
from sieve.store.scoring.runview import RunView
from sieve.store.scoring.scorecard import Card, build_card, totals_line

# -- where each run stands --------------------------------------------------------------


@dataclass(frozen=True)
class Standing:
    """Where one run stands for one reviewer."""

    scored: bool  # the reviewer has given anything on it
    complete: bool  # everything scored: items, bonuses, verdict steps, yes/no counters, probes
    progress: str  # "scored 14/22 · 2 probes · 3 steps unjudged"
    totals: str  # each rubric's total so far ("T 9+0 / 24+4 (partial)  R …"), "not scored" when nothing is
    done: float  # the share of the card that is scored, 0 to 1 (what sorting by progress sorts by)
    disqualified: bool = False  # the reviewer's card disqualifies the run (the totals say by what)


def done_share(card: Card) -> float:
    """How much of the card is scored, 0 to 1: items and bonuses, verdict steps, yes/no counters, probes alike."""
    progress = card.progress
    steps = sum(len(c.counter.steps) for c in card.counters if c.counter.kind == "verdict")
    yesno = sum(1 for c in card.counters if c.counter.kind == "yesno")
    total = progress.items + progress.probes + steps + yesno
    done = progress.items_scored + progress.probes_marked + (steps - progress.steps_unjudged)
    done += yesno - len(progress.unanswered)
    return done / total if total else 1.0


def standing_of(card: Card, scored: bool) -> Standing:
    return Standing(
        scored=scored,
        complete=card.complete,
        progress=card.progress.text(),
        totals=totals_line(card) if scored else "not scored",
        done=done_share(card) if scored else 0.0,
        disqualified=bool(card.disqualified_by),
    )


def standings(db: Database, reviewer: str, views: Iterable[RunView]) -> dict[str, Standing]:
    """Run id -> where it stands for the reviewer (their first card), from one query of their annotations.

    A run they have not touched costs no query: its standing is its scenario's empty card, built once per version.
    """
    given = annotations_by_run(db, reviewer)
    empty: dict[str, Standing] = {}
    out = {}
    for view in views:
        mine = given.get(view.id)
        if mine:
            out[view.id] = standing_of(view.card(reviewer, mine), True)
            continue
        sha = view.run["scenario_sha256"]
        if sha not in empty:
            empty[sha] = standing_of(build_card(view.scenario, []), False)
        out[view.id] = empty[sha]
    return out


# -- the field and its order ----------------------------------------------------------


def field_runs(db: Database, scenario: str | None = None) -> list[Run]:
    """The runs there are to score: every complete run (of the scenario, if named) not archived, oldest first."""
    return read_runs(
        db,
        f"status = 'complete' AND {NOT_ARCHIVED}" + (" AND scenario = ?" if scenario else ""),
        [scenario] if scenario else [],
    )


def ordered(db: Database, run_ids: Iterable[str], reviewer: str, blind: bool) -> list[str]:
    """The runs in the order this reviewer works through them: their own shuffle when blind, else as given."""
    return blinding.shuffled(db, run_ids, reviewer) if blind else list(run_ids)


# -- the next run ---------------------------------------------------------------------


@dataclass(frozen=True)
class Next:
    """The run to score next; `trial` when it is a catch trial (the run again, scored from nothing)."""

    run_id: str
    trial: str | None = None

    def view(self, db: Database, reviewer: str, blind: bool) -> RunView:
        """The run as Review should open it: the reviewer's codes, the catch trial's own card and code."""
        return RunView.open(db, self.run_id, blind=blind or self.trial is not None, viewer=reviewer, trial=self.trial)


def next_run(
    db: Database,
    reviewer: str,
    *,
    blind: bool = False,
    scenario: str | None = None,
    after: str | None = None,
    catch: int = 0,
) -> Next | None:
    """The run this reviewer should score next, or None when every run of the field is finished.

    The first run in the reviewer's order (see `ordered`) that they have not finished;
    with `after` (the run they are leaving), the first unfinished one after it in that
    order, coming round to the start, never `after` itself. Blind, a catch trial not yet
    finished comes first, and with `catch` N, up to N catch trials are drawn over the
    field (one due each time another N+1-th of the field is finished): a run the
    reviewer has finished, other than `after`, comes back under a new code.
    """
    views = [RunView(db, run, viewer=reviewer) for run in field_runs(db, scenario)]
    if not views:
        return None
    by_id = {v.id: v for v in views}
    standing = standings(db, reviewer, views)
    finished = [run_id for run_id in by_id if standing[run_id].complete]
    if blind:
        found = _catch_trial(db, reviewer, by_id, finished, after, catch)
        if found is not None:
            return found
    order = ordered(db, by_id, reviewer, blind)
    if after in order:
        start = order.index(after) + 1
        order = order[start:] + order[: start - 1]
    return next((Next(run_id) for run_id in order if not standing[run_id].complete), None)


def _catch_trial(
    db: Database, reviewer: str, views: dict[str, RunView], finished: list[str], after: str | None, catch: int
) -> Next | None:
    """A catch trial to take now: one begun and not finished, else a new one if one is due."""
    trials = [t for t in catches.of_reviewer(db, reviewer) if t["run_id"] in views]
    given = trial_annotations(db, reviewer)
    for trial in trials:
        if trial["run_id"] == after:
            continue  # just left: it comes back after another run
        view = RunView(db, views[trial["run_id"]].run, trial=trial["id"])
        if not view.card(reviewer, given.get((trial["run_id"], trial["id"]), [])).complete:
            return Next(trial["run_id"], trial["id"])
    due = sum(1 for k in range(1, catch + 1) if len(finished) >= math.ceil(k * len(views) / (catch + 1)))
    if len(trials) >= min(due, catch):
        return None
    caught = {t["run_id"] for t in trials}
    candidates = [r for r in finished if r not in caught and r != after]
    if not candidates:
        return None
    run_id = blinding.shuffled(db, candidates, reviewer + "\x00catch")[0]
    try:
        return Next(run_id, catches.create(db, reviewer, run_id))
    except sqlite3.OperationalError:  # a read-only database: no catch trial can be recorded
        return None


def next_view(db: Database, reviewer: str, *, blind: bool = False, **options: Any) -> RunView | None:
    """`next_run`, opened as Review should show it (None when the field is finished)."""
    found = next_run(db, reviewer, blind=blind, **options)
    return found.view(db, reviewer, blind) if found else None
