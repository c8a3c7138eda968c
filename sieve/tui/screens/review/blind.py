"""A blind review in Review: the run under its neutral code, names of models and makers masked, until the
reviewer reveals it, which takes every item scored first."""

from __future__ import annotations

from sieve.safe_text import one_line
from sieve.store.scoring.runview import RunView
from sieve.store.scoring.scorecard import Card
from sieve.tables import counted


def run_title(view: RunView, reviewer: str, hidden: bool, revealed: bool, read_only: bool) -> str:
    """What the header says of the run: its code while `hidden`, what the code was once `revealed`, else its model."""
    run = view.run
    if hidden:
        title = one_line(f"blind review · {view.code} · reviewer {reviewer}")
    elif revealed:
        cost = "-" if run["cost"] is None else f"${run['cost']:.4f}"
        title = one_line(
            f"{view.code} is {run['model']} via {run['endpoint']} "
            f"({', '.join(sorted(view.providers)) or 'no provider'}), cost {cost} · reviewer {reviewer}"
        )
    else:
        title = one_line(f"{run['model']} · run {view.id} · reviewer {reviewer}")
    return f"{title} · READ-ONLY: nothing can be scored here" if read_only else title


def not_yet(card: Card) -> str | None:
    """Why the run cannot be revealed yet (items left to score), or None when it can."""
    missing = [] if card.rubrics_scored else [i for r in card.rubrics for i in r.unscored]
    if not missing:
        return None
    more = " …" if len(missing) > 8 else ""
    return f"Finish scoring first: {counted(len(missing), 'item')} not scored ({' '.join(missing[:8])}{more})."
