"""`sieve search`: the turns across runs that hold a query, best first, each with a snippet cut around its hits.

The full-text index narrows the turns to those that can hold every word
(sieve/store/record/word_index.py); the matcher (search_terms.py) reads each of them once,
as it is shown (masked, for a blind reviewer), and the snippet is cut around the
first hits: the work grows with the text read, however long a reply is.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from sqlite_utils import Database

from sieve.store.record import word_index
from sieve.store.record.runs import NOT_ARCHIVED
from sieve.store.scoring.search_terms import Query, snippet

CHUNK = 500  # rowids per query when the index has narrowed the turns

# How a run's text is shown to the reader (masked when blind): given the run's row, a function of the text.
Shown = Callable[[Mapping[str, Any]], Callable[[str], str]]


def search(
    db: Database,
    text: str,
    *,
    scenario: str | None = None,
    run_id: str | None = None,
    limit: int = 200,
    shown: Shown | None = None,
) -> list[dict[str, Any]]:
    """The turns holding every word of `text` (search_terms.Query says how words match), best first.

    Best: the words side by side first, then the newest run, then the turn's place in it.
    Each hit has the run, the turn's id, position and role, whether it is the chosen
    reply, the scenario, the model and a snippet with the hits in [brackets]. Archived
    runs are left out, and turns still streaming (not yet in the index).
    """
    query = Query(text)
    if not query:
        return []
    narrowed = word_index.candidates(db, query.pieces())
    if narrowed is not None and not narrowed:
        return []
    hits = []
    for row in _turns(db, narrowed, scenario, run_id):
        body = shown(row)(row["text"]) if shown is not None else row["text"]
        found = query.match(body)
        if found is None:
            continue
        hit = {k: row[k] for k in ("run_id", "turn_id", "idx", "role", "chosen", "scenario", "model")}
        hit["snippet"] = snippet(body, found.spans)
        hits.append((not found.together, row["run_id"], row["idx"], row["alt"], hit))
    # Stable sorts, the last the first in rank: run ids are ULIDs, sortable by time.
    hits.sort(key=lambda h: (h[2], h[3]))
    hits.sort(key=lambda h: h[1], reverse=True)
    hits.sort(key=lambda h: h[0])
    return [h[4] for h in hits[:limit]]


def _turns(db: Database, rowids: set[int] | None, scenario: str | None, run_id: str | None) -> Iterator[dict[str, Any]]:
    """The turns to read, one at a time (a reply of megabytes is held once, while it is read)."""
    where = ["t.status != 'streaming'", "r." + NOT_ARCHIVED]
    params: list[Any] = []
    if scenario:
        where.append("r.scenario = ?")
        params.append(scenario)
    if run_id:
        where.append("t.run_id = ?")
        params.append(run_id)
    sql = (
        "SELECT t.run_id, t.id AS turn_id, t.idx, t.alt, t.role, t.chosen, r.scenario, r.model, t.text "
        "FROM turns t JOIN runs r ON r.id = t.run_id WHERE " + " AND ".join(where)
    )
    if rowids is None:
        yield from _rows(db, sql, params)
        return
    ordered = sorted(rowids)
    for n in range(0, len(ordered), CHUNK):
        chunk = ordered[n : n + CHUNK]
        marks = ", ".join("?" for _ in chunk)
        yield from _rows(db, f"{sql} AND t.rowid IN ({marks})", [*params, *chunk])


def _rows(db: Database, sql: str, params: list[Any]) -> Iterator[dict[str, Any]]:
    cursor = db.execute(sql, params)
    names = [d[0] for d in cursor.description]
    for row in cursor:
        yield dict(zip(names, row))
