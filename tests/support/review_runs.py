"""Whole runs written straight into a database, as the script plays them, for the Review tests.

Each reply opens with a line naming its step, short enough to be one line of the
transcript: `shift+end` selects it, as a reviewer selects a quote.
"""

from __future__ import annotations

from sieve import scenarios, store
from sieve.engine.endpoints import Endpoints
from sieve.store.record import turns as record
from sieve.store.scoring.runview import RunView
from sieve.tui.app import SieveApp
from sieve.tui.screens.review import ReviewScreen


def scripted_run(db, name: str, model: str = "engine/1") -> str:
    """A run of the scenario with every scripted step sent and answered."""
    scenario = scenarios.load(name)
    run_id = store.create_run(db, scenario, model=model, endpoint="fake", settings={})
    for n, (step, repeat) in enumerate(scenario.script()):
        origin = {"setup": "setup", "filler": "filler"}.get(step.kind, "script")
        record.add_turn(
            db, run_id, idx=2 * n, role="user", origin=origin, text=step.text, step_id=step.id, step_repeat=repeat
        )
        reply = (
            f"Havel answers {step.id} #{repeat} plainly.\n"
            f"He counts the coins again at {step.id}, writes a line in the ledger and the grate holds. "
            "The rain keeps on over the yard; the letter waits on the shelf."
        )
        record.add_turn(db, run_id, idx=2 * n + 1, role="assistant", origin="reply", text=reply)
    record.set_run_status(db, run_id, "complete")
    return run_id


def review_app(db, run_id: str, reviewer: str = "ada") -> SieveApp:
    return SieveApp(db, Endpoints(), reviewer, first=lambda: ReviewScreen(RunView.open(db, run_id)))
