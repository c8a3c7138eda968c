"""The evidence commands: export, import, verify (results has a module of its own)."""

from __future__ import annotations

from typing import TypedDict

import click

from sieve.cli.common import (
    db_option,
    emit_json,
    fail,
    json_option,
    load_scenario,
    open_db,
    open_run,
    reviewer_option,
    run_id,
    viewer,
)
from sieve.safe_text import visible
from sieve.tables import render


@click.command("export")
@click.argument("runs", nargs=-1)
@click.option("--all", "everything", is_flag=True, help="Every run in the database, archived ones too.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["json", "md"]),
    default="json",
    show_default=True,
    help="json: a bundle with every row and id (sieve import reads it); md: the transcript with the score cards.",
)
@click.option(
    "-o", "--output", type=click.Path(dir_okay=False, writable=True), help="Write to a file instead of stdout."
)
@db_option
def export_command(runs: tuple[str, ...], everything: bool, fmt: str, output: str | None, db_path: str | None) -> None:
    """Write runs (ids or short ids) as a JSON bundle, or as a readable Markdown document.

    A reviewer who reviews blind only exports Markdown, blind: runs under their codes, in their own order, model and
    maker names masked, no endpoint, date or cost; a bundle (every row and id) is refused them."""
    from sieve import store
    from sieve.store.record import bundles
    from sieve.store.scoring import markdown
    from sieve.store.scoring.runview import RunView

    db = open_db(db_path, reads_only=True)
    looking = viewer(db)
    if fmt == "json":
        looking.refuse("a bundle holds every row as it is, models and dates with it; export --format md is blind")
    # --all is every run the database keeps, archived ones too: a copy of it loses nothing.
    ids = [r["id"] for r in store.list_runs(db, archived=None)] if everything else [run_id(db, r) for r in runs]
    if not ids:
        fail("name a RUN (or --all)")
    if fmt == "json":
        text = bundles.dumps(bundles.export_bundle(db, ids))
    else:
        shown = [RunView.open(db, i, blind=looking.blind, viewer=looking.name) for i in looking.order(ids)]
        text = "\n\n".join(markdown.run_document(view) for view in shown)
    if output:
        with open(output, "w", encoding="utf-8") as handle:
            handle.write(text)
    else:
        click.echo(text, nl=False)


@click.command("import")
@click.argument("path", type=click.Path(dir_okay=False))
@click.option("--scenario", help="For a SillyTavern chat: the scenario whose rubrics score it.")
@click.option(
    "-m", "--model", help="For a SillyTavern chat: the model that played (default: from the chat, if it says)."
)
@click.option(
    "--on-conflict",
    type=click.Choice(["fail", "theirs", "ours", "skip"]),
    default="fail",
    show_default=True,
    help="A bundle's row that says otherwise than the database about the same id, or a reviewer's other value "
    "for an item: fail (import nothing, list them), theirs (the bundle's stands), ours (the database's stands; "
    "skip is its older name). The other side is kept in the record, removed.",
)
@click.option(
    "--strict",
    is_flag=True,
    help="For a chat: refuse a line that is no message (a comment, a line cut short) instead of skipping it with a "
    "warning naming it.",
)
@click.option("--again", is_flag=True, help="For a chat imported before for this scenario: import it again, as a copy.")
@json_option
@db_option
def import_command(
    path: str,
    scenario: str | None,
    model: str | None,
    on_conflict: str,
    strict: bool,
    again: bool,
    as_json: bool,
    db_path: str | None,
) -> None:
    """Import a bundle (from sieve export) or a SillyTavern chat (.jsonl) as a run.

    A chat's player messages that are the scenario's steps, word for word or nearly (as a quote is
    found), take those steps; the others are the player's own. The same chat imported again for
    the same scenario adds nothing, unless --again.

    A bundle's annotations pass the same evidence rule as any other: one the scenario cannot hold (an unknown
    item, a score off its scale, an impossible count or chain, a verdict on a step its counter does not judge)
    refuses the bundle; every quote is verified again, and what the rule says of it is what is stored.
    """
    from sieve.store.record import bundles
    from sieve.store.scoring import bundle_evidence

    db = open_db(db_path)
    if path.endswith(".jsonl"):
        if not scenario:
            fail("a chat needs --scenario NAME: the scenario whose rubrics will score it")
        result = _import_chat(db, path, load_scenario(scenario), model, strict, again)
        message = result.pop("message")
    else:
        result = bundle_evidence.import_bundle(db, path, bundles.read_bundle(path), on_conflict)
        message = bundles.describe_import(path, result) + bundle_evidence.describe_marked(result["marked"])
    looking = viewer(db)
    if looking.blind:  # the rows' ids, dates and values, in codes
        import json

        result = json.loads(looking.scrub(json.dumps(result, ensure_ascii=False)))
        message = looking.scrub(message)
    if as_json:
        emit_json(result)
    else:
        click.echo(visible(message))


def _import_chat(db, path: str, scenario, model: str | None, strict: bool, again: bool) -> dict:
    """A chat imported (or found imported before), with what to say about it."""
    from sieve.store.record import sillytavern
    from sieve.store.scoring import chat_steps

    warnings: list[str] = []
    try:
        imported = sillytavern.import_chat(
            db,
            path,
            scenario,
            model,
            strict=strict,
            warn=warnings.append,
            place=chat_steps.matcher(scenario),
            again=again,
        )
    except sillytavern.AlreadyImported as before:
        return {"run": before.run_id, "added": False, "warnings": warnings, "message": str(before)}
    finally:  # the lines skipped are named, also when nothing was left to import
        looking = viewer(db)
        for warning in warnings:
            click.echo(visible(looking.scrub(warning)), err=True)
    player, placed = db.execute(
        "SELECT COUNT(*), COUNT(step_id) FROM turns WHERE run_id = ? AND role = 'user' AND chosen = 1", [imported]
    ).fetchone()
    status, error = db.execute("SELECT status, error FROM runs WHERE id = ?", [imported]).fetchone()
    return {
        "run": imported,
        "added": True,
        "status": status,
        "error": error,
        "warnings": warnings,
        "player_messages": player,
        "on_the_script": placed,
        "message": f"{path}: imported as run {imported}"
        + (f", {status}: {error}" if error else "")
        + f"; {placed} of {player} player messages are the scenario's steps"
        + ("" if placed == player else ", the others the player's own"),
    }


class CheckedRow(TypedDict):
    """One item of a card as `sieve verify` reports it (an element of --json's `items`)."""

    item: str
    score: float | None
    score_high: float | None
    quote: str | None
    verdict: str  # one of migrations.QUOTE_VERDICTS, "no quote", or "error" (the item cannot stand: see `error`)
    turn: int | None  # where the quote was found (turns count from 0)
    similarity: float | None
    off_step: bool  # found, but off the steps its item is judged on: kept, no evidence
    claimed_turn: int | None  # the turn the card names (its step's reply, when it names a step)
    note: str | None  # the quote found at another turn than the one claimed
    error: str | None  # why the item cannot stand: an unknown item, a score off its scale, no such turn or step, ...


@click.command("verify")
@click.argument("card", type=click.Path(dir_okay=False), required=False)
@click.option("--run", "run", required=True, help="The run the card scores (an id or a short id).")
@click.option("--import", "do_import", is_flag=True, help="Store the card's scores as annotations (with --reviewer).")
@reviewer_option
@json_option
@db_option
def verify_command(
    card: str | None, run: str, do_import: bool, reviewer: str | None, as_json: bool, db_path: str | None
) -> None:
    """Check every quote of a score card (JSON, or a Markdown table | item | score | quote |) against a run.

    An item may name the turn its quote stands at (turns count from 0: message 0 is turn 0) or a step
    instead (m3: the reply to it). Every item is checked; one that cannot stand (an unknown item, a score
    off its scale, an impossible count or chain, no such turn) is an error of its own, and a quote found
    at another turn than the one claimed is noted. A quote found off the steps its item is judged on is
    marked off its step; one that stands in several turns and claims none is ambiguous. Without CARD,
    verify the quotes of the run's stored annotations again.
    Exit status 1 when any quote is absent or altered, 2 when the card is malformed or any item is an error
    (nothing is imported then).
    """
    from sieve.store.record.annotations import NOT_AS_WRITTEN
    from sieve.store.record.migrations import QUOTE_VERDICTS
    from sieve.store.scoring import cards, evidence
    from sieve.store.scoring.scorecard import range_text

    db = open_db(db_path, reads_only=card is not None and not do_import)
    view = open_run(db, run)
    named = view.name if view.blind else view.id  # a blind reviewer's code
    if card is None:
        counts = evidence.reverify(db, view.id)
        if as_json:
            emit_json({"run": named, "summary": counts})
        else:
            click.echo(
                f"{named}: " + (", ".join(f"{n} {v}" for v, n in sorted(counts.items())) or "no quotes to verify")
            )
        raise SystemExit(1 if any(counts.get(v) for v in NOT_AS_WRITTEN) else 0)
    if do_import and not reviewer:
        fail("--import needs --reviewer NAME: whose scores these are")
    checked = cards.check_card(card, cards.read_card(card), view)
    rows: list[CheckedRow] = [
        {
            "item": c.item.id,
            "score": c.item.score,
            "score_high": c.item.score_high,
            "quote": c.item.quote,
            "verdict": "error" if c.problem else c.found.verdict if c.found else "no quote",
            "turn": c.found.turn_idx if c.found else None,
            "similarity": c.found.similarity if c.found else None,
            "off_step": c.off_step,
            "claimed_turn": c.claimed,
            "note": c.elsewhere,
            "error": c.problem,
        }
        for c in checked
    ]
    summary = {v: sum(1 for r in rows if r["verdict"] == v) for v in (*QUOTE_VERDICTS, "no quote", "error")}
    summary[evidence.OFF_STEP] = sum(1 for r in rows if r["off_step"])
    errors = [(c.item.where, c.problem) for c in checked if c.problem]
    imported = 0
    if do_import and reviewer and not errors:  # reviewer: --import without one failed above
        imported = cards.import_card(db, view, checked, reviewer, source=f"card {card}")
    if as_json:
        emit_json({"run": named, "items": rows, "summary": summary, "imported": imported})
    else:
        click.echo(
            render(
                ["item", "score", "verdict", "turn", "similarity", "quote", "note"],
                [
                    (
                        r["item"],
                        ""
                        if r["score"] is None
                        else range_text(r["score"], r["score_high"] if r["score_high"] is not None else r["score"]),
                        r["verdict"] + (f", {evidence.OFF_STEP}" if r["off_step"] else ""),
                        "" if r["turn"] is None else r["turn"],
                        "" if r["similarity"] is None else f"{r['similarity'] * 100:.0f}%",
                        (r["quote"] or "")[:60],
                        r["note"] or "",
                    )
                    for r in rows
                ],
            )
        )
        for where, problem in errors:
            click.echo(visible(f"{card}: {where}: {problem}"))
        click.echo(
            ", ".join(f"{n} {v}" for v, n in summary.items() if n)
            + (f"; imported {imported} as {visible(reviewer)}" if do_import and reviewer and not errors else "")
            + ("; nothing imported: the card has errors" if do_import and errors else "")
        )
    if errors:
        raise SystemExit(2)
    raise SystemExit(1 if any(summary[v] for v in NOT_AS_WRITTEN) else 0)
