"""The `sieve` command line (click). Never imports Textual at module level.

Every command's failures are SieveErrors; the group turns them into one line on
stderr and the error's exit status, here and nowhere else.
"""

from __future__ import annotations

import sqlite3

import click

from sieve.cli.common import db_option, fail, reviewer_option, screenshots_option
from sieve.cli.compare_commands import compare_command
from sieve.cli.evidence_commands import export_command, import_command, verify_command
from sieve.cli.judge_commands import judge_command
from sieve.cli.record_commands import runs_command, search_command
from sieve.cli.report_command import report_command
from sieve.cli.results_command import results_command
from sieve.cli.run_command import run_command
from sieve.cli.scenario_commands import scenarios_group
from sieve.cli.suggest_commands import suggest_command
from sieve.cli.tui_commands import pair_command, play_command, review_command, run_tui
from sieve.errors import SieveError
from sieve.safe_text import visible


def _literal(exc: click.ClickException) -> click.ClickException:
    # click (from 8.5) declares `message` final; a new exception would lose the context and the exit code this
    # one has. Before 8.5 the ignore is unused, hence `unused-ignore`.
    exc.message = visible(exc.message)  # type: ignore[misc, unused-ignore]
    return exc


def _told(message: str) -> str:
    """An error as the person at the command line may read it: for a blind reviewer, in codes (sieve.cli.viewer)."""
    from sieve.cli.common import current_viewer

    looking = current_viewer()
    return looking.scrub(message) if looking is not None else message


class SieveGroup(click.Group):
    """A click group that reports sieve's errors as a line and an exit status, never as a traceback."""

    def make_context(self, info_name, args, parent=None, **extra):
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.ClickException as exc:
            raise _literal(exc) from None

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except click.ClickException as exc:
            # click's own messages quote what was typed ("no such option: ..."): shown literally too.
            raise _literal(exc) from None
        except SieveError as exc:
            click.echo(visible(_told(str(exc))), err=True)
            ctx.exit(exc.exit_status)
        except sqlite3.OperationalError as exc:  # the disk is full, the file went read-only underneath us
            click.echo(visible(f"the database: {exc}"), err=True)
            ctx.exit(1)


@click.group(cls=SieveGroup, invoke_without_command=True)
@click.version_option(package_name="sieve")
@reviewer_option
@db_option
@screenshots_option
@click.pass_context
def main(ctx: click.Context, reviewer: str | None, db_path: str | None, screenshots: str | None) -> None:
    """sieve: play roleplay benchmarks against language models and score them.

    Without a command, opens the Home screen: the runs in the database.
    """
    if ctx.invoked_subcommand is None:
        run_tui(db_path, reviewer, None, screenshots=screenshots)
    elif screenshots and ctx.invoked_subcommand not in TUI_COMMANDS:
        fail(
            f"--screenshots is for the commands that open the TUI ({', '.join(TUI_COMMANDS)}), not for {ctx.invoked_subcommand}"
        )


TUI_COMMANDS = ("play", "review", "pair")

for command in (
    play_command,
    review_command,
    pair_command,
    run_command,
    runs_command,
    search_command,
    scenarios_group,
    export_command,
    import_command,
    results_command,
    compare_command,
    verify_command,
    suggest_command,
    judge_command,
    report_command,
):
    main.add_command(command)


if __name__ == "__main__":
    main()
