"""What the record holds: `sieve runs` (the runs) and `sieve search` (what was said, across runs)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import click

from sieve.cli.common import db_option, emit_json, fail, json_option, open_db, reviewer_option, run_id, who
from sieve.paths import resolve_db_path
from sieve.tables import counted, render


@click.command("runs")
@click.option("--scenario", help="Only runs of this scenario.")
@click.option("--archived", "list_archived", is_flag=True, help="List the archived runs instead.")
@click.option(
    "--archive",
    "to_archive",
    metavar="RUN",
    multiple=True,
    help="Put a run out of sight: kept whole, left out of lists, results, the field and searches (--unarchive "
    "brings it back).",
)
@click.option("--unarchive", "to_unarchive", metavar="RUN", multiple=True, help="Bring an archived run back.")
@click.option(
    "--delete",
    "to_delete",
    metavar="RUN",
    multiple=True,
    help="Remove a run, its turns and everything said about it (annotations, suggestions, judgings), once you confirm.",
)
@click.option("--force", is_flag=True, help="Archive or delete a run that other reviewers (or judges) have scored too.")
@click.option("-y", "--yes", is_flag=True, help="Delete without asking.")
@reviewer_option
@json_option
@db_option
def runs_command(
    scenario: str | None,
    list_archived: bool,
    to_archive: tuple[str, ...],
    to_unarchive: tuple[str, ...],
    to_delete: tuple[str, ...],
    force: bool,
    yes: bool,
    reviewer: str | None,
    as_json: bool,
    db_path: str | None,
) -> None:
    """The runs in the database (for a reviewer who reviews blind only: under their codes, in their order).

    With --archive, --unarchive or --delete: keep the list tidy. A run that other reviewers
    have scored is theirs too: archiving or deleting it is refused unless --force.
    """
    from sieve import store
    from sieve.store.scoring import blind as blinding
    from sieve.store.scoring.labels import money

    if to_archive or to_unarchive or to_delete:
        tidy(db_path, to_archive, to_unarchive, to_delete, force=force, yes=yes, reviewer=reviewer, as_json=as_json)
        return
    db = open_db(db_path, reads_only=True)
    rows = store.list_runs(db, scenario, archived=list_archived)
    name, blind_only, _ = who(None)
    if blind_only:
        # As blind Home lists them: the code, the scenario, and the reviewer's own totals and progress; nothing
        # else that tells one run from another (a status, a reply count, a flag).
        from sieve.store.scoring import field
        from sieve.store.scoring.runview import RunView

        codes = blinding.codes(db, [r["id"] for r in rows], name)
        by_id = {r["id"]: r for r in rows}
        standing = field.standings(db, name, [RunView(db, r, blind=True, viewer=name) for r in rows])
        coded = [
            {
                "code": codes[i],
                "scenario": by_id[i]["scenario"],
                "totals": standing[i].totals,
                "progress": standing[i].progress,
            }
            for i in blinding.shuffled(db, by_id, name)
        ]
        click.echo(f"{name} reviews blind only: runs under your codes, with your own progress", err=True)
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
        hidden = 0 if list_archived else len(store.list_runs(db, scenario, archived=True))
        if list_archived:
            click.echo(f"No archived runs in {resolve_db_path(db_path)}.")
        elif hidden:
            click.echo(
                f"No runs in view in {resolve_db_path(db_path)}: {counted(hidden, 'run')} archived "
                "(sieve runs --archived lists them, --unarchive RUN brings one back)."
            )
        else:
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


def tidy(
    db_path: str | None,
    to_archive: tuple[str, ...],
    to_unarchive: tuple[str, ...],
    to_delete: tuple[str, ...],
    *,
    force: bool,
    yes: bool,
    reviewer: str | None,
    as_json: bool,
) -> None:
    """`sieve runs --archive / --unarchive / --delete`: each run named, refused or done, said in a line."""
    from sieve.store.record import archive

    if sum(bool(x) for x in (to_archive, to_unarchive, to_delete)) > 1:
        fail("give one of --archive, --unarchive and --delete at a time")
    db = open_db(db_path)
    name, _, _ = who(reviewer)
    ids = [run_id(db, r) for r in (*to_archive, *to_unarchive, *to_delete)]
    if not to_unarchive and not force:
        for run in ids:
            others = archive.other_reviewers(db, run, name)
            if others:
                fail(
                    f"run {run} was scored by {', '.join(others)} too: it is theirs as well as yours ({name}); "
                    "--force to go on"
                )
    done: list[dict[str, Any]] = []
    for run in ids:
        if to_archive:
            changed = archive.archive(db, run, name)
            said = (
                "archived: out of lists and results, kept (--unarchive brings it back)" if changed else "was archived"
            )
        elif to_unarchive:
            changed = archive.unarchive(db, run)
            said = "back in lists and results" if changed else "was not archived"
        else:
            goes = archive.what_goes(db, run)
            if not yes:
                listed = ", ".join(counted(n, what.removesuffix("s"), what) for what, n in goes.items() if n)
                click.confirm(
                    f"Delete run {run} and {listed or 'nothing else'}? This cannot be undone", abort=True, err=True
                )
            archive.delete_run(db, run)
            gone = ", ".join(counted(n, what.removesuffix("s"), what) for what, n in goes.items() if n)
            changed, said = True, "deleted, with " + (gone or "nothing")
        done.append({"run": run, "changed": changed, "said": said})
        if not as_json:
            click.echo(f"run {run}: {said}")
    if as_json:
        emit_json(done)


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
    """Find what was said: every turn holding all the WORDS, in any order, across runs (archived runs left out).

    \b
    Case and diacritics do not matter: klic finds klíč.
    A word is found inside longer words too: minc finds minci and mince.
    A word of five letters or more finds its other forms: mince finds minci, mincí, mincemi
      (a common ending is dropped: Czech case endings, English -s, -ed, -ing).
    minc* finds the words that begin with minc.
    A word of one or two letters is found only as a whole word.
    "words in quotes" are found together, in that order.

    Turns where the words stand side by side come first, then the newest runs. The snippet
    shows the first hits in [brackets]. A reviewer who reviews blind only searches the text
    as they are shown it, names masked, and sees runs by their codes.
    """
    from sieve.store.scoring import blind as blinding
    from sieve.store.scoring.labels import ROLE_TITLES
    from sieve.store.scoring.search import search

    db = open_db(db_path, reads_only=True)
    name, blind_only, _ = who(None)
    maskers: dict[str, Callable[[str], str]] = {}

    def masked(run: Mapping[str, Any]) -> Callable[[str], str]:
        # What a blind reviewer is shown of a run's text, so what they search: a masked name is not found.
        return maskers.setdefault(run["model"], blinding.masker([run["model"]]))

    hits = search(
        db,
        " ".join(words),
        scenario=scenario,
        run_id=run_id(db, run) if run else None,
        limit=limit,
        shown=masked if blind_only else None,
    )
    if blind_only:  # the runs under the reviewer's codes; no model, and no turn id (a ULID tells when it was played)
        codes = blinding.codes(db, {h["run_id"] for h in hits}, name)
        hits = [
            {k: v for k, v in h.items() if k not in ("model", "turn_id")} | {"run_id": codes[h["run_id"]]} for h in hits
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
