"""The schema, as an ordered list of small migrations (sqlite-utils Migrations).

Never edit a migration that has shipped: add a new one. Tables are written in
SQL so that constraints (checks, foreign keys) say what a valid record is.

They are applied in the order they are written here, the order they were merged. Their
numbers were handed out in ranges to work done side by side, so they are neither in
numeric order nor without gaps, and a shipped name never changes: a new migration goes
at the end of this file, numbered one past the largest number in use.
"""

from __future__ import annotations

import sqlite3

from sqlite_utils import Database
from sqlite_utils.migrations import Migrations

migrations = Migrations("sieve")

RUN_STATUSES = ("running", "complete", "interrupted", "failed")
TURN_STATUSES = ("streaming", "complete", "cancelled", "failed", "filtered", "length", "interrupted")
# How an annotation's quote was verified (sieve/store/scoring/quotes.py; only exact and fuzzy are evidence).
QUOTE_VERDICTS = ("exact", "fuzzy", "absent", "player", "altered", "short", "ambiguous")


def known_names() -> list[str]:
    """The migrations this sieve knows, in order: its schema's versions."""
    return [m.name for m in migrations._migrations]


def _in(values: tuple[str, ...]) -> str:
    return "(" + ", ".join(f"'{v}'" for v in values) + ")"


@migrations()
def m001_initial(db: Database) -> None:
    # A snapshot of every scenario version a run used: later edits of the file
    # never change what an old run meant.
    db.execute(
        """
        CREATE TABLE scenarios (
            sha256 TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            version INTEGER NOT NULL,
            title TEXT NOT NULL,
            toml TEXT NOT NULL,
            created TEXT NOT NULL
        )
        """
    )
    db.execute(
        f"""
        CREATE TABLE runs (
            id TEXT PRIMARY KEY,
            scenario_sha256 TEXT NOT NULL REFERENCES scenarios(sha256),
            scenario TEXT NOT NULL,
            model TEXT NOT NULL,
            endpoint TEXT NOT NULL,
            settings TEXT NOT NULL DEFAULT '{{}}',
            status TEXT NOT NULL DEFAULT 'running' CHECK (status IN {_in(RUN_STATUSES)}),
            origin TEXT NOT NULL DEFAULT 'script' CHECK (origin IN ('script', 'live', 'import')),
            parent_run TEXT REFERENCES runs(id),
            parent_turn INTEGER,
            repeat INTEGER NOT NULL DEFAULT 0,
            left_script_at INTEGER,
            started TEXT NOT NULL,
            ended TEXT,
            cost REAL,
            prompt_tokens INTEGER,
            completion_tokens INTEGER,
            reasoning_tokens INTEGER,
            error TEXT,
            -- host:pid of the process playing it; a run whose owner is gone was interrupted
            owner TEXT
        )
        """
    )
    db.execute("CREATE INDEX runs_scenario ON runs(scenario, started)")
    # One row per message. Regenerated replies to the same prompt share `idx`
    # and differ in `alt`; exactly one of them is `chosen`.
    db.execute(
        f"""
        CREATE TABLE turns (
            id TEXT PRIMARY KEY,
            run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            idx INTEGER NOT NULL,
            alt INTEGER NOT NULL DEFAULT 0,
            chosen INTEGER NOT NULL DEFAULT 1 CHECK (chosen IN (0, 1)),
            role TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant')),
            origin TEXT NOT NULL CHECK (origin IN ('setup', 'script', 'filler', 'live', 'reply')),
            step_id TEXT,
            step_repeat INTEGER,
            text TEXT NOT NULL DEFAULT '',
            status TEXT NOT NULL DEFAULT 'complete' CHECK (status IN {_in(TURN_STATUSES)}),
            finish_reason TEXT,
            native_finish_reason TEXT,
            provider TEXT,
            prompt_tokens INTEGER,
            completion_tokens INTEGER,
            reasoning_tokens INTEGER,
            token_source TEXT,
            cost REAL,
            ttft REAL,
            duration REAL,
            error TEXT,
            attempts INTEGER NOT NULL DEFAULT 1,
            created TEXT NOT NULL,
            updated TEXT NOT NULL,
            UNIQUE (run_id, idx, alt)
        )
        """
    )
    # Removal never deletes: `removed` is set and `annotation_history` keeps
    # the order of adds and removes, which is what undo and redo walk.
    db.execute(
        """
        CREATE TABLE annotations (
            id TEXT PRIMARY KEY,
            run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            turn_id TEXT REFERENCES turns(id),
            reviewer TEXT NOT NULL,
            rubric TEXT,
            item TEXT NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('score', 'count', 'verdict', 'note', 'flag', 'deduction', 'judgment', 'probe')),
            score REAL,
            score_high REAL,
            value TEXT,
            quote TEXT,
            quote_turn_id TEXT REFERENCES turns(id),
            quote_start INTEGER,
            quote_end INTEGER,
            verification TEXT CHECK (verification IN ('exact', 'fuzzy', 'absent', 'player')),
            similarity REAL,
            note TEXT,
            blind INTEGER NOT NULL DEFAULT 0,
            supersedes TEXT REFERENCES annotations(id),
            created TEXT NOT NULL,
            removed TEXT,
            CHECK (score_high IS NULL OR (score IS NOT NULL AND score_high > score)),
            CHECK (quote_end IS NULL OR quote_start <= quote_end)
        )
        """
    )
    db.execute("CREATE INDEX annotations_run ON annotations(run_id, reviewer)")
    db.execute(
        """
        CREATE TABLE annotation_history (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            annotation_id TEXT NOT NULL REFERENCES annotations(id),
            run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            reviewer TEXT NOT NULL,
            action TEXT NOT NULL CHECK (action IN ('add', 'remove')),
            -- actions of one gesture (an edit is a remove and an add) share a group
            grp TEXT NOT NULL,
            -- 0 done, 1 undone (redo can bring it back), 2 undone and past redo
            undone INTEGER NOT NULL DEFAULT 0 CHECK (undone IN (0, 1, 2)),
            at TEXT NOT NULL
        )
        """
    )
    db.execute(
        """
        CREATE TABLE judgments (
            id TEXT PRIMARY KEY,
            run_a TEXT NOT NULL REFERENCES runs(id),
            run_b TEXT NOT NULL REFERENCES runs(id),
            criterion TEXT NOT NULL,
            winner TEXT NOT NULL CHECK (winner IN ('A', 'B', 'tie')),
            reviewer TEXT NOT NULL,
            a_shown_first INTEGER NOT NULL CHECK (a_shown_first IN (0, 1)),
            blind INTEGER NOT NULL DEFAULT 1,
            note TEXT,
            created TEXT NOT NULL,
            CHECK (run_a <> run_b)
        )
        """
    )
    # Full-text search over what was said. A reply is indexed once it stops
    # streaming: re-indexing a long reply at every flush would cost the most
    # exactly when a batch streams dozens of them. The triggers keep the rule
    # that a row is in the index exactly when its status is not 'streaming'.
    db.execute("CREATE VIRTUAL TABLE turns_fts USING fts5(text, content='turns', content_rowid='rowid')")
    db.execute(
        """
        CREATE TRIGGER turns_fts_insert AFTER INSERT ON turns WHEN new.status != 'streaming' BEGIN
            INSERT INTO turns_fts (rowid, text) VALUES (new.rowid, new.text);
        END
        """
    )
    db.execute(
        """
        CREATE TRIGGER turns_fts_delete AFTER DELETE ON turns WHEN old.status != 'streaming' BEGIN
            INSERT INTO turns_fts (turns_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
        END
        """
    )
    db.execute(
        """
        CREATE TRIGGER turns_fts_update_old AFTER UPDATE OF text, status ON turns WHEN old.status != 'streaming' BEGIN
            INSERT INTO turns_fts (turns_fts, rowid, text) VALUES ('delete', old.rowid, old.text);
        END
        """
    )
    db.execute(
        """
        CREATE TRIGGER turns_fts_update_new AFTER UPDATE OF text, status ON turns WHEN new.status != 'streaming' BEGIN
            INSERT INTO turns_fts (rowid, text) VALUES (new.rowid, new.text);
        END
        """
    )


@migrations()
def m002_meta(db: Database) -> None:
    # Facts about this database file, such as the salt of its blind codes.
    db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")


@migrations()
def m003_pair_queues(db: Database) -> None:
    # A queue of blind A/B pairs: which run is A was drawn at random (and balanced)
    # when the queue was made, and stays so for every reviewer.
    db.execute(
        """
        CREATE TABLE pairs (
            id TEXT PRIMARY KEY,
            queue TEXT NOT NULL,
            position INTEGER NOT NULL,
            run_a TEXT NOT NULL REFERENCES runs(id),
            run_b TEXT NOT NULL REFERENCES runs(id),
            created TEXT NOT NULL,
            UNIQUE (queue, position),
            CHECK (run_a <> run_b)
        )
        """
    )
    db.execute("ALTER TABLE judgments ADD COLUMN pair_id TEXT REFERENCES pairs(id)")


@migrations()
def m004_annotation_evidence(db: Database) -> None:
    # confidence 'low': scored without evidence, knowingly (a rubric that needs a quote,
    # a judge whose quote was not found). step_id: the step a verdict judges, stated
    # rather than inferred from the turn. seconds: from opening the picker to saving.
    # source: where a score came from when it was not typed ("adopted from judge:X").
    db.execute("ALTER TABLE annotations ADD COLUMN confidence TEXT CHECK (confidence IN ('low'))")
    db.execute("ALTER TABLE annotations ADD COLUMN step_id TEXT")
    db.execute("ALTER TABLE annotations ADD COLUMN seconds REAL")
    db.execute("ALTER TABLE annotations ADD COLUMN source TEXT")


@migrations()
def m005_streaming_turns(db: Database) -> None:
    # Replies left streaming are found at every open (recovery) without reading the
    # transcripts: a partial index holds only those few rows.
    db.execute("CREATE INDEX turns_streaming ON turns(run_id) WHERE status = 'streaming'")


@migrations()
def m006_turn_speaker(db: Database) -> None:
    # Who spoke, where a chat names each message's speaker (a SillyTavern group chat
    # has several characters); None for turns sieve played itself.
    db.execute("ALTER TABLE turns ADD COLUMN speaker TEXT")


@migrations()
def m007_suggestions(db: Database) -> None:
    # Events a detector or a judge proposes, each as the annotation it would become
    # (item, kind, score, value) with its evidence spans. They count for nothing until a
    # reviewer accepts one, which stores that reviewer's annotation; both decisions are kept.
    db.execute(
        """
        CREATE TABLE suggestions (
            id TEXT PRIMARY KEY,
            run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            turn_id TEXT REFERENCES turns(id),
            item TEXT NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('count', 'verdict', 'note', 'flag', 'score', 'probe')),
            score REAL,
            value TEXT,
            step_id TEXT,
            -- JSON [{turn_id, turn, start, end, text}]: offsets into the turns' original text; the first is the quote
            spans TEXT NOT NULL DEFAULT '[]',
            reason TEXT NOT NULL,
            confidence REAL CHECK (confidence IS NULL OR (confidence >= 0 AND confidence <= 1)),
            category TEXT,
            source TEXT NOT NULL CHECK (source IN ('detector', 'judge')),
            -- the detector's name, or the judge's reviewer name; and its version
            source_name TEXT NOT NULL,
            source_version TEXT NOT NULL,
            fingerprint TEXT NOT NULL,
            created TEXT NOT NULL,
            UNIQUE (run_id, fingerprint)
        )
        """
    )
    db.execute("CREATE INDEX suggestions_run ON suggestions(run_id)")
    db.execute(
        """
        CREATE TABLE suggestion_decisions (
            id TEXT PRIMARY KEY,
            suggestion_id TEXT NOT NULL REFERENCES suggestions(id) ON DELETE CASCADE,
            reviewer TEXT NOT NULL,
            decision TEXT NOT NULL CHECK (decision IN ('accepted', 'rejected')),
            annotation_id TEXT REFERENCES annotations(id),
            note TEXT,
            at TEXT NOT NULL,
            CHECK ((decision = 'accepted') = (annotation_id IS NOT NULL))
        )
        """
    )
    db.execute("CREATE INDEX suggestion_decisions_by ON suggestion_decisions(suggestion_id, reviewer)")


@migrations(transactional=False)
def m008_model_played_turns(db: Database) -> None:
    # A player turn written by a model in the player's seat has its own origin,
    # 'player', and says which model played it and how (brief, endpoint, settings).
    # SQLite cannot alter a CHECK constraint; widening one keeps every stored row
    # valid, so the table's own definition is rewritten in place (SQLite's
    # documented procedure for relaxing constraints), not the table rebuilt.
    with db.atomic():
        version = db.execute("PRAGMA schema_version").fetchone()[0]
        sql = db.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'turns'").fetchone()[0]
        old = "CHECK (origin IN ('setup', 'script', 'filler', 'live', 'reply'))"
        new = "CHECK (origin IN ('setup', 'script', 'filler', 'live', 'reply', 'player'))"
        if old not in sql:
            raise sqlite3.DatabaseError("the turns table is not as sieve wrote it: its origins cannot be extended")
        db.execute("PRAGMA writable_schema = ON")
        db.execute("UPDATE sqlite_master SET sql = ? WHERE type = 'table' AND name = 'turns'", [sql.replace(old, new)])
        db.execute(f"PRAGMA schema_version = {version + 1}")
        db.execute("PRAGMA writable_schema = OFF")
        db.execute("ALTER TABLE turns ADD COLUMN played_by TEXT")
        db.execute("ALTER TABLE turns ADD COLUMN played_settings TEXT")
    if db.execute("PRAGMA integrity_check").fetchone()[0] != "ok":
        raise sqlite3.DatabaseError("the turns table failed SQLite's integrity check after its origins were extended")


JUDGING_STATUSES = ("running", "complete", "partial", "failed", "refused")


@migrations()
def m009_judgings(db: Database) -> None:
    # One row per packet a judge was sent: what it saw (the packet, its hash, what
    # it covered), what it answered (the raw reply, each repair round), what it cost,
    # and whether the judge shares a maker with the scored model. A judging of a long
    # run sends several packets (parts) that share `judging`. The judge's scores are
    # annotations like anyone's; their `source` names the row here.
    db.execute(
        f"""
        CREATE TABLE judgings (
            id TEXT PRIMARY KEY,
            judging TEXT NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('card', 'pair')),
            run_id TEXT REFERENCES runs(id) ON DELETE CASCADE,
            pair_id TEXT REFERENCES pairs(id),
            -- a pair shown with its sides swapped: run B as "A"
            swapped INTEGER CHECK (swapped IN (0, 1)),
            part INTEGER NOT NULL DEFAULT 1,
            parts INTEGER NOT NULL DEFAULT 1,
            reviewer TEXT NOT NULL,
            model TEXT NOT NULL,
            endpoint TEXT NOT NULL,
            settings TEXT NOT NULL DEFAULT '{{}}',
            blind INTEGER NOT NULL DEFAULT 1,
            packet_sha256 TEXT NOT NULL,
            packet TEXT NOT NULL,
            -- what the packet covered (steps, turns, questions) and the schema asked for
            covers TEXT NOT NULL DEFAULT '{{}}',
            reply TEXT,
            repairs TEXT NOT NULL DEFAULT '[]',
            precedents TEXT NOT NULL DEFAULT '[]',
            -- the maker the judge shares with the scored model (a conflict of interest)
            conflict TEXT,
            status TEXT NOT NULL DEFAULT 'running' CHECK (status IN {_in(JUDGING_STATUSES)}),
            error TEXT,
            outcome TEXT NOT NULL DEFAULT '{{}}',
            prompt_tokens INTEGER,
            completion_tokens INTEGER,
            cost REAL,
            provider TEXT,
            duration REAL,
            started TEXT NOT NULL,
            ended TEXT,
            CHECK ((kind = 'card') = (run_id IS NOT NULL)),
            CHECK ((kind = 'pair') = (pair_id IS NOT NULL))
        )
        """
    )
    db.execute("CREATE INDEX judgings_run ON judgings(run_id, reviewer)")
    db.execute("CREATE INDEX judgings_pair ON judgings(pair_id, reviewer)")


@migrations()
def m010_catch_trials(db: Database) -> None:
    # Catch trials: a run or a pair a reviewer has already scored comes back later
    # under a new code, to measure how consistent the reviewer is with themself.
    # A run's catch trial is a row here; what the reviewer says in it are annotations
    # carrying its id in `trial` (and so kept apart from their first card). A pair's
    # catch trial is a later pair of the same queue whose `catch_of` names the first.
    db.execute(
        """
        CREATE TABLE catch_trials (
            id TEXT PRIMARY KEY,
            reviewer TEXT NOT NULL,
            run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            created TEXT NOT NULL
        )
        """
    )
    db.execute("CREATE INDEX catch_trials_by ON catch_trials(reviewer, run_id)")
    db.execute("ALTER TABLE annotations ADD COLUMN trial TEXT")
    db.execute("ALTER TABLE pairs ADD COLUMN catch_of TEXT REFERENCES pairs(id)")


@migrations()
def m011_judging_owner(db: Database) -> None:
    # The process judging a packet, as host:pid (as runs.owner): a judging left
    # `running` by a process that is gone is marked failed when the database opens.
    db.execute("ALTER TABLE judgings ADD COLUMN owner TEXT")
    # Found at every open without reading the packets (rows of tens of kilobytes each).
    db.execute("CREATE INDEX judgings_running ON judgings(owner) WHERE status = 'running'")


@migrations()
def m012_queue_sides(db: Database) -> None:
    # What each run of a pair queue stands for: the --model, or the --a / --b set, it was
    # drawn from. A head-to-head verdict is about slot A or B of one pair (drawn at random);
    # the sides are what a summary reports it as (a queue made before this: by the runs' models).
    db.execute(
        """
        CREATE TABLE queue_sides (
            queue TEXT NOT NULL,
            run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            side TEXT NOT NULL,
            PRIMARY KEY (queue, run_id)
        )
        """
    )


def _widen_check(db: Database, table: str, old: str, new: str) -> None:
    """Rewrite a CHECK constraint of `table` in place to allow more values (every stored row stays valid).

    SQLite cannot alter a constraint; this is its documented procedure for relaxing one.
    """
    with db.atomic():
        version = db.execute("PRAGMA schema_version").fetchone()[0]
        sql = db.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", [table]).fetchone()[0]
        if old not in sql:
            raise sqlite3.DatabaseError(f"the {table} table is not as sieve wrote it: its values cannot be extended")
        db.execute("PRAGMA writable_schema = ON")
        db.execute("UPDATE sqlite_master SET sql = ? WHERE type = 'table' AND name = ?", [sql.replace(old, new), table])
        db.execute(f"PRAGMA schema_version = {version + 1}")
        db.execute("PRAGMA writable_schema = OFF")
    if db.execute("PRAGMA integrity_check").fetchone()[0] != "ok":
        raise sqlite3.DatabaseError(f"the {table} table failed SQLite's integrity check after its values were extended")


@migrations(transactional=False)
def m013_altered_quotes(db: Database) -> None:
    # A quote that matches its passage but for an added or removed negation is
    # 'altered': found, and no evidence.
    _widen_check(
        db,
        "annotations",
        "CHECK (verification IN ('exact', 'fuzzy', 'absent', 'player'))",
        "CHECK (verification IN ('exact', 'fuzzy', 'absent', 'player', 'altered'))",
    )


@migrations(transactional=False)
def m014_short_quotes(db: Database) -> None:
    # A quote found but too short to point at anything (a word or two) is 'short': no evidence.
    _widen_check(
        db,
        "annotations",
        "CHECK (verification IN ('exact', 'fuzzy', 'absent', 'player', 'altered'))",
        "CHECK (verification IN ('exact', 'fuzzy', 'absent', 'player', 'altered', 'short'))",
    )


@migrations(transactional=False)
def m024_excerpts(db: Database) -> None:
    # An excerpt: a passage marked for publication with a caption (the report's excerpts page).
    # It scores nothing; its quote is verified like any other.
    _widen_check(
        db,
        "annotations",
        "CHECK (kind IN ('score', 'count', 'verdict', 'note', 'flag', 'deduction', 'judgment', 'probe'))",
        "CHECK (kind IN ('score', 'count', 'verdict', 'note', 'flag', 'deduction', 'judgment', 'probe', 'excerpt'))",
    )


@migrations()
def m025_adaptive_queues(db: Database) -> None:
    # An adaptive pair queue grows in rounds (store.scoring.adaptive): what it was made
    # for (the scenario, the budget in pairs, the catch trials asked for, the seed) and,
    # once it has ended, why. Each pair records the round it was added in.
    db.execute(
        """
        CREATE TABLE queue_plans (
            queue TEXT PRIMARY KEY,
            scenario TEXT NOT NULL,
            budget INTEGER NOT NULL CHECK (budget > 0),
            catch INTEGER NOT NULL DEFAULT 0,
            seed INTEGER,
            first_order TEXT NOT NULL DEFAULT 'shuffled',
            stopped TEXT,
            created TEXT NOT NULL
        )
        """
    )
    db.execute("ALTER TABLE pairs ADD COLUMN round INTEGER")


@migrations()
def m018_merges(db: Database) -> None:
    # Each bundle merged in (sieve import): which file, how conflicts were to be settled, and
    # what came of it (rows added, removals carried over, the bundle's annotations set aside as
    # repeats of this database's, every conflict with both values and the side chosen). An
    # annotation a merge set aside keeps its row; its `removed` is the merge's time.
    db.execute(
        """
        CREATE TABLE merges (
            id TEXT PRIMARY KEY,
            source TEXT NOT NULL,
            bundle_sha256 TEXT NOT NULL,
            on_conflict TEXT NOT NULL CHECK (on_conflict IN ('fail', 'theirs', 'ours')),
            at TEXT NOT NULL,
            report TEXT NOT NULL DEFAULT '{}'
        )
        """
    )


@migrations()
def m020_search_words(db: Database) -> None:
    # The words of the full-text index, one row each (FTS5's vocabulary table): a search
    # for a piece of a word (`minc` in `minci`) looks it up here, then asks the index for
    # the turns holding the words found. Nothing is stored: it reads the index as it is.
    db.execute("CREATE VIRTUAL TABLE turns_fts_vocab USING fts5vocab(turns_fts, row)")


@migrations()
def m021_archived_runs(db: Database) -> None:
    # A run put out of sight (`sieve runs --archive`): kept whole, left out of lists, results
    # and searches until it is brought back. A table of its own, not a column of runs: where a
    # reviewer keeps a run is this database's business, not the run's, and bundles leave it out.
    db.execute(
        """
        CREATE TABLE archived_runs (
            run_id TEXT PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
            reviewer TEXT NOT NULL,
            at TEXT NOT NULL
        )
        """
    )


@migrations(transactional=False)
def m015_placed_quotes(db: Database) -> None:
    # A quote that stands in several places and claims none of them is 'ambiguous':
    # it points at no one passage, so it is no evidence. A quote (or, without one, the
    # turn an annotation was given on) outside the steps its item is judged on is kept
    # and marked off_step: like the player's words, it counts with low confidence.
    _widen_check(
        db,
        "annotations",
        "CHECK (verification IN ('exact', 'fuzzy', 'absent', 'player', 'altered', 'short'))",
        "CHECK (verification IN ('exact', 'fuzzy', 'absent', 'player', 'altered', 'short', 'ambiguous'))",
    )
    with db.atomic():
        db.execute("ALTER TABLE annotations ADD COLUMN off_step INTEGER NOT NULL DEFAULT 0 CHECK (off_step IN (0, 1))")
