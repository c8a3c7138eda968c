"""Suggestions end to end: detectors over a stored run, `sieve suggest`, accepting and rejecting, the card.

Runs are real SQLite files built from the embedded model's own replies
(tests/data/transcripts.json); where a test needs the passages issue 13 quotes
from another run of that model, they are set into those replies.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from sieve import scenarios, store
from sieve.cli import main
from sieve.store.record import annotations as notes
from sieve.store.record import suggestions as stored
from sieve.store.record import turns as record
from sieve.store.scoring import suggestions
from sieve.store.scoring.runview import RunView

DATA = Path(__file__).resolve().parent / "data"
LOCAL = json.loads((DATA / "transcripts.json").read_text(encoding="utf-8"))["runs"][0]
REPLIES = [t["text"] for t in LOCAL["turns"] if t["role"] == "assistant"]
SWORD = "her sister who had a sword on her shoulder"
ASIDE = "(I was just showing you the scene I can do for two or three beats.)"
# Issue 13: SmolLM2 "repeats 'her sister who had a sword on her shoulder' across five replies" and
# "steps out with '(I was just showing you the scene I can do for two or three beats.)'".
SWORD_REPLIES = {
    2: f"I looked at {SWORD} and said nothing.",
    3: f"Jake turned to {SWORD}.",
    4: f"Nobody spoke to {SWORD}, not even the guard.",
    5: f"I smiled at {SWORD}. {ASIDE}",
    6: f"The room went quiet for {SWORD}.",
}


def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def make_run(db, replies: list[str], scenario=None, model: str = "SmolLM2-135M-Instruct") -> str:
    """A complete run of the keykeeper script whose replies are `replies`."""
    scenario = scenario or scenarios.load("keykeeper")
    run_id = store.create_run(db, scenario, model=model, endpoint="local", settings={"max_tokens": 300})
    for i, (reply, (step, n)) in enumerate(zip(replies, scenario.script())):
        origin = "setup" if step.kind == "setup" else "script"
        record.add_turn(
            db, run_id, idx=2 * i, role="user", origin=origin, text=step.text, step_id=step.id, step_repeat=n
        )
        record.add_turn(db, run_id, idx=2 * i + 1, role="assistant", origin="reply", text=reply)
    record.set_run_status(db, run_id, "complete")
    return run_id


def with_sword(replies: list[str]) -> list[str]:
    return [r + "\n" + SWORD_REPLIES[i] if i in SWORD_REPLIES else r for i, r in enumerate(replies)]


@pytest.fixture
def db_path(tmp_path):
    return tmp_path / "s.db"


def test_sieve_suggest_finds_the_sword_chain_with_its_length_and_the_aside(db_path):
    db = store.open_db(db_path)
    run_id = make_run(db, with_sword(REPLIES))
    result = cli("suggest", run_id[-6:], "--json", "--db", db_path)
    assert result.exit_code == 0, result.output
    found = json.loads(result.output)[0]["suggestions"]
    chains = [s for s in found if s["item"] == "L5" and SWORD in s["spans"][0]["text"]]
    assert len(chains) == 1
    chain = chains[0]
    assert chain["score"] == 5 and chain["length"] == 5 and chain["kind"] == "count"
    assert chain["turns"] == [5, 7, 9, 11, 13]  # the replies to m2..m6
    turns = {t["id"]: t for t in record.chosen_turns(db, run_id)}
    for span in chain["spans"]:  # offsets into the original text of each turn
        assert turns[span["turn_id"]]["text"][span["start"] : span["end"]] == span["text"]
    asides = [s for s in found if s["item"] == "L6" and s["spans"][0]["text"] == ASIDE]
    assert len(asides) == 1 and asides[0]["source_name"] == "out-of-game" and asides[0]["turns"] == [11]
    # Nothing was stored: printing is not storing.
    assert stored.count(db, run_id) == 0
    table = cli("suggest", run_id, "--db", db_path)
    assert "chain 5" in table.output and "(I was just showing you the scene" in table.output


def test_suggestions_count_only_once_a_reviewer_accepts_them(db_path):
    db = store.open_db(db_path)
    run_id = make_run(db, with_sword(REPLIES))
    stored_now = cli("suggest", "--scenario", "keykeeper", "--db", db_path)
    assert stored_now.exit_code == 0 and "suggestions stored for 1 runs" in stored_now.output
    view = RunView.open(db, run_id)
    pending = view.pending_suggestions("ada")
    assert pending and view.card("ada").counters[4].value == 0  # L5: nothing counts yet
    chain = next(s for s in pending if s["item"] == "L5" and s["score"] == 5)
    aside = next(s for s in pending if s["item"] == "L6" and s["spans"][0]["text"] == ASIDE)

    annotation_id = suggestions.accept(db, chain["id"], "ada", view=view)
    suggestions.reject(db, aside["id"], "ada")
    card = view.card("ada")
    assert card.counters[4].value == 5  # L5, the chain's length
    assert card.counters[5].value == 0  # L6: the rejection counts nothing
    assert len(view.pending_suggestions("ada")) == len(pending) - 2
    assert len(view.pending_suggestions("bob")) == len(pending)  # decisions are each reviewer's own
    annotation = next(a for a in notes.active(db, run_id) if a["id"] == annotation_id)
    assert annotation["verification"] == "exact" and annotation["quote"] == chain["spans"][0]["text"]
    assert annotation["source"] == f"suggestion {chain['id']}: detector repetition v1"

    # Undo takes the annotation back, and the suggestion is pending again; redo accepts it again.
    notes.undo(db, run_id, "ada")
    assert view.card("ada").counters[4].value == 0
    assert chain["id"] in {s["id"] for s in view.pending_suggestions("ada")}
    notes.redo(db, run_id, "ada")
    assert chain["id"] not in {s["id"] for s in view.pending_suggestions("ada")}
    # An edit of the accepted annotation keeps the suggestion decided.
    notes.add(db, run_id, reviewer="ada", item="L5", kind="count", score=4, replaces=annotation_id)
    assert chain["id"] not in {s["id"] for s in view.pending_suggestions("ada")}
    assert view.card("ada").counters[4].value == 4

    again = cli("suggest", "--scenario", "keykeeper", "--json", "--db", db_path)
    assert json.loads(again.output) == [{"run": run_id, "model": "SmolLM2-135M-Instruct", "stored": None}]

    rows = json.loads(cli("results", "--detectors", "--format", "json", "--db", db_path).output)
    by = {(r["detector"], r["reviewer"]): r for r in rows}
    assert by[("repetition", "ada")]["accepted"] == 1 and by[("repetition", "ada")]["rejected"] == 0
    assert by[("out-of-game", "ada")]["rejected"] == 1 and by[("out-of-game", "ada")]["precision"] == 0
    table = cli("results", "--detectors", "--db", db_path).output
    assert "repetition" in table and "precision" in table


def test_a_run_stored_before_detectors_were_declared_borrows_the_current_declarations(db):
    text = scenarios.load("keykeeper").source
    old_text = "\n".join(line for line in text.splitlines() if not line.startswith(("detector", "player_", "language")))
    old = scenarios.load_text(old_text, "<builtin>/keykeeper.toml")
    assert not old.detector_uses() and not old.player_names
    run_id = make_run(db, with_sword(REPLIES), scenario=old)
    found = suggestions.detect(RunView.open(db, run_id))
    assert any(s.item == "L5" and s.score == 5 for s in found)
    assert any(s.item == "L8" for s in found)  # plays-player runs: the current file names Jarla


def test_a_judge_can_suggest_through_the_same_queue(db):
    """The judge (issue 12) proposes events no detector covers; they wait for a person like any other."""
    run_id = make_run(db, REPLIES)
    view = RunView.open(db, run_id)
    reply = view.replies()[2]
    quote = "I was to pay this debt to Maathala."
    start = reply["text"].index(quote)
    [suggestion_id] = stored.add(
        db,
        run_id,
        [
            {
                "item": "L1",
                "kind": "verdict",
                "value": "played out",
                "step_id": "m3",
                "spans": [
                    {
                        "turn_id": reply["id"],
                        "turn": reply["idx"],
                        "start": start,
                        "end": start + len(quote),
                        "text": quote,
                    }
                ],
                "reason": "the false memory gets a consequence",
                "confidence": 0.7,
                "source": "judge",
                "source_name": "opus-judge",
                "source_version": "2025-09",
            }
        ],
    )
    assert view.card("ada").counters[0].verdicts == {}
    suggestions.accept(db, suggestion_id, "ada", view=view)
    assert view.card("ada").counters[0].verdicts == {"m3": "played out"}
    assert suggestions.detector_table(db)[0]["detector"] == "opus-judge"


def test_suggest_needs_runs_or_a_scenario(db_path):
    store.open_db(db_path)
    assert cli("suggest", "--db", db_path).exit_code == 2
    assert "no runs of the scenario" in cli("suggest", "--scenario", "train", "--db", db_path).output
    assert cli("results", "--db", db_path).exit_code == 2


def test_a_suggestion_about_a_reply_regenerated_since_is_no_longer_pending(db):
    run_id = make_run(db, with_sword(REPLIES))
    view = RunView.open(db, run_id)
    suggestions.store(db, view)
    before = view.pending_suggestions("ada")
    reply = view.replies()[5]  # holds the aside and the sword
    about_it = [s for s in before if any(span["turn_id"] == reply["id"] for span in s["spans"])]
    assert about_it
    record.add_turn(db, run_id, idx=reply["idx"], role="assistant", origin="reply", text="Havel nods.", alt=1)
    view.refresh()
    after = {s["id"] for s in view.pending_suggestions("ada")}
    assert not after & {s["id"] for s in about_it} and len(after) == len(before) - len(about_it)


def test_an_empty_filtered_reply_and_ceiling_hits_are_flags_of_their_own(db):
    run_id = make_run(db, REPLIES[:4])
    replies = [t for t in record.chosen_turns(db, run_id) if t["role"] == "assistant"]
    record.finish_turn(db, replies[1]["id"], "filtered", "", {"finish_reason": "content_filter"})
    for reply in (replies[0], replies[2]):
        record.finish_turn(db, reply["id"], "length", reply["text"], {"finish_reason": "length"})
    view = RunView.open(db, run_id)
    found = [s for s in suggestions.detect(view) if s.detector == "form"]
    by_category = {s.finding.category: s for s in found}
    assert set(by_category) == {"empty", "length"}
    assert all(s.item == "form" and s.kind == "flag" for s in found)  # keykeeper names no counter for form
    assert by_category["empty"].finding.reason == "the reply is filtered"
    assert [sp.turn_idx for sp in by_category["length"].spans] == [1, 5]
    assert by_category["length"].finding.reason.startswith("2 of 4 replies cut at the output ceiling")
    suggestions.store(db, view)
    empty = next(s for s in view.pending_suggestions("ada") if s["category"] == "empty")
    annotation_id = suggestions.accept(db, empty["id"], "ada", view=view)
    flag = next(a for a in notes.active(db, run_id) if a["id"] == annotation_id)
    assert (flag["kind"], flag["item"], flag["quote"], flag["turn_id"]) == ("flag", "form", None, replies[1]["id"])
    assert view.card("ada").notes[0]["id"] == annotation_id
