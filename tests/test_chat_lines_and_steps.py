"""Chats as people have them (issue 25 §5, issue 26 §7-8): bad lines skipped by number, a byte order mark read, the
same chat imported once, and player messages that are the scenario's steps taking those steps."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from sieve import scenarios, store
from sieve.cli import main
from sieve.store.record import turns as record
from sieve.store.scoring.navigation import position_of_step, tasks
from sieve.store.scoring.runview import RunView
from sieve.tui.screens.pickers import Picker
from sieve.tui.screens.review import ReviewScreen
from tests.support.review_runs import review_app
from tests.support.tui_helpers import on_screen, overlay_is, screen_is, screen_text, wait_until

KEYKEEPER = scenarios.load("keykeeper")
HEADER = {"user_name": "Ada", "character_name": "Havel", "create_date": "2024-08-07@18h47m12s", "chat_metadata": {}}


def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def message(text: str, user: bool) -> dict:
    return {"name": "Ada" if user else "Havel", "is_user": user, "send_date": 1691430000000, "mes": text}


def keykeeper_chat(steps: int = 14, mangle=None) -> list[dict]:
    """The keykeeper test played in SillyTavern: each scripted message typed in (as `mangle` changes it), answered."""
    lines = [HEADER]
    for n, (step, _) in enumerate(KEYKEEPER.script()[:steps]):
        text = mangle(n, step.text) if mangle else step.text
        lines += [message(text, True), message(f"Havel answers {step.id}, counting the coins.", False)]
    return lines


def write(path, entries: list, raw: dict[int, str] | None = None, bom: bool = False) -> None:
    """A .jsonl file of `entries`; `raw` puts lines of its own at given places (0-based, before that entry)."""
    lines = [json.dumps(e, ensure_ascii=False) for e in entries]
    for at, line in sorted((raw or {}).items(), reverse=True):
        lines.insert(at, line)
    path.write_text(("\ufeff" if bom else "") + "\n".join(lines) + "\n", encoding="utf-8")


# -- bad lines --------------------------------------------------------------------------------


def test_a_comment_a_trailing_comma_and_a_cut_last_line_are_named_and_the_rest_kept(tmp_path):
    chat = tmp_path / "chat.jsonl"
    entries = [HEADER, message("Let me out.", True), message("No.", False), message("Please.", True)]
    lines = [json.dumps(e) for e in entries]
    lines.insert(2, "// exported by hand, Tuesday")  # line 3
    lines[3] += ","  # line 4: the reply, with a comma after it
    lines.append('{"name": "Havel", "is_user": false, "mes": "Never, he sa')  # line 6: cut short
    chat.write_text("\n".join(lines) + "\n", encoding="utf-8")
    db_path = tmp_path / "c.db"
    result = cli("import", chat, "--scenario", "keykeeper", "--db", db_path, "--json")
    assert result.exit_code == 0, result.output
    assert f"{chat}:3: a comment, not a message: skipped" in result.stderr
    assert f"{chat}:4: a comma after the object: read without it" in result.stderr
    assert f"{chat}:6: the line ends before its object does" in result.stderr
    run_id = json.loads(result.stdout)["run"]
    turns = record.chosen_turns(store.open_db(db_path), run_id)
    assert [t["text"] for t in turns] == ["Let me out.", "No.", "Please."]
    assert len(json.loads(result.stdout)["warnings"]) == 3
    strict = cli("import", chat, "--scenario", "keykeeper", "--db", tmp_path / "s.db", "--strict")
    assert strict.exit_code == 2 and f"{chat}:3:1:" in strict.output
    assert store.list_runs(store.open_db(tmp_path / "s.db")) == []


def test_a_chat_cut_short_imports_as_an_interrupted_run_saying_which_line_lost_a_message(tmp_path):
    # QA #20: a truncated chat imported as a `complete` run with 13 of 14 replies, its warning a half-sentence.
    chat = tmp_path / "cut.jsonl"
    lines = [json.dumps(e) for e in keykeeper_chat(3)]
    lines[-1] = lines[-1][: lines[-1].index("counting")]  # the last reply, cut in its middle
    chat.write_text("\n".join(lines) + "\n", encoding="utf-8")
    db_path = tmp_path / "c.db"
    result = cli("import", chat, "--scenario", "keykeeper", "--db", db_path, "--json")
    assert result.exit_code == 0, result.output
    n = len(lines)
    warning = next(line for line in result.stderr.splitlines() if f"{chat}:{n}:" in line)
    assert "the line ends before its object does (cut short?): unterminated string starting at column " in warning
    assert warning.endswith(": skipped") and "at: skipped" not in warning
    found = json.loads(result.stdout)
    assert found["status"] == "interrupted" and f"line {n}" in found["error"] and "a message lost" in found["error"]
    (run,) = store.list_runs(store.open_db(db_path))
    assert run["status"] == "interrupted" and run["id"] == found["run"]
    said = cli("import", chat, "--scenario", "keykeeper", "--db", tmp_path / "d.db")
    assert ", interrupted: the chat file is cut short (line" in said.stdout
    resumed = cli("run", "--resume", found["run"], "--db", db_path)
    assert resumed.exit_code == 2 and "an imported chat cannot be resumed" in resumed.output
    whole = tmp_path / "whole.jsonl"
    whole.write_text("\n".join(json.dumps(e) for e in keykeeper_chat(3)) + "\n", encoding="utf-8")
    assert json.loads(cli("import", whole, "--scenario", "keykeeper", "--db", db_path, "--json").stdout)["status"] == (
        "complete"
    )


@pytest.mark.parametrize("where", ["start", "joined"])
def test_a_byte_order_mark_is_read_as_nothing(tmp_path, where):
    chat = tmp_path / "bom.jsonl"
    entries = [HEADER, message("Let me out.", True), message("No.", False)]
    if where == "start":
        write(chat, entries, bom=True)
    else:  # two files joined: the second's mark starts a line in the middle
        write(chat, entries[:2], raw={2: "\ufeff" + json.dumps(entries[2])})
    result = cli("import", chat, "--scenario", "keykeeper", "--db", tmp_path / "c.db", "--json", "--strict")
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    run_id = json.loads(result.stdout)["run"]
    turns = record.chosen_turns(store.open_db(tmp_path / "c.db"), run_id)
    assert [t["text"] for t in turns] == ["Let me out.", "No."]


# -- the same chat twice ----------------------------------------------------------------------------


def test_a_chat_imported_again_adds_nothing_and_says_so_unless_again(tmp_path):
    chat = tmp_path / "chat.jsonl"
    write(chat, keykeeper_chat(3))
    db_path = tmp_path / "c.db"
    first = cli("import", chat, "--scenario", "keykeeper", "--db", db_path, "--json")
    run_id = json.loads(first.stdout)["run"]
    again = cli("import", chat, "--scenario", "keykeeper", "--db", db_path)
    assert again.exit_code == 0, again.output
    assert f"already imported as run {run_id}; nothing added (--again adds a copy)" in again.output
    assert [r["id"] for r in store.list_runs(store.open_db(db_path))] == [run_id]
    # The same messages in another file (renamed, re-dated) are the same chat.
    renamed = tmp_path / "renamed.jsonl"
    write(renamed, [dict(HEADER, create_date="2025-01-01@10h00m00s"), *keykeeper_chat(3)[1:]])
    assert json.loads(cli("import", renamed, "--scenario", "keykeeper", "--db", db_path, "--json").stdout) == {
        "run": run_id,
        "added": False,
        "warnings": [],
    }
    copy = cli("import", chat, "--scenario", "keykeeper", "--db", db_path, "--again", "--json")
    assert copy.exit_code == 0 and json.loads(copy.stdout)["added"] is True
    assert len(store.list_runs(store.open_db(db_path))) == 2
    # Another scenario scores it otherwise: that is a run of its own.
    other = cli("import", chat, "--scenario", "train", "--db", db_path, "--json")
    assert json.loads(other.stdout)["added"] is True


# -- chats that follow the script ----------------------------------------------------------------


def test_player_messages_that_are_the_steps_take_them_and_the_import_says_how_many(tmp_path):
    def mangle(n: int, text: str) -> str:
        if n == 2:
            return text.replace("hurry", "hury").replace("“", '"')  # a typo: nearly word for word
        if n == 5:
            return "Can I have some more porridge?"  # the player's own message
        return "  " + text.replace("\n", "\n\n") + " "  # spacing as SillyTavern may keep it

    chat = tmp_path / "chat.jsonl"
    write(chat, keykeeper_chat(8, mangle))
    db_path = tmp_path / "c.db"
    result = cli("import", chat, "--scenario", "keykeeper", "--db", db_path)
    assert result.exit_code == 0, result.output
    assert "7 of 8 player messages are the scenario's steps, the others the player's own" in result.output
    db = store.open_db(db_path)
    (run,) = store.list_runs(db)
    players = [t for t in record.chosen_turns(db, run["id"]) if t["role"] == "user"]
    script = [s.id for s, _ in KEYKEEPER.script()]
    assert [t["step_id"] for t in players] == script[:5] + [None] + script[6:8]
    assert [t["origin"] for t in players] == ["setup"] + ["script"] * 4 + ["live"] + ["script"] * 2
    assert run["left_script_at"] == 5  # five scripted messages before the first of the player's own
    view = RunView.open(db, run["id"])
    assert view.replies_to("m2")[0]["text"] == "Havel answers m2, counting the coins."
    assert position_of_step(view, "m3") is not None


def test_an_off_script_chat_stays_off_the_script(tmp_path):
    chat = tmp_path / "chat.jsonl"
    write(chat, [HEADER, message("Hello there.", True), message("Hm.", False), message("Let me out!", True)])
    result = cli("import", chat, "--scenario", "keykeeper", "--db", tmp_path / "c.db", "--json")
    assert json.loads(result.stdout)["on_the_script"] == 0
    db = store.open_db(tmp_path / "c.db")
    (run,) = store.list_runs(db)
    assert run["left_script_at"] == 0
    assert {t["origin"] for t in record.chosen_turns(db, run["id"]) if t["role"] == "user"} == {"live"}


@pytest.mark.slow
async def test_g_i_and_the_step_header_work_on_an_imported_chat(tmp_path):
    chat = tmp_path / "chat.jsonl"
    write(chat, keykeeper_chat())
    db_path = tmp_path / "c.db"
    result = cli("import", chat, "--scenario", "keykeeper", "--db", db_path, "--json")
    run_id = json.loads(result.stdout)["run"]
    db = store.open_db(db_path)
    view = RunView.open(db, run_id)
    first = tasks(KEYKEEPER, view.card("ada"))[0]
    assert first.step == "m1"
    app = review_app(db, run_id)
    async with app.run_test(size=(170, 50)) as pilot:
        await wait_until(pilot, screen_is(app, ReviewScreen))
        review = app.screen
        await pilot.press("g", "3", "enter")
        await wait_until(pilot, on_screen(app, "step 3 of 13"))
        assert view.steps[review.turns[review.position]["id"]] == "m3"
        await pilot.press("i")  # the next thing to score, at its step, the picker open on it
        await wait_until(pilot, overlay_is(app, Picker))
        assert view.steps[review.turns[review.position]["id"]] == "m3"
        assert "off the script" not in screen_text(app)
