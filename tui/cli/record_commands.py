"""What the record holds: `sieve runs` (the runs) and `sieve search` (what was said, across runs)."""

from __future__ import annotations

import click

from sieve.tables import render
from sieve.tui.cli.common import db_option, emit_json, json_option, open_db, run_id


@click.command("runs")
@click.option("--scenario", help="Only runs of this scenario.")
@json_option
@db_option
def runs_command(scenario: str | None, as_json: bool, db_path: str | None) -> None:
    """The runs in the database."""
    from sieve import store

    db = open_db(db_path, reads_only=True)
    rows = store.list_runs(db, scenario)
    if as_json:
        emit_json(rows)
        return
    if not rows:
        click.echo(f"No runs yet in {store.resolve_path(db_path)}.")
        return
    click.echo(
        render(
            ["id", "scenario", "model", "status", "started", "replies", "cost"],
            [
                (
                    r["id"],
                    r["scenario"],
                    r["model"],
                    r["status"],
                    r["started"][:19].replace("T", " "),
                    r["replies"],
                    "" if r["cost"] is None else f"${r['cost']:.4f}",
                )
                for r in rows
            ],
        )
    )


@click.command("search")
@click.argument("words", nargs=-1, required=True)
@click.option("--scenario", help="Only runs of this scenario.")
@click.option("--run", "run", help="Only this run (an id or a short id).")
@click.option("--limit", type=click.IntRange(1, 10_000), default=50, show_default=True)
@json_option
@db_option
def search_command(
    words: tuple[str, ...], scenario: str | None, run: str | None, limit: int, as_json: bool, db_path: str | None
) -> None:
    """Find what was said: every turn holding all the WORDS, across runs (the full-text index)."""
    from sieve.store.record import turns as record

    db = open_db(db_path, reads_only=True)
    hits = record.search(db, " ".join(words), scenario=scenario, run_id=run_id(db, run) if run else None, limit=limit)
    if as_json:
        emit_json(hits)
        return
    if not hits:
        click.echo("Nothing found.")
        return
    click.echo(
        render(
            ["run", "turn", "who", "scenario", "model", "text"],
            [
                (
                    h["run_id"][-8:],
                    f"{h['idx']}" + ("" if h["chosen"] else " (alt)"),
                    {"user": "player", "assistant": "model"}.get(h["role"], h["role"]),
                    h["scenario"],
                    h["model"],
                    h["snippet"],
                )
                for h in hits
            ],
        )
    )
