"""What the CLI's commands share: options, opening the database, naming runs, the endpoints.

Loaded by every command, `--help` included: it imports nothing heavy (no database, no
HTTP, no Textual) until a command asks for it.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from typing import Any, NoReturn

import click
from click.core import ParameterSource

from sieve.errors import SieveUsageError
from sieve.paths import DB_ENV, resolve_db_path
from sieve.safe_text import dumps_json
from sieve.scenarios.settings import SETTINGS, Setting


def _same(name: str, a: Any, b: Any) -> bool:
    if name == "db_path":
        return os.path.realpath(a) == os.path.realpath(b)
    return a == b


def or_the_groups(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """A command's --db or --reviewer, or the one given to `sieve` before the command; both given and different: refused.

    `sieve --db F CMD` and `sieve CMD --db F` do the same. Written on the command line
    before the command, it wins over $SIEVE_DB read by the command.
    """
    root = ctx.find_root()
    name = param.name or ""
    if root is ctx or root.get_parameter_source(name) is not ParameterSource.COMMANDLINE:
        return value
    given = root.params.get(name)
    if ctx.get_parameter_source(name) is ParameterSource.COMMANDLINE and value != given:
        if not _same(name, value, given):
            flag = param.opts[0] if param.opts else name
            fail(f"{flag} given twice, as {given!r} before the command and {value!r} after it: give it once")
    return given


db_option = click.option(
    "--db",
    "db_path",
    envvar=DB_ENV,
    type=click.Path(dir_okay=False),
    callback=or_the_groups,
    help="The SQLite file (default: $SIEVE_DB, else the user data directory); before or after the command.",
)
json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
reviewer_option = click.option(
    "--reviewer",
    callback=or_the_groups,
    help="Your name on the annotations (default: the config's reviewer, else your login); before or after the command.",
)
screenshots_option = click.option(
    "--screenshots",
    "screenshots",
    type=click.Path(file_okay=False),
    callback=or_the_groups,
    help="Where the palette's Screenshot saves (default: screenshots/ in the user data directory).",
)
endpoint_option = click.option(
    "--endpoint", help="A URL or an endpoint name from the config (default: the embedded local model)."
)


def _click_type(setting: Setting) -> click.ParamType:
    if setting.choices:
        return click.Choice(setting.choices)
    if setting.kind is int:  # its bounds are whole numbers
        low, high = setting.minimum, setting.maximum
        return click.IntRange(None if low is None else int(low), None if high is None else int(high))
    if setting.kind is float:
        return click.FloatRange(setting.minimum, setting.maximum, min_open=setting.above_minimum)
    return click.STRING


def settings_options(command: Callable) -> Callable:
    """One option per request setting (--temperature, --max-tokens, ...), typed and ranged as defined once."""
    for setting in reversed(SETTINGS):
        command = click.option(
            f"--{setting.name.replace('_', '-')}", setting.name, type=_click_type(setting), help=setting.help
        )(command)
    return command


def given_settings(options: dict[str, Any]) -> dict[str, Any]:
    """The settings named on the command line, out of a command's keyword arguments."""
    return {s.name: options.pop(s.name, None) for s in SETTINGS}


def fail(message: str) -> NoReturn:
    """Stop the command with a message for the user (exit status 2)."""
    raise SieveUsageError(message)


def load_scenario(name_or_path: str):
    from sieve import scenarios

    return scenarios.load(name_or_path)


def open_db(db_path: str | None, *, reads_only: bool = False, read_only_ok: bool = False):
    """The database. `reads_only`: the command never writes, so a file that cannot be written is read as it is,
    and a file of an older sieve is read through an upgraded temporary copy, left as it is. `read_only_ok`: the
    command writes when it can (the TUI), and opens a file that cannot be written read-only. Otherwise
    ReadOnlyDatabase if the file can only be read; a file of an older sieve is upgraded (a copy kept beside it)."""
    from sieve import store

    db = store.open_db(db_path, upgrade_in_place=not reads_only)
    if not (reads_only or read_only_ok) and store.is_read_only(db):
        raise store.ReadOnlyDatabase(
            f"{resolve_db_path(db_path)}: the database is read-only and this command writes to it "
            "(runs, results, export, search and review read it as it is)"
        )
    return db


def who(reviewer: str | None) -> tuple[str, bool, Any]:
    """The reviewer (--reviewer, else the config's, else the login), whether they review blind only, and the config."""
    import getpass

    from sieve.engine.config import load_config

    config = load_config(create=False)
    name = reviewer or config.reviewer or getpass.getuser()
    return name, config.blind_for(name), config


def viewer(db, reviewer: str | None = None):
    """Who is looking (sieve.cli.viewer): the person at the command line (`reviewer`, else the config's), and
    whether they review blind only. Kept for the command, so that its errors are told in the same words."""
    from sieve.cli.viewer import Viewer

    name, blind, config = who(reviewer)
    found = Viewer(db, name, blind, config.path)
    ctx = click.get_current_context(silent=True)
    if ctx is not None:
        ctx.find_root().meta[VIEWER] = found
    return found


VIEWER = "sieve.viewer"


def current_viewer():
    """The viewer a command made, if any (for its error messages)."""
    ctx = click.get_current_context(silent=True)
    return None if ctx is None else ctx.find_root().meta.get(VIEWER)


def run_id(db, given: str, reviewer: str | None = None) -> str:
    """A run's full id from what the user typed: the id, or a unique prefix or suffix (Home's short id); for a
    reviewer who reviews blind only, their code for it (and errors that name no run)."""
    known = current_viewer()
    if known is None or known.db is not db or (reviewer is not None and known.name != reviewer):
        known = viewer(db, reviewer)
    return str(known.run_id(given))


def open_run(db, given: str, *, blind: bool = False):
    """The run's RunView (sieve.store.scoring.runview), named as the user typed it; blind for a blind reviewer."""
    from sieve.store.scoring.runview import RunView

    found = run_id(db, given)
    looking = current_viewer()
    if looking is not None and looking.blind:
        return RunView.open(db, found, blind=True, viewer=looking.name)
    return RunView.open(db, found, blind=blind)


def run_async(coroutine):
    """asyncio.run, with asyncio loaded only by the commands that stream (not by `--help`)."""
    import asyncio

    return asyncio.run(coroutine)


def emit_json(data: Any) -> None:
    click.echo(dumps_json(data))


@contextlib.contextmanager
def endpoint_pool() -> Iterator:
    """The gateways of this command; the embedded model, if one was started, stops with it."""
    from sieve.engine.endpoints import Endpoints

    pool = Endpoints(announce=lambda text: click.echo(text, err=True))
    try:
        yield pool
    finally:
        pool.stop()
