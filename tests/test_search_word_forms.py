"""`sieve search` finds the forms of a word (issue 24), reads huge replies once (issue 25 §8), and shows a blind
reviewer only what they are shown (issue 25 §4)."""

from __future__ import annotations

import json
import re
import sqlite3

import pytest
from click.testing import CliRunner

from sieve import scenarios, store
from sieve.cli import main
from sieve.engine.config import config_path
from sieve.store.record import turns as record
from sieve.store.record.migrations import migrations
from sieve.store.scoring import blind as blinding
from sieve.store.scoring.search_terms import Query, snippet

KEYKEEPER = scenarios.load("keykeeper")
CZECH = "Havel ti podá stříbrnou minci a klíč od brány. Pak zase mlčí."


def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def a_run(db, replies: list[str], model: str = "vendor/a") -> str:
    run_id = store.create_run(db, KEYKEEPER, model=model, endpoint="fake", settings={})
    step = KEYKEEPER.steps[0]
    record.add_turn(db, run_id, idx=0, role="user", origin="setup", text=step.text, step_id=step.id, step_repeat=1)
    for n, reply in enumerate(replies):
        if n:
            record.add_turn(db, run_id, idx=2 * n, role="user", origin="live", text="Go on.")
        record.add_turn(db, run_id, idx=2 * n + 1, role="assistant", origin="reply", text=reply)
    record.set_run_status(db, run_id, "complete")
    return run_id


def found(path, *words, **options) -> list[dict]:
    extra = [x for k, v in options.items() for x in (f"--{k}", v)]
    result = cli("search", *words, "--json", "--db", path, *extra)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.fixture
def czech(tmp_path):
    path = tmp_path / "forms.db"
    db = store.open_db(path)
    run = a_run(db, [CZECH, "The keykeeper counts the coins."])
    other = a_run(db, ["Mincovna je zavřená.", "Nothing here."], model="vendor/b")
    return path, db, run, other


def test_a_prefix_a_piece_of_a_word_and_another_form_find_minci(czech):
    path, _, run, other = czech
    for words in (["minc*"], ["minc"], ["mince"], ["MINCI"], ["mincí"]):
        hits = found(path, *words)
        assert (run, 1) in {(h["run_id"], h["idx"]) for h in hits}, words
        hit = next(h for h in hits if h["run_id"] == run)
        assert "[minci]" in hit["snippet"], (words, hit["snippet"])
    # minc* and minc find mincovna too (it begins with minc); mince finds only its own forms.
    assert {h["run_id"] for h in found(path, "minc*")} == {run, other}
    assert {h["run_id"] for h in found(path, "mince")} == {run, other}  # minc-ovna begins with the stem
    assert found(path, "mincovny") == [h for h in found(path, "mincovny") if h["run_id"] == other]
    assert found(path, "tribrn") and found(path, "tribrn")[0]["run_id"] == run  # a piece inside a word


def test_diacritics_and_case_do_not_matter_and_words_come_in_any_order(czech):
    path, _, run, _ = czech
    for words in (["klic"], ["KLÍČ"], ["stribrnou", "minci"], ["minci stribrnou"], ["brany", "HAVEL"]):
        assert [(h["run_id"], h["idx"]) for h in found(path, *words)] == [(run, 1)], words
    assert found(path, "klic", "mincovna") == []  # every word must stand in the turn
    # One or two letters: whole words only (`od` is a word here; `ny` only the end of others).
    assert [h["idx"] for h in found(path, "od")] == [1] and found(path, "ny") == []
    # Words in double quotes stand together, in order.
    assert [h["idx"] for h in found(path, '"klíč od brány"')] == [1]
    assert found(path, '"brány od klíč"') == []


def test_turns_where_the_words_stand_side_by_side_come_first(tmp_path):
    path = tmp_path / "rank.db"
    db = store.open_db(path)
    apart = a_run(db, ["The penny lay by the gate; much later, golden rain."])
    older_together = a_run(db, ["A golden penny, again."])
    together = a_run(db, ["He holds out a golden penny."])
    hits = found(path, "golden", "penny")
    assert [h["run_id"] for h in hits] == [together, older_together, apart]  # together, the newest first
    assert "[golden penny]" in hits[0]["snippet"]
    assert "[penny]" in hits[2]["snippet"] and "[golden]" in hits[2]["snippet"]


def test_search_help_says_what_is_matched():
    shown = cli("search", "--help").output
    for promise in ("any order", "klic finds klíč", "minc finds minci", "mince finds minci", "minc*", "whole word"):
        assert promise in shown, promise


def test_a_database_from_before_the_word_list_gets_it_when_it_is_migrated(tmp_path):
    path = tmp_path / "old.db"
    db = store.open_db(path)
    run = a_run(db, [CZECH])
    db.conn.close()
    # As a sieve before m020 left it: no vocabulary table, and m020 not applied.
    old = sqlite3.connect(path)
    old.execute("DROP TABLE turns_fts_vocab")
    old.execute("DELETE FROM _sqlite_migrations WHERE name IN ('m020_search_words', 'm021_archived_runs')")
    old.execute("DROP TABLE archived_runs")
    old.commit()
    old.close()
    assert [h["run_id"] for h in found(path, "minc")] == [
        run
    ]  # read through an upgraded copy; the file is left as it is
    again = store.open_db(path)
    assert "m020_search_words" in {m.name for m in migrations.applied(again)}
    assert again.execute("SELECT COUNT(*) FROM turns_fts_vocab WHERE term = 'minci'").fetchone()[0] == 1


# -- size -------------------------------------------------------------------------------------


def test_a_huge_reply_is_found_with_a_snippet_cut_around_each_far_hit(tmp_path):
    path = tmp_path / "huge.db"
    db = store.open_db(path)
    filler = " ".join(["the porridge steams in the cold cell while rain taps the window"] * 3_000)  # ~200 kB
    reply = "Havel begins. " + filler + " At last he hands over the key."
    run = a_run(db, [reply])
    for words in (["Havel"], ["Havel", "key"], ["key", "Havel"]):
        (hit,) = [h for h in found(path, *words, run=run) if h["role"] == "assistant"]
        assert hit["idx"] == 1
        # A window around each hit, however far apart they are: both words show, the text between is cut.
        assert len(hit["snippet"]) < 300, hit["snippet"]
        for word in words:
            assert f"[{word}]" in hit["snippet"], hit["snippet"]
    (hit,) = [h for h in found(path, "key", run=run) if h["role"] == "assistant"]
    assert hit["snippet"].startswith("…") and hit["snippet"].endswith("[key].")


def test_snippets_are_one_line_and_marked_where_cut():
    text = "First line\n\nsecond   line with the word coin in it, and more text after it " + "x " * 100
    match = Query("coin").match(text)
    assert match is not None
    shown = snippet(text, match.spans)
    assert "\n" not in shown and "  " not in shown and "[coin]" in shown and shown.endswith("…")


# -- blind ------------------------------------------------------------------------------------


def write_config(text: str) -> None:
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_a_blind_reviewer_searches_the_text_as_shown_and_gets_no_ids_that_tell_time(tmp_path):
    path = tmp_path / "blind.db"
    db = store.open_db(path)
    masked = a_run(db, ["I was made by OpenAI, the keeper says."], model="openai/gpt-4o")
    plain = a_run(db, ["The keeper says nothing of OpenAI's rivals."], model="vendor/plain")
    before_blind = {h["run_id"] for h in found(path, "OpenAI")}
    assert before_blind == {masked, plain}  # a reviewer who sees the names finds both
    write_config('[reviewer]\nname = "ada"\nblind = true\n')
    hits = found(path, "OpenAI")
    codes = blinding.codes(db, [masked, plain], "ada")
    # The name is masked in every run (it is a maker's name): the search finds what is shown, and that is ▒▒▒▒▒▒.
    assert hits == []
    shown = found(path, "keeper", "says")
    assert {h["run_id"] for h in shown} == {codes[masked], codes[plain]}
    assert any("▒▒▒▒▒▒" in h["snippet"] for h in shown)
    # No id that decodes to a time: no ULID of the database, no turn id, in any field.
    ulids = {r[0] for r in db.execute("SELECT id FROM runs UNION SELECT id FROM turns")}
    text = json.dumps(shown)
    assert not any(u in text for u in ulids)
    assert not re.search(r"\b[0-9A-HJKMNP-TV-Z]{26}\b", text)
    assert all("turn_id" not in h and "model" not in h for h in shown)
    table = cli("search", "keeper", "--db", path).output
    assert not any(u[-8:] in table for u in ulids) and codes[masked] in table
