"""A model in the player's seat: briefs in the scenario format, the player's view without notes, Play's m, sieve run --player."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from sieve import scenarios, store
from sieve.engine.gateway import Endpoint, Gateway
from sieve.engine.player import Seat, player_messages
from sieve.engine.session import Session, resolve_settings
from sieve.scenarios import ScenarioError
from sieve.store.record import turns as record
from sieve.store.record.annotations import Quote
from sieve.store.scoring import evidence
from sieve.store.scoring.runview import RunView
from tests.support.tui_helpers import FAST_RETRY, on_screen, play_app, screen_text, settle, wait_until

KEYKEEPER = scenarios.load("keykeeper")
NOTES = [s.note for s in KEYKEEPER.steps if s.note]


def seat(server, model: str = "player;tokens=6", brief: str = "sideways", turns: int = 3) -> Seat:
    return Seat(
        KEYKEEPER.player(brief),
        Gateway(Endpoint(server.base_url, name="fake")),
        resolve_settings(model, KEYKEEPER),
        turns,
    )


def player_requests(server, model: str) -> list[dict]:
    return [r["body"] for r in server.requests if r["model"] == model]


def test_every_built_in_scenario_carries_two_or_three_briefs():
    for name in scenarios.builtin_names():
        players = scenarios.load(name).players
        assert 2 <= len(players) <= 3, name
        for player in players:
            assert player.title and len(player.brief) > 100


@pytest.mark.parametrize(
    ("players", "message"),
    [
        ('[[players]]\nid = "a b"\ntitle = "t"\nbrief = "b"', "not a valid id"),
        ('[[players]]\nid = "a"\ntitle = "t"', "missing required key 'brief'"),
        ('[[players]]\nid = "a"\ntitle = "t"\nbrief = "  "', "must not be empty"),
        (
            '[[players]]\nid = "a"\ntitle = "t"\nbrief = "b"\n\n[[players]]\nid = "a"\ntitle = "u"\nbrief = "c"',
            "duplicate player id 'a'",
        ),
        ('[[players]]\nid = "a"\ntitle = "t"\nbrief = "b"\nnotes = "x"', "unknown key 'notes'"),
    ],
)
def test_a_bad_brief_names_its_place(tmp_path, players, message):
    path = tmp_path / "bad.toml"
    path.write_text(
        '[scenario]\nname = "s"\ntitle = "S"\nversion = 1\n\n[[steps]]\nid = "m0"\nkind = "setup"\ntext = "Hi."\n\n'
        + players,
        encoding="utf-8",
    )
    with pytest.raises(ScenarioError, match=message) as caught:
        scenarios.load(path)
    assert caught.value.line is not None and str(caught.value).startswith(f"{path}:")


def test_the_player_sees_the_exchange_from_its_side_and_never_a_note():
    turns = [
        {"role": "user", "origin": "setup", "text": KEYKEEPER.steps[0].text, "status": "complete"},
        {"role": "assistant", "origin": "reply", "text": "Havel brings porridge.", "status": "complete"},
        {"role": "user", "origin": "script", "text": KEYKEEPER.steps[1].text, "status": "complete"},
        {"role": "assistant", "origin": "reply", "text": "He takes the coin.", "status": "complete"},
    ]
    messages = player_messages(KEYKEEPER, turns, KEYKEEPER.player("sideways"))
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    assert KEYKEEPER.player("sideways").brief in messages[0]["content"]
    assert KEYKEEPER.steps[0].text in messages[0]["content"]  # the opening message it wrote, as context
    assert messages[1]["content"] == "Havel brings porridge." and messages[3]["content"] == "He takes the coin."
    assert messages[2]["content"] == KEYKEEPER.steps[1].text  # its own message, as its own
    body = json.dumps(messages)
    assert not any(note in body for note in NOTES)


async def test_a_played_turn_streams_under_its_own_origin_and_the_model_answers_it(db, fake_server):
    gateway = Gateway(Endpoint(fake_server.base_url, name="fake"))
    session = Session.start(db, KEYKEEPER, gateway, resolve_settings("tested;tokens=5", KEYKEEPER))
    for _ in range(3):
        await session.send_next()
    result = await session.send_played(seat(fake_server, "played-a;tokens=7"))
    assert result.status == "complete"
    played, answer = record.chosen_turns(db, session.run_id)[-2:]
    assert (played["role"], played["origin"], played["played_by"], played["status"]) == (
        "user",
        "player",
        "played-a;tokens=7",
        "complete",
    )
    assert json.loads(played["played_settings"])["brief"] == "sideways"
    assert played["text"].startswith("Reply") and played["completion_tokens"]  # its own request, counted
    assert answer["role"] == "assistant" and answer["origin"] == "reply"
    # The model under test got the played message as the player's words.
    last = [r for r in fake_server.requests if r["model"] == "tested;tokens=5"][-1]["body"]["messages"]
    assert last[-1] == {"role": "user", "content": played["text"]}
    # The player model's request holds the exchange and its brief, and no hidden note.
    (body,) = player_requests(fake_server, "played-a;tokens=7")
    assert not any(note in json.dumps(body) for note in NOTES)
    assert body["messages"][0]["role"] == "system" and "Ask sideways questions" in body["messages"][0]["content"]
    # A quote from the played turn is the player's words, not evidence of the model's.
    view = RunView.open(db, session.run_id)
    annotation = evidence.annotate(
        db,
        session.run_id,
        view=view,
        quote=Quote(None, None, None, played["text"][:20]),
        reviewer="ada",
        item="T1",
        rubric="T",
        kind="score",
        score=1,
    )
    assert db.execute("SELECT verification FROM annotations WHERE id = ?", [annotation]).fetchone()[0] == "player"
    assert view.kind == "explored"


async def test_a_failed_player_message_is_kept_and_never_sent_on(db, fake_server):
    gateway = Gateway(Endpoint(fake_server.base_url, name="fake"))
    # Quick retries: the failure is the point, not the backoff before it.
    session = Session.start(db, KEYKEEPER, gateway, resolve_settings("tested2;tokens=5", KEYKEEPER), retry=FAST_RETRY)
    await session.send_next()
    result = await session.send_played(seat(fake_server, "broken;status=500;times=99"))
    assert result.status == "failed"
    failed = record.chosen_turns(db, session.run_id)[-1]
    assert (failed["origin"], failed["status"]) == ("player", "failed")
    assert not session.needs_reply()  # nothing to answer
    await session.send_next()  # the script goes on; the failed message is not part of the conversation
    sent = [r for r in fake_server.requests if r["model"] == "tested2;tokens=5"][-1]["body"]["messages"]
    assert all(m.get("content") != failed["text"] or not failed["text"] for m in sent)
    assert [m["role"] for m in sent][-1] == "user" and sent[-1]["content"] == KEYKEEPER.steps[1].text


def test_blind_review_masks_the_player_model_too(db, fake_server):
    run_id = store.create_run(db, KEYKEEPER, model="vendor/tested", endpoint="fake", settings={})
    record.add_turn(db, run_id, idx=0, role="user", origin="setup", text="Begin.", step_id="m0")
    record.add_turn(db, run_id, idx=1, role="assistant", origin="reply", text="Havel nods.")
    record.add_turn(
        db,
        run_id,
        idx=2,
        role="user",
        origin="player",
        text="I ask Zephyrmodel about the gate.",
        played_by="acme/zephyrmodel-7b",
    )
    view = RunView.open(db, run_id, blind=True)
    assert "Zephyrmodel" not in view.mask("I ask Zephyrmodel about the gate.")


@pytest.mark.slow
async def test_play_hands_the_seat_to_a_model_stops_it_takes_over_and_goes_back_to_the_script(db, fake_server):
    app, session = play_app(db, fake_server, "pilot-m;tokens=6")
    async with app.run_test(size=(160, 48), notifications=True) as pilot:
        for _ in range(2):  # message 0 and m1
            await pilot.press("n")
            await settle(app, pilot)
        await pilot.press("m")
        await wait_until(pilot, on_screen(app, "A model in the player's seat"))
        await pilot.press("enter")  # the first brief: sideways
        await pilot.press(*"seated;tokens=5;delay=0.2", "enter")  # the player model, slow enough to stop
        await pilot.press(*fake_server.base_url, "enter")  # its endpoint
        await pilot.press("backspace", "3", "enter")  # three turns
        await wait_until(
            pilot,
            lambda: any(t["origin"] == "player" for t in record.chosen_turns(db, session.run_id)),
            timeout=10,
            what="the seated model's first turn",
        )
        await pilot.press("m")  # stop after the current turn
        await settle(app, pilot)
        origins = [t["origin"] for t in record.chosen_turns(db, session.run_id)]
        played = origins.count("player")
        assert 1 <= played < 3  # stopped before its three turns
        assert "played by seated;tokens=5;delay=0.2 (sideways)" in screen_text(app)  # the transcript marks them
        # Take over by hand, then back to the script where it left off.
        await pilot.press("t")
        await pilot.press(*"Havel, who built this post?", "enter")
        await settle(app, pilot)
        await pilot.press("escape")
        await pilot.press("n")
        await settle(app, pilot)
    turns = record.chosen_turns(db, session.run_id)
    users = [(t["origin"], t["step_id"]) for t in turns if t["role"] == "user"]
    assert users[:2] == [("setup", "m0"), ("script", "m1")]
    assert users[2 : 2 + played] == [("player", None)] * played
    assert users[2 + played :] == [("live", None), ("script", "m2")]
    assert all(t["status"] == "complete" for t in turns)
    assert record.get_run(db, session.run_id)["left_script_at"] == 2


@pytest.mark.slow
def test_sieve_run_plays_three_model_played_turns_after_the_script(tmp_path, fake_server):
    db_path = tmp_path / "p.db"
    args = [
        sys.executable,
        "-m",
        "sieve",
        "run",
        "keykeeper",
        "-m",
        "cli-tested;tokens=5",
        "--endpoint",
        fake_server.base_url,
        "--player",
        "sideways",
        "--player-model",
        "cli-player;tokens=5",
        "--player-endpoint",
        fake_server.base_url,
        "--turns",
        "3",
        "--db",
        str(db_path),
        "--json",
    ]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    (row,) = json.loads(proc.stdout)
    db = store.open_db(db_path)
    turns = record.chosen_turns(db, row["run"])
    assert [t["origin"] for t in turns if t["role"] == "user"][-4:] == ["script", "player", "player", "player"]
    assert row["turns"] == 14 + 3 and row["status"] == "complete"
    # --no-script: the setup message, then the player model only.
    proc = subprocess.run([*args, "--no-script"], capture_output=True, text=True, timeout=120)
    (row,) = json.loads(proc.stdout)
    users = [t["origin"] for t in record.chosen_turns(store.open_db(db_path), row["run"]) if t["role"] == "user"]
    assert users == ["setup", "player", "player", "player"]
    results = subprocess.run(
        [
            sys.executable,
            "-m",
            "sieve",
            "results",
            "--scenario",
            "keykeeper",
            "--kind",
            "explored",
            "--format",
            "json",
            "--db",
            str(db_path),
        ],
        capture_output=True,
        text=True,
    )
    assert len(json.loads(results.stdout)) == 2 and {r["kind"] for r in json.loads(results.stdout)} == {"explored"}
    bad = subprocess.run([*(a if a != "sideways" else "nope" for a in args)], capture_output=True, text=True)
    assert bad.returncode == 2 and "no player brief 'nope'" in bad.stderr and "sideways" in bad.stderr


@pytest.mark.slow
@pytest.mark.embedded
def test_the_embedded_model_plays_both_sides_offline(tmp_path):
    db_path = tmp_path / "local.db"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "sieve",
            "run",
            "keykeeper",
            "--player",
            "sideways",
            "--turns",
            "2",
            "--no-script",
            "--max-tokens",
            "30",
            "--db",
            str(db_path),
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    (row,) = json.loads(proc.stdout)
    turns = record.chosen_turns(store.open_db(db_path), row["run"])
    assert [t["origin"] for t in turns] == ["setup", "reply", "player", "reply", "player", "reply"]
    assert all(t["text"].strip() for t in turns)
    assert {t["played_by"] for t in turns if t["origin"] == "player"} == {"SmolLM2-135M-Instruct"}
