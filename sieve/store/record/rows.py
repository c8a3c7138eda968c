"""The rows of the runs, turns and annotations tables, as the record hands them out.

Column for column what migrations.py makes (a row is read with `SELECT *`), so mypy knows each
field's type where a row is passed around. The one difference from the stored row: a run's
`settings` is parsed from its JSON.
"""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict


class Run(TypedDict):
    id: str
    scenario_sha256: str
    scenario: str
    model: str
    endpoint: str
    settings: dict[str, Any]  # stored as JSON, handed out parsed
    status: str  # migrations.RUN_STATUSES
    origin: str  # script, live, import
    parent_run: str | None
    parent_turn: int | None
    repeat: int
    left_script_at: int | None
    started: str
    ended: str | None
    cost: float | None
    prompt_tokens: int | None
    completion_tokens: int | None
    reasoning_tokens: int | None
    error: str | None
    # host:pid of the process playing it: a list of runs says what it means instead (ListedRun.activity)
    owner: NotRequired[str | None]


class ListedRun(Run):
    """A run as `list_runs` gives it: with how many replies it holds and what it is doing."""

    replies: int
    activity: str


class Turn(TypedDict):
    id: str
    run_id: str
    idx: int
    alt: int
    chosen: int  # 0 or 1
    role: str  # system, user, assistant
    origin: str  # setup, script, filler, live, reply, player
    step_id: str | None
    step_repeat: int | None
    text: str
    status: str  # migrations.TURN_STATUSES
    finish_reason: str | None
    native_finish_reason: str | None
    provider: str | None
    prompt_tokens: int | None
    completion_tokens: int | None
    reasoning_tokens: int | None
    token_source: str | None
    cost: float | None
    ttft: float | None
    duration: float | None
    error: str | None
    attempts: int
    created: str
    updated: str
    speaker: str | None
    played_by: str | None
    played_settings: str | None  # JSON


class Annotation(TypedDict):
    id: str
    run_id: str
    turn_id: str | None
    reviewer: str
    rubric: str | None
    item: str
    kind: str  # annotations.KINDS
    score: float | None
    score_high: float | None
    value: str | None
    quote: str | None
    quote_turn_id: str | None
    quote_start: int | None
    quote_end: int | None
    verification: str | None  # one of migrations.QUOTE_VERDICTS
    similarity: float | None
    note: str | None
    blind: int  # 0 or 1
    supersedes: str | None
    created: str
    removed: str | None
    confidence: str | None  # 'low' or None
    step_id: str | None
    seconds: float | None
    source: str | None
    trial: str | None
    off_step: int  # 1: its quote (or its turn) stands outside the steps its item is judged on
