"""A bundle's annotations through the evidence rule, as every other annotation: refused, or marked.

A bundle is data from outside: its rows say what another database held, and a
row's own verdict on its quote is only a claim. Each annotation a bundle adds is
checked by store.scoring.evidence (the one rule) once the bundle's runs and turns
are in: one the scenario cannot hold (a score off its item's scale, an item the
scenario does not have, a verdict on a step its counter does not judge, an
impossible count or chain, a quote from a kind of step its item excludes) refuses
the whole bundle, naming the row; a quote is verified again, and what the rule
says of it (its verdict, its place, off its step) is what is stored.
"""

from __future__ import annotations

from typing import Any

from sqlite_utils import Database

from sieve.store.record import annotations as notes
from sieve.store.record import bundles
from sieve.store.record.annotations import Quote
from sieve.store.record.bundles import BundleError
from sieve.store.scoring import evidence, quotes
from sieve.store.scoring.runview import RunView


def import_bundle(db: Database, path: str, data: Any, on_conflict: str = "fail") -> dict[str, Any]:
    """bundles.import_bundle with every annotation added passing the evidence rule (`vet_bundle`)."""
    return bundles.import_bundle(db, path, data, on_conflict, vet=vet_bundle)


def describe_marked(marked: list[dict[str, Any]]) -> str:
    """What the rule said otherwise than the bundle, as `sieve import` prints it after the rest ("" for nothing)."""
    if not marked:
        return ""
    lines = [f"\n{len(marked)} annotations' quotes verified otherwise than the bundle said:"]
    for m in marked:
        lines.append(
            f"  annotations[{m['row']}] {m['item']}: {m['was']} -> {m['now']}"
            + (" (off its step)" if m["off_step"] else "")
        )
    return "\n".join(lines)


def vet_bundle(db: Database, path: str, added: list[tuple[int, dict[str, Any]]]) -> list[dict[str, Any]]:
    """Check each annotation added (its index in the bundle, its row) against its run's scenario and transcript;
    BundleError names the first the scenario cannot hold. Returns the rows whose verdict the rule changed:
    {"row", "id", "item", "was", "now", "off_step"}."""
    views: dict[str, tuple[RunView, quotes.Transcript]] = {}
    marked = []
    for i, row in added:
        if row["run_id"] not in views:
            view = RunView.open(db, row["run_id"])
            views[row["run_id"]] = (view, quotes.Transcript(view.turns))
        view, transcript = views[row["run_id"]]
        where = f"annotations[{i}]"
        try:
            verdict, off = _judge_row(db, view, transcript, row)
        except evidence.EvidenceRefused as exc:
            raise BundleError(path, str(exc), key=where) from None
        if verdict is not None or off != bool(row.get("off_step")):
            now = verdict.verdict if verdict is not None else row.get("verification")
            if verdict is not None:
                notes.set_verification(db, row["id"], verdict, off)
                # The place is the rule's: an ambiguous quote claims none.
                if verdict.verdict == "ambiguous":
                    db.execute(
                        "UPDATE annotations SET quote_turn_id = NULL, quote_start = NULL, quote_end = NULL "
                        "WHERE id = ?",
                        [row["id"]],
                    )
            else:
                db.execute("UPDATE annotations SET off_step = ? WHERE id = ?", [int(off), row["id"]])
            if now != row.get("verification") or off != bool(row.get("off_step")):
                marked.append(
                    {"row": i, "id": row["id"], "item": row["item"], "was": row.get("verification"), "now": now}
                    | {"off_step": off}
                )
    return marked


def _judge_row(
    db: Database, view: RunView, transcript: quotes.Transcript, row: dict[str, Any]
) -> tuple[notes.Verified | None, bool]:
    """The rule's word on one row: its quote verified again (None: it has none), and whether it is off its step.
    EvidenceRefused when the scenario cannot hold it."""
    scenario = view.scenario
    reason = evidence.impossible(scenario, row, len(view.replies()))
    if reason:
        raise evidence.EvidenceRefused(reason)
    verified = None
    if row.get("quote"):
        claimed = Quote(row.get("quote_turn_id"), row.get("quote_start"), row.get("quote_end"), row["quote"])
        verified = evidence.verify(db, view.id, claimed, transcript, repeats=evidence.repeats(scenario, row["item"]))
    placed = verified.quote.turn_id if verified is not None and verified.verdict in evidence.PLACED else None
    reason = evidence.refused_quote(scenario, row["item"], view.steps, placed)
    if reason:
        raise evidence.EvidenceRefused(reason)
    verdict_step = None
    if row["kind"] == "verdict" and scenario.counter(row["item"]).kind == "verdict":
        verdict_step = row.get("step_id") or view.steps.get(placed or row.get("turn_id") or "")
        reason = evidence.verdict_problem(scenario, row["item"], verdict_step, set(view.steps.values()))
        if reason:
            raise evidence.EvidenceRefused(reason)
    place = view.steps.get(placed or row.get("turn_id") or "")
    return verified, evidence.off_step(scenario, row["item"], place, set(view.steps.values()), verdict_step)
