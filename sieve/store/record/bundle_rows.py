"""What a valid row of each table is, as the app writes it: the rules a bundle's rows are checked against.

A bundle is data from outside. Each of its rows must be a row sieve itself could
have written: ids of the right shape, references that resolve (to the bundle or to
the database it goes into), positions that are not negative, one chosen reply per
position, a scenario snapshot that is a valid scenario, numbers that are finite.
Each rule names the row and the column it found wrong.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable
from datetime import datetime
from typing import Any

from sqlite_utils import Database

from sieve.errors import SieveInputError
from sieve.scenarios import Scenario, ScenarioError, load_text
from sieve.store.record.annotations import KINDS
from sieve.store.record.migrations import JUDGING_STATUSES, QUOTE_VERDICTS, RUN_STATUSES, TURN_STATUSES

INT64 = 2**63 - 1
ULID = re.compile(r"^[0-9A-HJKMNP-TV-Z]{26}$")
SHA256 = re.compile(r"^[0-9a-f]{64}$")
# The origins each role is written with (a chat's system message is live, as the chat is).
ROLES = {
    "system": ("setup", "live"),
    "user": ("setup", "script", "filler", "live", "player"),
    "assistant": ("reply",),
}
ANNOTATION_KINDS = KINDS  # as annotations.add takes them


class RowError(SieveInputError):
    """A row of a bundle that sieve would never have written."""


class Rows:
    """The bundle's rows, checked together with what the database already holds."""

    def __init__(self, db: Database, path: str, tables: dict[str, list[dict[str, Any]]]):
        self.db = db
        self.path = path
        self.tables = tables
        self.by_id = {t: {r["id"]: r for r in rows if "id" in r} for t, rows in tables.items()}
        self.scenarios: dict[str, Scenario] = {}

    def fail(self, table: str, i: int, column: str | None, message: str) -> RowError:
        return RowError(self.path, message, key=f"{table}[{i}]" + (f".{column}" if column else ""))

    # -- what a value is ---------------------------------------------------------

    def values(self, table: str, i: int, row: dict[str, Any]) -> None:
        """Every value storable as it means: text as UTF-8 holds it, 64-bit integers, finite numbers."""
        for column, value in row.items():
            if isinstance(value, str):
                try:
                    value.encode("utf-8")
                except UnicodeEncodeError:
                    raise self.fail(table, i, column, "holds a lone surrogate (not text UTF-8 can hold)") from None
            elif isinstance(value, bool):
                continue
            elif isinstance(value, int) and not -INT64 - 1 <= value <= INT64:
                raise self.fail(table, i, column, "is too large (integers are at most 64 bits)")
            elif isinstance(value, float) and not math.isfinite(value):
                raise self.fail(table, i, column, "must be a finite number")
            elif isinstance(value, dict):
                try:
                    json.dumps(value, allow_nan=False)
                except ValueError:
                    raise self.fail(table, i, column, "holds a number that is not finite") from None

    def exists(self, table: str, row_id: Any) -> dict[str, Any] | None:
        """A row by id, from the bundle or else from the database."""
        if not isinstance(row_id, str):
            return None
        if row_id in self.by_id.get(table, {}):
            return self.by_id[table][row_id]
        cursor = self.db.execute(f"SELECT * FROM {table} WHERE id = ?", [row_id])
        found = cursor.fetchone()
        return dict(zip([d[0] for d in cursor.description], found)) if found else None

    def scenario_of(self, run: dict[str, Any]) -> Scenario | None:
        sha = run.get("scenario_sha256")
        if not isinstance(sha, str):
            return None
        if sha in self.scenarios:
            return self.scenarios[sha]
        row = self.db.execute("SELECT toml FROM scenarios WHERE sha256 = ?", [sha]).fetchone()
        if row is None:
            return None
        try:
            self.scenarios[sha] = load_text(row[0], f"<snapshot {sha[:12]}>")
        except ScenarioError:
            return None
        return self.scenarios[sha]

    # -- the rules, table by table ---------------------------------------------------

    def check(self) -> None:
        rules: dict[str, Callable[[int, dict[str, Any]], None]] = {
            "scenarios": self.scenario,
            "runs": self.run,
            "turns": self.turn,
            "annotations": self.annotation,
            "annotation_history": self.history,
            "pairs": self.pair,
            "judgments": self.judgment,
            "suggestions": self.suggestion,
            "suggestion_decisions": self.decision,
            "judgings": self.judging,
            "catch_trials": self.catch_trial,
        }
        for table, rule in rules.items():
            seen: dict[Any, int] = {}
            for i, row in enumerate(self.tables.get(table, [])):
                self.values(table, i, row)
                key = _key(table, row)
                if key in seen:
                    raise self.fail(table, i, None, f"the same row as {table}[{seen[key]}] (the bundle holds it twice)")
                seen[key] = i
                rule(i, row)
        self.ancestry()
        self.one_chosen_reply()

    def ident(self, table: str, i: int, row: dict[str, Any], column: str = "id", required: bool = True) -> None:
        value = row.get(column)
        if value is None and not required:
            return
        if not isinstance(value, str) or not ULID.match(value):
            raise self.fail(table, i, column, f"{value!r} is not an id sieve writes (26 characters, a ULID)")

    def when(self, table: str, i: int, row: dict[str, Any], column: str, required: bool = True) -> None:
        value = row.get(column)
        if value is None and not required:
            return
        try:
            if not isinstance(value, str):
                raise TypeError(value)
            datetime.fromisoformat(value)
        except (TypeError, ValueError):
            raise self.fail(table, i, column, f"{value!r} is not a timestamp (ISO 8601)") from None

    def at_least(self, table: str, i: int, row: dict[str, Any], columns: tuple[str, ...], low: float = 0) -> None:
        for column in columns:
            value = row.get(column)
            if value is not None and value < low:
                raise self.fail(table, i, column, f"must be {low:g} or more, found {value}")

    def one_of(self, table: str, i: int, row: dict[str, Any], column: str, allowed: tuple[object, ...]) -> None:
        if row.get(column) not in allowed:
            shown = ", ".join(str(a) for a in allowed)
            raise self.fail(table, i, column, f"{row.get(column)!r} is not one of: {shown}")

    def text(self, table: str, i: int, row: dict[str, Any], column: str) -> None:
        if not isinstance(row.get(column), str) or not row[column].strip():
            raise self.fail(table, i, column, "must not be empty")

    def scenario(self, i: int, row: dict[str, Any]) -> None:
        if not SHA256.match(row.get("sha256") or ""):
            raise self.fail("scenarios", i, "sha256", "is not a sha256 (64 hexadecimal digits)")
        if hashlib.sha256(row["toml"].encode("utf-8")).hexdigest() != row["sha256"]:
            raise self.fail("scenarios", i, None, "the scenario text does not match its sha256")
        try:
            scenario = load_text(row["toml"], f"<bundle scenarios[{i}]>")
        except ScenarioError as exc:
            raise self.fail("scenarios", i, "toml", f"the snapshot is not a valid scenario: {exc}") from None
        for column, value in (("name", scenario.name), ("version", scenario.version), ("title", scenario.title)):
            if row[column] != value:
                raise self.fail("scenarios", i, column, f"{row[column]!r} is not the snapshot's own {column}")
        self.when("scenarios", i, row, "created")
        self.scenarios[row["sha256"]] = scenario

    def run(self, i: int, row: dict[str, Any]) -> None:
        self.ident("runs", i, row)
        scenario = self.scenario_of(row)
        if scenario is None:
            raise self.fail("runs", i, "scenario_sha256", "names a scenario snapshot that is neither here nor stored")
        if row["scenario"] != scenario.name:
            raise self.fail("runs", i, "scenario", f"{row['scenario']!r} is not the name of its scenario snapshot")
        self.one_of("runs", i, row, "status", RUN_STATUSES)
        self.one_of("runs", i, row, "origin", ("script", "live", "import"))
        if row.get("parent_run") is not None:
            self.ident("runs", i, row, "parent_run")
            if row["parent_run"] == row["id"]:
                raise self.fail("runs", i, "parent_run", "a run cannot be its own parent")
            if self.exists("runs", row["parent_run"]) is None:
                raise self.fail("runs", i, "parent_run", "names a run that is neither here nor stored")
            if row.get("parent_turn") is None:
                raise self.fail("runs", i, "parent_turn", "a branch needs the turn it branched at")
        elif row.get("parent_turn") is not None:
            raise self.fail("runs", i, "parent_turn", "only a branch has a parent turn")
        self.at_least("runs", i, row, ("parent_turn", "repeat", "left_script_at", "cost"))
        self.at_least("runs", i, row, ("prompt_tokens", "completion_tokens", "reasoning_tokens"))
        self.when("runs", i, row, "started")
        self.when("runs", i, row, "ended", required=False)

    def turn(self, i: int, row: dict[str, Any]) -> None:
        self.ident("turns", i, row)
        run = self.exists("runs", row["run_id"])
        if run is None:
            raise self.fail("turns", i, "run_id", "names a run that is neither here nor stored")
        self.at_least("turns", i, row, ("idx", "alt", "step_repeat", "cost", "ttft", "duration"))
        self.at_least("turns", i, row, ("prompt_tokens", "completion_tokens", "reasoning_tokens"))
        self.at_least("turns", i, row, ("attempts",), 1)
        self.one_of("turns", i, row, "chosen", (0, 1))
        self.one_of("turns", i, row, "role", tuple(ROLES))
        self.one_of("turns", i, row, "origin", ROLES[row["role"]])
        self.one_of("turns", i, row, "status", TURN_STATUSES)
        scenario = self.scenario_of(run)
        if row.get("step_id") is not None and scenario is not None:
            if row["step_id"] not in {s.id for s in scenario.steps}:
                raise self.fail("turns", i, "step_id", f"{row['step_id']!r} is not a step of the run's scenario")
        self.when("turns", i, row, "created")
        self.when("turns", i, row, "updated")

    def annotation(self, i: int, row: dict[str, Any]) -> None:
        self.ident("annotations", i, row)
        if self.exists("runs", row["run_id"]) is None:
            raise self.fail("annotations", i, "run_id", "names a run that is neither here nor stored")
        for column in ("turn_id", "quote_turn_id"):
            if row.get(column) is None:
                continue
            turn = self.exists("turns", row[column])
            if turn is None or turn["run_id"] != row["run_id"]:
                raise self.fail("annotations", i, column, "names a turn that is not one of the run's")
        self.text("annotations", i, row, "reviewer")
        self.text("annotations", i, row, "item")
        self.one_of("annotations", i, row, "kind", ANNOTATION_KINDS)
        self.one_of("annotations", i, row, "verification", (None, *QUOTE_VERDICTS))
        self.one_of("annotations", i, row, "blind", (0, 1))
        self.one_of("annotations", i, row, "confidence", (None, "low"))
        self.one_of("annotations", i, row, "off_step", (0, 1))
        if row.get("score_high") is not None and (row.get("score") is None or row["score_high"] <= row["score"]):
            raise self.fail("annotations", i, "score_high", "an undecided pair's high score must be above its low one")
        if row.get("similarity") is not None and not 0 <= row["similarity"] <= 1:
            raise self.fail("annotations", i, "similarity", "must be between 0 and 1")
        self.at_least("annotations", i, row, ("seconds",))
        start: Any = row.get("quote_start")
        end: Any = row.get("quote_end")
        if (start is None) != (end is None) or (start is not None and row.get("quote_turn_id") is None):
            raise self.fail("annotations", i, "quote_start", "a quote's place needs its turn, start and end")
        if start is not None:
            quoted = self.exists("turns", row["quote_turn_id"])
            assert quoted is not None  # the turn columns were checked above
            length = len(quoted["text"])
            if not 0 <= start <= end <= length:
                raise self.fail(
                    "annotations", i, "quote_end", f"{start}..{end} is outside the turn's {length} characters"
                )
        if row.get("supersedes") is not None and self.exists("annotations", row["supersedes"]) is None:
            raise self.fail("annotations", i, "supersedes", "names an annotation that is neither here nor stored")
        self.when("annotations", i, row, "created")
        self.when("annotations", i, row, "removed", required=False)
        if row.get("trial") is not None:
            trial = self.exists("catch_trials", row["trial"])
            if trial is None or (trial["run_id"], trial["reviewer"]) != (row["run_id"], row["reviewer"]):
                raise self.fail("annotations", i, "trial", "names no catch trial of this run by this reviewer")

    def history(self, i: int, row: dict[str, Any]) -> None:
        annotation = self.exists("annotations", row["annotation_id"])
        if annotation is None:
            raise self.fail(
                "annotation_history", i, "annotation_id", "names an annotation that is neither here nor stored"
            )
        if row["run_id"] != annotation["run_id"]:
            raise self.fail("annotation_history", i, "run_id", "is not the run of its annotation")
        self.text("annotation_history", i, row, "reviewer")
        self.text("annotation_history", i, row, "grp")
        self.one_of("annotation_history", i, row, "action", ("add", "remove"))
        self.one_of("annotation_history", i, row, "undone", (0, 1, 2))
        self.when("annotation_history", i, row, "at")

    def pair(self, i: int, row: dict[str, Any]) -> None:
        self.ident("pairs", i, row)
        self.text("pairs", i, row, "queue")
        self.at_least("pairs", i, row, ("position",))
        self.two_runs("pairs", i, row)
        self.when("pairs", i, row, "created")
        if row.get("catch_of") is not None:
            first = self.exists("pairs", row["catch_of"])
            if first is None or {first["run_a"], first["run_b"]} != {row["run_a"], row["run_b"]}:
                raise self.fail("pairs", i, "catch_of", "names no pair of the same two runs")

    def catch_trial(self, i: int, row: dict[str, Any]) -> None:
        self.ident("catch_trials", i, row)
        self.text("catch_trials", i, row, "reviewer")
        if self.exists("runs", row["run_id"]) is None:
            raise self.fail("catch_trials", i, "run_id", "names a run that is neither here nor stored")
        self.when("catch_trials", i, row, "created")

    def judgment(self, i: int, row: dict[str, Any]) -> None:
        self.ident("judgments", i, row)
        self.two_runs("judgments", i, row)
        self.text("judgments", i, row, "criterion")
        self.text("judgments", i, row, "reviewer")
        self.one_of("judgments", i, row, "winner", ("A", "B", "tie"))
        self.one_of("judgments", i, row, "a_shown_first", (0, 1))
        self.one_of("judgments", i, row, "blind", (0, 1))
        if row.get("pair_id") is not None:
            pair = self.exists("pairs", row["pair_id"])
            if pair is None:
                raise self.fail("judgments", i, "pair_id", "names a pair that is neither here nor stored")
            if (pair["run_a"], pair["run_b"]) != (row["run_a"], row["run_b"]):
                raise self.fail("judgments", i, "pair_id", "its pair is of other runs")
        self.when("judgments", i, row, "created")

    def suggestion(self, i: int, row: dict[str, Any]) -> None:
        self.ident("suggestions", i, row)
        if self.exists("runs", row["run_id"]) is None:
            raise self.fail("suggestions", i, "run_id", "names a run that is neither here nor stored")
        if row.get("turn_id") is not None and self.exists("turns", row["turn_id"]) is None:
            raise self.fail("suggestions", i, "turn_id", "names a turn that is neither here nor stored")
        self.one_of("suggestions", i, row, "kind", ("count", "verdict", "note", "flag", "score", "probe"))
        self.one_of("suggestions", i, row, "source", ("detector", "judge"))
        for column in ("item", "reason", "source_name", "source_version", "fingerprint"):
            self.text("suggestions", i, row, column)
        try:
            spans = json.loads(row["spans"])
        except (TypeError, ValueError):
            raise self.fail("suggestions", i, "spans", "is not a JSON list of spans") from None
        if not isinstance(spans, list) or not all(isinstance(s, dict) for s in spans):
            raise self.fail("suggestions", i, "spans", "is not a JSON list of spans")
        for span in spans:
            start, end = span.get("start"), span.get("end")
            if not (isinstance(start, int) and isinstance(end, int) and 0 <= start <= end):
                raise self.fail("suggestions", i, "spans", "a span's start and end are not offsets (0 <= start <= end)")
        confidence = row.get("confidence")
        if confidence is not None and not 0 <= confidence <= 1:
            raise self.fail("suggestions", i, "confidence", "must be between 0 and 1")
        self.when("suggestions", i, row, "created")

    def decision(self, i: int, row: dict[str, Any]) -> None:
        self.ident("suggestion_decisions", i, row)
        if self.exists("suggestions", row["suggestion_id"]) is None:
            raise self.fail("suggestion_decisions", i, "suggestion_id", "names a suggestion neither here nor stored")
        self.text("suggestion_decisions", i, row, "reviewer")
        self.one_of("suggestion_decisions", i, row, "decision", ("accepted", "rejected"))
        accepted = row["decision"] == "accepted"
        if accepted != (row.get("annotation_id") is not None):
            raise self.fail(
                "suggestion_decisions", i, "annotation_id", "an acceptance names its annotation, a rejection none"
            )
        if accepted and self.exists("annotations", row["annotation_id"]) is None:
            raise self.fail("suggestion_decisions", i, "annotation_id", "names an annotation neither here nor stored")
        self.when("suggestion_decisions", i, row, "at")

    def judging(self, i: int, row: dict[str, Any]) -> None:
        self.ident("judgings", i, row)
        self.one_of("judgings", i, row, "kind", ("card", "pair"))
        if row["kind"] == "card" and self.exists("runs", row.get("run_id")) is None:
            raise self.fail("judgings", i, "run_id", "names a run that is neither here nor stored")
        if row["kind"] == "pair" and self.exists("pairs", row.get("pair_id")) is None:
            raise self.fail("judgings", i, "pair_id", "names a pair that is neither here nor stored")
        self.one_of("judgings", i, row, "status", JUDGING_STATUSES)
        for column in ("judging", "reviewer", "model", "endpoint"):
            self.text("judgings", i, row, column)
        if hashlib.sha256(row["packet"].encode("utf-8")).hexdigest() != row["packet_sha256"]:
            raise self.fail("judgings", i, "packet_sha256", "does not match the packet")
        self.at_least("judgings", i, row, ("part", "parts"), 1)
        self.at_least("judgings", i, row, ("prompt_tokens", "completion_tokens", "cost", "duration"))
        self.when("judgings", i, row, "started")
        self.when("judgings", i, row, "ended", required=False)

    def two_runs(self, table: str, i: int, row: dict[str, Any]) -> None:
        for column in ("run_a", "run_b"):
            if self.exists("runs", row[column]) is None:
                raise self.fail(table, i, column, "names a run that is neither here nor stored")
        if row["run_a"] == row["run_b"]:
            raise self.fail(table, i, "run_b", "a pair is of two different runs")

    # -- rules across rows -----------------------------------------------------------

    def ancestry(self) -> None:
        """No run descends from itself (a branch of a branch of ... itself)."""
        for i, row in enumerate(self.tables.get("runs", [])):
            seen = {row["id"]}
            parent = row.get("parent_run")
            while parent is not None:
                if parent in seen:
                    raise self.fail("runs", i, "parent_run", "the run descends from itself")
                seen.add(parent)
                found = self.exists("runs", parent)
                parent = found.get("parent_run") if found else None

    def one_chosen_reply(self) -> None:
        """Exactly one chosen turn at each position, counting what the database already holds."""
        positions: dict[tuple[str, int], dict[str, int]] = {}
        where: dict[tuple[str, int], int] = {}
        for i, row in enumerate(self.tables.get("turns", [])):
            key = (row["run_id"], row["idx"])
            positions.setdefault(key, {})[row["id"]] = row["chosen"]
            where.setdefault(key, i)
        for (run_id, idx), chosen in positions.items():
            for turn_id, flag in self.db.execute(
                "SELECT id, chosen FROM turns WHERE run_id = ? AND idx = ?", [run_id, idx]
            ).fetchall():
                chosen.setdefault(turn_id, flag)
            if sum(chosen.values()) != 1:
                raise self.fail(
                    "turns",
                    where[(run_id, idx)],
                    "chosen",
                    f"turn {idx} of run {run_id} has {sum(chosen.values())} chosen replies; one is",
                )


def _key(table: str, row: dict[str, Any]) -> tuple[Any, ...]:
    """What identifies a row: its id, a snapshot's sha256, a history row's content."""
    if table == "annotation_history":
        return (row.get("annotation_id"), row.get("action"), row.get("grp"), row.get("at"))
    if table == "scenarios":
        return (row.get("sha256"),)
    return (row.get("id"),)
