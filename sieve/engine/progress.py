"""Progress of long work on stderr: a bar per run or judging where stderr is a terminal, else lines as it goes.

A bar is redrawn in place, which only a terminal can do; written to a file or a pipe, rich would print
the bars once, when everything is over. There a line per piece of work says it ended, as it ends, and
work done in steps (a judging's parts, each a request that may take minutes on the embedded model)
says when it starts and as each step ends, so a log shows it moving.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

REFRESHES = 2  # drawings of the bars a second


def bars(console: Console | None = None) -> Progress:
    """One bar per piece of work, on stderr unless `console` says otherwise; labels are data, never markup."""
    console = console or Console(stderr=True)
    return Progress(
        TextColumn("{task.description}", markup=False),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[status]}", markup=False),
        TimeElapsedColumn(),
        console=console,
        transient=not console.is_terminal,  # the lines said it all: no heap of bars at the end
        # Each refresh draws every bar (14 ms of CPU for 38 on a slow machine): rich's 10 a second would take a
        # seventh of a core; the bars move a piece of work at a time and the clock a second at a time.
        refresh_per_second=REFRESHES,
    )


def moved(progress: Progress, task: Any, step: str, **fields: Any) -> None:
    """Update a piece of work's bar (`total`, `advance`, `status`); without a terminal, a line when its steps are
    known (`LABEL: 6 parts`) and as each ends (`LABEL: part 2 of 6: complete`)."""
    progress.update(task, **fields)
    if progress.console.is_terminal or not ({"total", "advance"} & fields.keys()):
        return
    found = next(t for t in progress.tasks if t.id == task)
    total = int(found.total or 0)
    if "total" in fields:
        line = f"{found.description}: {total} {step}{'' if total == 1 else 's'}"
    else:
        line = f"{found.description}: {step} {int(found.completed)} of {total}: {fields.get('status') or 'done'}"
    progress.console.print(line, markup=False, highlight=False, soft_wrap=True)


def finished(progress: Progress, task: Any, status: str, what: str) -> None:
    """A piece of work ended: its bar says how; without a terminal, a line says so: `judged 3 of 8: LABEL: complete`."""
    progress.update(task, status=status, ended=True)
    if progress.console.is_terminal:
        return
    tasks = progress.tasks
    done = sum(1 for t in tasks if t.fields.get("ended"))
    label = next(t.description for t in tasks if t.id == task)
    line = f"{what} {done} of {len(tasks)}: {label}: {status}"
    progress.console.print(line, markup=False, highlight=False, soft_wrap=True)  # one line, however long
