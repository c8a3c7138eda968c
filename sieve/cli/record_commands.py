"""What the record holds: `sieve runs` (the runs) and `sieve search` (what was said, across runs)."""

from __future__ import annotations

import click

from sieve.cli.common import db_option, emit_json, json_option, open_db, run_id, who
from sieve.paths import resolve_db_path
from sieve.tables import render


@click.command("runs")
@click.option("--scenario", help="Only runs of this scenario.")
@json_option
@db_option
def runs_command(scenario: str | None, as_json: bool, db_path: str | None) -> None:
    """The runs in the database (for a reviewer who reviews blind only: under their codes, in their order)."""
    from sieve import store
    from sieve.store.scoring import blind as blinding
    from sieve.store.scoring.labels import money

    db = open_db(db_path, reads_only=True)
    rows = store.list_runs(db, scenario)
    name, blind_only, _ = who(None)
    if blind_only:
        codes = blinding.codes(db, [r["id"] for r in rows], name)
        by_id = {r["id"]: r for r in rows}
        coded = [
            {
                "code": codes[i],
                "scenario": by_id[i]["scenario"],
                "status": by_id[i]["activity"],
                "replies": by_id[i]["replies"],
            }
            for i in blinding.shuffled(db, by_id, name)
        ]
        click.echo(f"{name} reviews blind only: runs under your codes, no model, time or cost", err=True)
        if as_json:
            emit_json(coded)
        else:
            click.echo(render(list(coded[0]) if coded else ["code"], [list(r.values()) for r in coded]))
        return
    from sieve.store.scoring import extreme
    from sieve.store.scoring.runview import RunView

    # What says one run is not enough: a refusal, a filter, an empty reply, ...
    flags = {r["id"]: extreme.flags(RunView.open(db, r["id"])) if r["status"] != "running" else [] for r in rows}
    if as_json:
        emit_json([{**r, "extreme": flags[r["id"]]} for r in rows])
        return
    if not rows:
        click.echo(f"No runs yet in {resolve_db_path(db_path)}.")
        return
    click.echo(
        render(
            ["id", "scenario", "model", "status", "started", "replies", "cost", "extreme"],
            [
                (
                    r["id"],
                    r["scenario"],
                    r["model"],
                    r["activity"],
                    r["started"][:19].replace("T", " "),
                    r["replies"],
                    money(r["cost"]),
                    extreme.flag_text(flags[r["id"]]),
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
    from sieve.store.scoring import blind as blinding
    from sieve.store.scoring.labels import ROLE_TITLES

    db = open_db(db_path, reads_only=True)
    hits = record.search(db, " ".join(words), scenario=scenario, run_id=run_id(db, run) if run else None, limit=limit)
    name, blind_only, _ = who(None)
    if blind_only:  # the runs under the reviewer's codes, no model, and names of models masked in what was said
        codes = blinding.codes(db, {h["run_id"] for h in hits}, name)
        hits = [
            {k: v for k, v in h.items() if k != "model"}
            | {"run_id": codes[h["run_id"]], "snippet": blinding.masker([h["model"]])(h["snippet"])}
            for h in hits
        ]
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
                    h["run_id"][-8:] if not blind_only else h["run_id"],
                    f"{h['idx']}" + ("" if h["chosen"] else " (alt)"),
                    ROLE_TITLES.get(h["role"], h["role"]),
                    h["scenario"],
                    h.get("model", "hidden"),
                    h["snippet"],
                )
                for h in hits
            ],
        )
    )
