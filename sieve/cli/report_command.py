"""`sieve report`: a scenario's field as a static site (sieve.report), every number linked to its quote."""

from __future__ import annotations

import click

from sieve.cli.common import db_option, fail, open_db, or_the_groups, viewer


@click.command("report")
@click.option("--scenario", "scenario_name", help="The scenario whose runs are published.")
@click.option(
    "-o",
    "--output",
    "folder",
    type=click.Path(file_okay=False),
    default="sieve-report",
    show_default=True,
    help="The site folder (made if missing). The pages an earlier report wrote there (listed in its "
    ".sieve-report.json) are replaced; nothing else in it is touched, and a file in the way that sieve did not "
    "write is refused.",
)
@click.option(
    "--blind",
    is_flag=True,
    help="Runs under codes, model and maker names masked, no date or cost; the key to the codes is written "
    "beside the folder (FOLDER.key.json), never in it.",
)
@click.option("--key", "key_path", type=click.Path(dir_okay=False), help="With --blind: where the key goes.")
@click.option("--humans", "group", flag_value="humans", help="People's cards only.")
@click.option("--judges", "group", flag_value="judges", help="The model judges' cards only.")
@click.option("--reviewer", callback=or_the_groups, help="One reviewer's cards only.")
@click.option(
    "--private-notes",
    is_flag=True,
    help="Leave every note out: reviewers' notes on scores, note and flag annotations, judges' summaries "
    "(an excerpt's caption, written to be published, stays).",
)
@click.option("--single-file", is_flag=True, help="One index.html holding the field and every run.")
@click.option(
    "--datasette-metadata",
    "metadata_path",
    type=click.Path(dir_okay=False),
    help="Also write a Datasette metadata file with canned queries (a scenario's field, a run's quotes, the "
    "excerpts), for `datasette DB -m FILE`; without --scenario, only this file.",
)
@db_option
def report_command(
    scenario_name: str,
    folder: str,
    blind: bool,
    key_path: str | None,
    group: str | None,
    reviewer: str | None,
    private_notes: bool,
    single_file: bool,
    metadata_path: str | None,
    db_path: str | None,
) -> None:
    """Write a static site of a scenario's field: index.html (results, each run in one sentence, filters,
    distributions, ratings, each model against the next, agreement, charts), excerpts.html, and a page per run
    whose every score links to its highlighted quote. Opens from file://, no server, no network, no script
    needed."""
    from pathlib import Path

    from sieve.report.site import Options, write

    if group and reviewer:
        fail("--humans or --judges, or --reviewer: one of them")
    if key_path and not blind:
        fail("--key goes with --blind")
    if not scenario_name and not metadata_path:
        fail("name the --scenario to publish (or ask for --datasette-metadata alone)")
    db = open_db(db_path, reads_only=True)
    viewer(db).refuse("a report names the models, and a blind one writes the key to its codes beside it")
    if metadata_path:
        import shlex

        from sieve.report import datasette
        from sieve.safe_text import dumps_json

        db_file = Path(db.path).resolve()  # the file itself, even when an old one is read through a copy
        Path(metadata_path).write_text(dumps_json(datasette.metadata(db, db_file)) + "\n", encoding="utf-8")
        click.echo(
            f"wrote {metadata_path}: open the record with  "
            f"datasette {shlex.quote(str(db_file))} -m {shlex.quote(metadata_path)}"
        )
        if not scenario_name:
            return
    options = Options(
        blind=blind,
        voters=group or "all",
        reviewer=reviewer,
        private_notes=private_notes,
        single_file=single_file,
    )
    done = write(db, scenario_name, Path(folder), options, Path(key_path) if key_path else None)
    click.echo(f"wrote {len(done.files)} pages for {done.runs} runs to {done.folder}")
    if done.key is not None:
        click.echo(f"the key to the codes: {done.key}")
