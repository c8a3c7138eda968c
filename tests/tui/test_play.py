"""The Play screen driven with the keys a person presses, checked on the screen and in the database."""

from __future__ import annotations

from dataclasses import replace

import pytest
from textual.command import CommandList, CommandPalette

from sieve.store.record import turns as record
from sieve.tui.screens.play import PlayScreen
from sieve.tui.widgets.transcript import TranscriptView
from tests.support.tui_helpers import on_screen, play_app, screen_text, settle, wait_until


def palette_options(app) -> list[str]:
    """The commands the open command palette offers, as their titles."""
    if not isinstance(app.screen, CommandPalette):
        return []
    listing = app.screen.query_one(CommandList)
    return [str(listing.get_option_at_index(i).prompt).split("\n")[0] for i in range(listing.option_count)]


def shown_turns(app) -> list[dict]:
    """The turns the Play screen's transcript shows, in order."""
    transcript = app.screen.query_one(TranscriptView)
    return [transcript.turns[key] for key in transcript.keys]


def streamed(app) -> str:
    """The text shown so far of the last turn."""
    transcript = app.screen.query_one(TranscriptView)
    return transcript.text_of(transcript.keys[-1])


@pytest.mark.slow
async def test_play_steps_take_over_cancel_regenerate_and_branch(db, fake_server):
    app, session = play_app(db, fake_server, "pilot;tokens=12")
    async with app.run_test(size=(150, 45)) as pilot:
        for _ in range(4):  # message 0 and three scripted steps
            await pilot.press("n")
            await settle(app, pilot)
        shown = screen_text(app)
        assert "6 · player · m3" in shown and "Reply 4 from pilot:" in shown
        assert "step 4 of 13 · m4 [player]" in shown  # the next step, as it will be sent
        assert "note (not sent):" in shown and "T4, tears" in shown
        assert "FakeProvider" in shown and "stop / end_turn" in shown

        # Take over: a message of the reviewer's own, then back to the script.
        await pilot.press("t")
        await pilot.press(*"Havel, tell me about the ferryman.")
        await pilot.press("enter")
        await settle(app, pilot)
        await pilot.press("escape")
        await wait_until(pilot, lambda: not app.screen.live)
        assert "8 · player · live" in screen_text(app)

        # Cancel a reply while it streams: its text stays, marked cancelled.
        session.settings = replace(session.settings, model="pilot;tokens=400;delay=0.01")
        await pilot.press("n")
        await wait_until(
            pilot,
            lambda: shown_turns(app)[-1]["role"] == "assistant" and len(streamed(app)) > 40,
            what="the reply to stream more than 40 characters",
        )
        await pilot.press("c")
        await settle(app, pilot)
        cancelled = record.chosen_turns(db, session.run_id)[-1]
        assert cancelled["status"] == "cancelled" and len(cancelled["text"]) > 40
        assert "cancelled by the reviewer (partial text kept)" in screen_text(app)

        # Regenerate: the earlier reply stays as an alternative, the new one is chosen.
        session.settings = replace(session.settings, model="pilot;tokens=12")
        await pilot.press("r")
        await settle(app, pilot)
        idx = cancelled["idx"]
        alts = record.alternatives(db, session.run_id, idx)
        assert [(a["status"], a["chosen"]) for a in alts] == [("cancelled", 0), ("complete", 1)]
        assert f"{idx} · model · alternative 2 of 2 (chosen)" in screen_text(app)
        await pilot.press("left_square_bracket")  # browse back to the cancelled one and choose it
        await wait_until(pilot, on_screen(app, f"{idx} · model · alternative 1 of 2 (chosen) · cancelled"))
        assert [a["chosen"] for a in record.alternatives(db, session.run_id, idx)] == [1, 0]
        await pilot.press("right_square_bracket")
        await wait_until(pilot, on_screen(app, f"{idx} · model · alternative 2 of 2 (chosen)"))

        # Branch from the reply to message m1 (turn 3) into a new run.
        for _ in range(30):
            await pilot.press("up")
        for _ in range(3):
            await pilot.press("down")
        await pilot.press("b")
        await wait_until(pilot, lambda: isinstance(app.screen, PlayScreen) and app.screen.run_id != session.run_id)
        branch = record.get_run(db, app.screen.run_id)
        assert (branch["parent_run"], branch["parent_turn"]) == (session.run_id, 3)
        assert [t["idx"] for t in record.chosen_turns(db, branch["id"])] == [0, 1, 2, 3]
        assert "step 2 of 13 · m2 [player]" in screen_text(app)
        await pilot.press("n")
        await settle(app, pilot)
        assert len(record.chosen_turns(db, branch["id"])) == 6

    run = record.get_run(db, session.run_id)
    users = [t for t in record.chosen_turns(db, session.run_id) if t["role"] == "user"]
    assert [t["origin"] for t in users] == ["setup", "script", "script", "script", "live", "script"]
    assert users[4]["text"] == "Havel, tell me about the ferryman."
    assert run["left_script_at"] == 4


@pytest.mark.slow
async def test_play_all_runs_the_script_and_can_be_stopped(db, fake_server):
    app, session = play_app(db, fake_server, "all;tokens=10;delay=0.03", scenario="train")
    async with app.run_test(size=(150, 45)) as pilot:
        await pilot.press("a")
        await wait_until(pilot, lambda: session.position() >= 3, timeout=10)
        await pilot.press("a")  # stop after the reply that is streaming
        await settle(app, pilot)
        stopped_at = session.position()
        assert 3 <= stopped_at < 11
        await pilot.press("a")
        await settle(app, pilot)
        assert session.position() == 11
        assert "The script is finished." in screen_text(app)
    assert record.get_run(db, session.run_id)["status"] == "complete"


@pytest.mark.slow
async def test_errors_show_in_the_transcript_as_what_they_are(db, fake_server):
    app, session = play_app(db, fake_server, "refused;status=401")
    async with app.run_test(size=(150, 45)) as pilot:
        await pilot.press("n")
        await settle(app, pilot)
        shown = screen_text(app)
        assert "1 · model · failed" in shown
        assert f"POST {fake_server.base_url}/chat/completions: 401 Unauthorized" in shown
        session.settings = replace(session.settings, model="filtered;empty=1")
        await pilot.press("n")
        await settle(app, pilot)
        assert "3 · model · filtered" in screen_text(app)
        session.settings = replace(session.settings, model="dropped;tokens=30;drop=1;after=5")
        await pilot.press("n")
        await settle(app, pilot)
        assert "5 · model · failed" in screen_text(app) and "the connection dropped after" in screen_text(app)
        assert isinstance(app.screen, PlayScreen)  # no crash


@pytest.mark.slow
async def test_the_command_palette_offers_the_screens_keys(db, fake_server):
    app, _ = play_app(db, fake_server, "palette;tokens=3")
    async with app.run_test(size=(150, 45)) as pilot:
        commands = {c.title for c in app.get_system_commands(app.screen)}
        assert {
            "Next step (n)",
            "Take over (t)",
            "Cancel (c)",
            "Regenerate (r)",
            "Branch (b)",
            "Review (v)",
            "Play all (a)",
        } <= commands
        await pilot.press("ctrl+p")
        await pilot.press(*"Next step")
        await wait_until(pilot, lambda: "Next step (n)" in palette_options(app), what="the palette to offer Next step")
        await pilot.press("enter")
        await settle(app, pilot)
        assert len(record.chosen_turns(db, app.screen.run_id)) == 2


@pytest.mark.slow
async def test_keys_can_be_remapped_in_the_config(db, fake_server, isolated_user_dirs):
    config = isolated_user_dirs / "config" / "sieve" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('[keys]\n"play.next" = "space"\n', encoding="utf-8")
    app, session = play_app(db, fake_server, "remap;tokens=3")
    async with app.run_test(size=(150, 45)) as pilot:
        await pilot.press("space")
        await settle(app, pilot)
        assert len(record.chosen_turns(db, session.run_id)) == 2
        await pilot.press("n")  # no longer bound to this action
        await settle(app, pilot)
        assert len(record.chosen_turns(db, session.run_id)) == 2
        assert "space Next step" in screen_text(app).replace("␣", "space")


@pytest.mark.slow
async def test_a_fault_inside_play_all_shows_on_the_screen_and_keeps_what_was_played(db, fake_server):
    # A real fault in the record, not a mock: from the seventh turn on, inserting a turn fails.
    db.execute(
        "CREATE TRIGGER full_disk BEFORE INSERT ON turns WHEN (SELECT COUNT(*) FROM turns) >= 6 "
        "BEGIN SELECT RAISE(ABORT, 'disk is full [/] [bold]'); END"
    )
    app, session = play_app(db, fake_server, "full;tokens=6", scenario="train")
    async with app.run_test(size=(150, 45), notifications=True) as pilot:
        await pilot.press("a")
        await wait_until(pilot, on_screen(app, "disk is full"), timeout=10)
        assert len(app._notifications) == 1, [n.message for n in app._notifications]
        (shown,) = app._notifications
        assert shown.title == "Playing the script failed" and shown.severity == "error"
        assert "IntegrityError: disk is full [/] [bold]" in screen_text(app)  # an error's text is data too
        assert isinstance(app.screen, PlayScreen) and not app.screen.busy and not app.screen.runner.playing_all
        # What was played before the fault is kept, complete, and on the screen.
        kept = record.chosen_turns(db, session.run_id)
        assert [(t["role"], t["status"]) for t in kept] == [("user", "complete"), ("assistant", "complete")] * 3
        assert [t["id"] for t in shown_turns(app)] == [t["id"] for t in kept]
        # The screen still answers: with the disk freed, the next step goes out.
        db.execute("DROP TRIGGER full_disk")
        await pilot.press("n")
        await settle(app, pilot)
        assert len(record.chosen_turns(db, session.run_id)) == 8
        assert "7 · model" in screen_text(app)


def footer_keys(app) -> dict[str, str]:
    """What the footer shows: key -> description."""
    return {b.key: b.description for _, b, enabled, _ in app.screen.active_bindings.values() if b.show and enabled}


@pytest.mark.slow
async def test_c_cancels_a_streaming_reply_from_the_take_over_input_and_the_footer_says_so(db, fake_server):
    app, session = play_app(db, fake_server, "typing;tokens=10")  # then replies long enough to be cancelled
    async with app.run_test(size=(150, 45)) as pilot:
        await pilot.press("n")
        await settle(app, pilot)
        await pilot.press("t")
        live = app.screen.query_one("#live")
        await wait_until(pilot, lambda: live.has_focus)
        # Typing: the footer shows the keys of the input, not the script's (n would type an n).
        keys = footer_keys(app)
        assert keys.get("enter") == "Send" and keys.get("escape") == "Script" and "n" not in keys and "c" not in keys

        session.settings = replace(session.settings, model="typing;tokens=3000;delay=0.01")
        await pilot.press(*"Go on.", "enter")
        await wait_until(pilot, lambda: app.screen.busy and len(streamed(app)) > 40, what="the reply to stream")
        await wait_until(pilot, lambda: footer_keys(app).get("c") == "Cancel reply", what="c in the footer")
        await pilot.press("c")  # the input is empty: c cancels, it types nothing
        await settle(app, pilot)
        first = record.chosen_turns(db, session.run_id)[-1]
        assert first["status"] == "cancelled" and live.value == "" and live.has_focus

        # With something typed, c is a letter; escape, then c, cancels.
        await pilot.press(*"Go on.", "enter")
        await wait_until(pilot, lambda: app.screen.busy and len(streamed(app)) > 40, what="the second reply")
        await pilot.press(*"Havel, ")
        await pilot.press("c")
        assert live.value == "Havel, c" and app.screen.busy and "c" not in footer_keys(app)
        await pilot.press("escape", "c")
        await settle(app, pilot)
        second = record.chosen_turns(db, session.run_id)[-1]
        assert second["status"] == "cancelled" and second["id"] != first["id"]
        assert live.value == "Havel, c"  # what was typed is kept for later


@pytest.mark.slow
async def test_the_figures_say_playing_while_a_reply_streams_and_open_between_turns(db, fake_server):
    app, _session = play_app(db, fake_server, "status;tokens=400;delay=0.01")
    async with app.run_test(size=(160, 45)) as pilot:

        def status() -> str:
            line = next(x for x in screen_text(app).splitlines() if "status " in x and "│" in x)
            return line.split("status", 1)[1].split("│")[0].strip()

        assert status() == "open"
        await pilot.press("n")
        await wait_until(pilot, lambda: status() == "playing", what="the figures to say playing while it streams")
        assert streamed(app) and "Reply" in streamed(app)
        await settle(app, pilot)
        await wait_until(pilot, lambda: status() == "open")
