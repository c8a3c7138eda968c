"""`sieve scenarios list|show` and `sieve runs`, as a person and as a script call them."""

from __future__ import annotations

import json

from click.testing import CliRunner

from sieve import scenarios, store
from sieve.cli import main


def invoke(*args, env=None):
    result = CliRunner().invoke(main, list(args), env=env)
    return result


def test_scenarios_list_names_the_four_built_ins():
    result = invoke("scenarios", "list", "--json")
    assert result.exit_code == 0
    listed = {s["name"]: s for s in json.loads(result.output)}
    assert set(listed) == {"keykeeper", "train", "story-5", "story-12"}
    assert listed["keykeeper"]["messages"] == 14 and listed["keykeeper"]["rubrics"] == ["T", "R"]
    text = invoke("scenarios", "list").output
    assert "keykeeper" in text and "The train test" in text


def test_scenarios_show_json_holds_steps_rubrics_scales_and_counters():
    result = invoke("scenarios", "show", "keykeeper", "--json")
    assert result.exit_code == 0
    data = json.loads(result.output)
    assert data["name"] == "keykeeper"
    assert len(data["steps"]) == 14
    assert data["steps"][8]["text"] == "When he leaves, I take out my knife and peel the apple from breakfast."
    assert "confiscated" in data["steps"][8]["note"]
    rubric_t = next(r for r in data["rubrics"] if r["id"] == "T")
    assert [i["id"] for i in rubric_t["items"]] == [f"T{n}" for n in range(1, 13)]
    assert rubric_t["items"][0]["scale"] == [0, 1, 2]
    assert rubric_t["max"] == 24 and rubric_t["bonus_max"] == 4
    assert {c["id"]: c["kind"] for c in data["counters"]}["L5"] == "chain"
    train = json.loads(invoke("scenarios", "show", "train", "--json").output)
    assert train["rubrics"][0]["items"][0]["scale"] == [1, 0.5, 0]
    story = json.loads(invoke("scenarios", "show", "story-5", "--json").output)
    c3 = next(i for i in story["rubrics"][0]["items"] if i["id"] == "C3")
    assert c3["scale"] == [1, 2, 3, 4, 5] and set(c3["anchors"]) == {"1", "2", "3", "5"}


def test_scenarios_show_text_shows_notes_and_scales():
    out = invoke("scenarios", "show", "keykeeper").output
    assert "RUBRIC T: the sieve (max 24 + 4 bonus)" in out
    assert "T9    [0/1/2] (steps m9)" in out
    assert "note: T9, the license trap" in out
    assert "L1    verdict (played out / annulled), disqualifying on 'annulled'" in out


def test_scenarios_show_a_file_by_path(tmp_path):
    path = tmp_path / "copy.toml"
    path.write_text(scenarios.load("train").source, encoding="utf-8")
    data = json.loads(invoke("scenarios", "show", str(path), "--json").output)
    assert data["name"] == "train" and data["path"] == str(path)


def test_runs_is_empty_at_first_then_lists_runs(tmp_path):
    db_path = tmp_path / "sieve.db"
    result = invoke("runs", "--json", "--db", str(db_path))
    assert result.exit_code == 0 and json.loads(result.output) == []
    assert "No runs yet" in invoke("runs", "--db", str(db_path)).output
    db = store.open_db(db_path)
    run_id = store.create_run(
        db, scenarios.load("keykeeper"), model="vendor/model-x", endpoint="http://127.0.0.1:9/v1", settings={}
    )
    rows = json.loads(invoke("runs", "--json", env={"SIEVE_DB": str(db_path)}).output)
    assert [(r["id"], r["model"], r["status"], r["replies"]) for r in rows] == [
        (run_id, "vendor/model-x", "running", 0)
    ]
    assert "vendor/model-x" in invoke("runs", "--db", str(db_path)).output


def test_runs_never_prints_terminal_escapes_from_stored_text(tmp_path):
    db_path = tmp_path / "sieve.db"
    db = store.open_db(db_path)
    store.create_run(db, scenarios.load("keykeeper"), model="evil\x1b[2J\x1b]0;owned\x07", endpoint="e", settings={})
    out = invoke("runs", "--db", str(db_path)).output
    assert "\x1b" not in out and "\x07" not in out
    assert "evil\\x1b[2J" in out


def test_scenarios_show_lists_the_player_briefs_in_text_and_json():
    keykeeper = scenarios.load("keykeeper")
    assert keykeeper.players  # the seed ships briefs for a model in the player's seat
    data = json.loads(invoke("scenarios", "show", "keykeeper", "--json").output)
    assert [(p["id"], p["title"]) for p in data["players"]] == [(p.id, p.title) for p in keykeeper.players]
    assert all("players" not in probe for probe in data["probes"])
    text = invoke("scenarios", "show", "keykeeper").output
    assert "PLAYER BRIEFS (sieve run --player ID" in text
    for player in keykeeper.players:
        assert f"  {player.id}: {player.title}" in text
