"""What the CLI's commands share: options, opening the database, failing clearly."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

import scenarios
import store
from scenarios import Scenario, ScenarioError

from .safe_text import visible

EXIT_BAD_INPUT = 2

db_option = click.option(
    "--db",
    "db_path",
    envvar=store.db.ENV_VAR,
    type=click.Path(dir_okay=False),
    help="The SQLite file (default: $SIEVE_DB, else the user data directory).",
)
json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")


def fail(message: str, status: int = EXIT_BAD_INPUT) -> None:
    click.echo(visible(message), err=True)
    sys.exit(status)


def load_scenario(name_or_path: str) -> Scenario:
    try:
        return scenarios.load(name_or_path)
    except ScenarioError as exc:
        fail(str(exc))
        raise  # unreachable: fail() exits


def open_db(db_path: str | None):
    try:
        return store.open_db(db_path)
    except store.DatabaseError as exc:
        fail(str(exc), status=1)


def emit_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False))


reviewer_option = click.option("--reviewer", help="Your name on the annotations (default: the config's reviewer, else your login).")
