"""The record in Datasette: a metadata file with canned queries for `datasette sieve.db -m FILE`.

The queries read the record as sieve writes it: `field` (a scenario's runs, one row per run, evaluator
and rubric, with the rubric's total worked out as sieve's score card works it out: the latest score of
each item, undecided ranges low and high, bonuses apart, deductions up to the rubric's limit),
`quotes` (every annotation of a run that has a quote, with the passage it was found at) and
`excerpts` (a scenario's excerpts with their captions). Which items are bonuses and how much a rubric
may deduct is the scenario's knowledge, not the database's: it is written into the field query, from
every scenario snapshot the database holds, when the file is made.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlite_utils import Database

from sieve.store.record.runs import not_archived, snapshot

IN_FORCE = "a.removed IS NULL AND a.trial IS NULL"  # an annotation in force on a reviewer's first card
IN_FIELD = not_archived("r.id")  # archived runs are out of the field


def _literal(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, (int, float)):
        return repr(float(value))
    return "'" + str(value).replace("'", "''") + "'"


def _rubric_rows(db: Database) -> tuple[list[str], list[str]]:
    """(scenario sha256, rubric, item, bonus) for every item of every snapshot; (sha256, rubric, deduction limit)."""
    items: list[str] = []
    rubrics: list[str] = []
    for (sha256,) in db.execute("SELECT sha256 FROM scenarios ORDER BY sha256").fetchall():
        scenario = snapshot(db, sha256)
        for rubric in scenario.rubrics:
            limit = rubric.deductions.maximum if rubric.deductions else None
            rubrics.append(f"({_literal(sha256)}, {_literal(rubric.id)}, {_literal(limit)})")
            for item in rubric.items + rubric.bonuses:
                items.append(f"({_literal(sha256)}, {_literal(rubric.id)}, {_literal(item.id)}, {int(item.bonus)})")
    return items, rubrics


def field_sql(db: Database) -> str:
    """One row per run of :scenario, evaluator and rubric: the run's facts and the rubric's total."""
    items, rubrics = _rubric_rows(db)
    # A database with no scenario yet still gets a query that runs (and finds nothing).
    item_values = ",\n    ".join(items) or "(NULL, NULL, NULL, 0)"
    rubric_values = ",\n    ".join(rubrics) or "(NULL, NULL, NULL)"
    return f"""WITH items(sha256, rubric, item, bonus) AS (VALUES
    {item_values}
), rubrics(sha256, rubric, deduction_limit) AS (VALUES
    {rubric_values}
), latest AS (
  -- the score that counts: the latest of each item, as on sieve's score card
  SELECT a.run_id, a.reviewer, a.item, a.score, COALESCE(a.score_high, a.score) AS score_high
  FROM annotations a
  WHERE a.kind = 'score' AND {IN_FORCE} AND a.id = (
    SELECT MAX(b.id) FROM annotations b
    WHERE b.run_id = a.run_id AND b.reviewer = a.reviewer AND b.item = a.item AND b.kind = 'score'
      AND b.removed IS NULL AND b.trial IS NULL)
), evaluators AS (
  SELECT DISTINCT a.run_id, a.reviewer FROM annotations a
  WHERE a.kind IN ('score', 'deduction') AND {IN_FORCE}
), facts AS (
  SELECT r.id AS run, r.scenario_sha256, r.model, r.status, r.started, r.cost,
    (SELECT COUNT(*) FROM turns t WHERE t.run_id = r.id AND t.role = 'assistant' AND t.chosen = 1) AS replies,
    (SELECT COUNT(*) FROM turns t WHERE t.run_id = r.id AND t.role = 'assistant' AND t.chosen = 1
       AND t.status = 'filtered') AS filtered,
    (SELECT COUNT(*) FROM turns t WHERE t.run_id = r.id AND t.role = 'assistant' AND t.chosen = 1
       AND t.status = 'length') AS ceiling_hits,
    COALESCE(r.prompt_tokens, 0) + COALESCE(r.completion_tokens, 0) AS tokens
  FROM runs r WHERE r.scenario = :scenario AND {IN_FIELD}
)
SELECT f.run, f.model, e.reviewer AS evaluator, k.rubric,
  COALESCE(SUM(CASE WHEN i.bonus = 0 THEN l.score END), 0) - d.deducted AS total_low,
  COALESCE(SUM(CASE WHEN i.bonus = 0 THEN l.score_high END), 0) - d.deducted AS total_high,
  COALESCE(SUM(CASE WHEN i.bonus = 1 THEN l.score END), 0) AS bonus_low,
  COALESCE(SUM(CASE WHEN i.bonus = 1 THEN l.score_high END), 0) AS bonus_high,
  d.deducted, COUNT(l.item) AS items_scored,
  (SELECT COUNT(*) FROM items j WHERE j.sha256 = f.scenario_sha256 AND j.rubric = k.rubric) AS items,
  f.status, f.replies, f.filtered, f.ceiling_hits, f.tokens, f.cost, f.started
FROM facts f
JOIN evaluators e ON e.run_id = f.run
JOIN rubrics k ON k.sha256 = f.scenario_sha256
JOIN (
  SELECT e2.run_id, e2.reviewer, k2.rubric,
    MIN(COALESCE((SELECT SUM(a.score) FROM annotations a WHERE a.run_id = e2.run_id AND a.reviewer = e2.reviewer
        AND a.kind = 'deduction' AND a.rubric = k2.rubric AND {IN_FORCE}), 0),
      COALESCE(k2.deduction_limit, 1e308)) AS deducted
  FROM evaluators e2 JOIN runs r2 ON r2.id = e2.run_id JOIN rubrics k2 ON k2.sha256 = r2.scenario_sha256
  GROUP BY e2.run_id, e2.reviewer, k2.rubric
) d ON d.run_id = f.run AND d.reviewer = e.reviewer AND d.rubric = k.rubric
LEFT JOIN items i ON i.sha256 = f.scenario_sha256 AND i.rubric = k.rubric
LEFT JOIN latest l ON l.run_id = f.run AND l.reviewer = e.reviewer AND l.item = i.item
GROUP BY f.run, e.reviewer, k.rubric
ORDER BY f.started, f.run, e.reviewer, k.rubric"""


QUOTES_SQL = f"""SELECT a.reviewer, a.kind, a.item, a.score, a.score_high, a.value, a.verification, a.similarity,
  t.idx AS turn, COALESCE(a.step_id, u.step_id) AS step, a.quote,
  substr(t.text, a.quote_start + 1, a.quote_end - a.quote_start) AS found_at, a.note, a.created, a.id
FROM annotations a
LEFT JOIN turns t ON t.id = a.quote_turn_id
LEFT JOIN turns u ON u.run_id = t.run_id AND u.idx = t.idx - 1 AND u.role = 'user' AND u.chosen = 1
WHERE a.run_id = :run AND a.quote IS NOT NULL AND {IN_FORCE}
ORDER BY t.idx, a.quote_start, a.id"""

EXCERPTS_SQL = f"""SELECT r.id AS run, r.model, a.note AS caption, a.quote, a.verification, t.idx AS turn, a.reviewer,
  a.created
FROM annotations a JOIN runs r ON r.id = a.run_id LEFT JOIN turns t ON t.id = a.quote_turn_id
WHERE r.scenario = :scenario AND {IN_FIELD} AND a.kind = 'excerpt' AND {IN_FORCE}
ORDER BY r.started, t.idx, a.quote_start"""


def metadata(db: Database, db_file: Path) -> dict[str, Any]:
    """The metadata for `datasette DB_FILE -m FILE`: the database named as Datasette names it (the file's stem)."""
    queries = {
        "field": {
            "title": "The field of a scenario",
            "description": "One row per run, evaluator and rubric: the rubric's total as sieve's score card has it "
            "(the latest score of each item; an undecided range low to high; bonuses apart; deductions up to the "
            "rubric's limit), with the run's status, replies, filtered replies, ceiling hits, tokens and cost.",
            "sql": field_sql(db),
        },
        "quotes": {
            "title": "The quotes of a run",
            "description": "Every annotation in force of a run that has a quote: what it says, how the quote was "
            "verified, the turn and step it stands in, and the passage it was found at (found_at).",
            "sql": QUOTES_SQL,
        },
        "excerpts": {
            "title": "The excerpts of a scenario",
            "description": "The passages reviewers marked as excerpts, with their captions.",
            "sql": EXCERPTS_SQL,
        },
    }
    return {
        "title": f"sieve: {db_file.name}",
        "description": "A sieve record: runs, turns and every annotation with its verified quote.",
        "databases": {db_file.stem: {"queries": queries}},
    }
