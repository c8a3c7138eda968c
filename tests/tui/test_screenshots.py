"""The palette's Screenshot: into a folder that exists (the data directory's screenshots/, or --screenshots DIR),
and a failure that says why (issue 26: Textual's default, ~/Downloads, may not exist)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from sieve.cli import main
from sieve.engine.endpoints import Endpoints
from sieve.tui.app import SieveApp
from tests.support.tui_helpers import wait_until


def said(app, text: str) -> bool:
    return any(text in n.message for n in app._notifications)


async def test_a_screenshot_goes_to_the_data_directorys_screenshots_made_if_missing(db, isolated_user_dirs):
    folder = isolated_user_dirs / "data" / "sieve" / "screenshots"
    assert not folder.exists()
    app = SieveApp(db, Endpoints(), "ada")
    async with app.run_test(size=(120, 30), notifications=True) as pilot:
        assert "Screenshot" in [c.title for c in app.get_system_commands(app.screen)]  # the palette's
        app.deliver_screenshot()
        await wait_until(pilot, lambda: said(app, "Saved screenshot to "), timeout=10)
    (saved,) = folder.glob("*.svg")
    assert saved.read_text(encoding="utf-8").startswith("<svg")
    assert any(str(saved) in n.message and "[$" not in n.message for n in app._notifications)  # no markup shown


@pytest.mark.slow
async def test_a_screenshot_goes_where_screenshots_says_and_a_folder_that_cannot_be_made_is_named_with_why(
    db, tmp_path
):
    chosen = tmp_path / "shots" / "deep"
    app = SieveApp(db, Endpoints(), "ada", screenshots=chosen)
    async with app.run_test(size=(120, 30), notifications=True) as pilot:
        app.deliver_screenshot()
        await wait_until(pilot, lambda: said(app, "Saved screenshot to "), timeout=10)
    assert len(list(chosen.glob("*.svg"))) == 1

    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    app = SieveApp(db, Endpoints(), "ada", screenshots=blocked / "shots")
    async with app.run_test(size=(120, 30), notifications=True) as pilot:
        app.deliver_screenshot()
        await wait_until(pilot, lambda: said(app, "Screenshot not saved: "), timeout=10)
        (message,) = [n.message for n in app._notifications if "Screenshot not saved" in n.message]
        assert str(blocked / "shots") in message and "Not a directory" in message
        assert not said(app, "Failed to save screenshot")  # Textual's own, which says no reason


def test_screenshots_is_an_option_of_the_commands_that_open_the_tui_only():
    result = CliRunner().invoke(main, ["--screenshots", "/tmp/x", "runs"])
    assert result.exit_code == 2 and "--screenshots is for the commands that open the TUI" in result.output
    for command in ("play", "review", "pair"):
        assert "--screenshots" in CliRunner().invoke(main, [command, "--help"]).output
