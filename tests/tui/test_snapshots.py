"""Snapshot tests: each screen as it looks, compared with the SVG accepted before (tests/tui/__snapshots__/).

A change in a screen's look fails here with a report of both pictures (snapshot_report.html). When the
change is meant, look at the report, then regenerate on purpose:

    python -m pytest tests/tui/test_snapshots.py --snapshot-update

never to make a failure go away. The states are tests/support/scenes.py, the same the README's screenshots show.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from pytest_textual_snapshot import normalize_svg

from sieve import store
from tests.support import scenes

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOTS = Path(__file__).parent / "__snapshots__" / "test_snapshots"
# Every screen at 100x30 and 160x50 in the dark theme and at 100x30 in the light one, as the whole suite
# runs them; the quick run (-m "not slow") keeps one, Home, to show the snapshots still work (three dozen
# apps started one after another would take the quick run's time on their own).
LOOKS = {"100x30-dark": (100, 30, "textual-dark"), "160x50-dark": (160, 50, "textual-dark")}
LOOKS["100x30-light"] = (100, 30, "textual-light")
CASES = [
    pytest.param(
        name,
        *look,
        id=f"{name}-{look_id}",
        marks=() if (name, look_id) == ("home", "100x30-dark") else pytest.mark.slow,
    )
    for look_id, look in LOOKS.items()
    for name in scenes.SCENES
]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The scenes' database, built once; each test gets a copy (Home, for one, releases runs as it opens)."""
    return scenes.build(tmp_path_factory.mktemp("scenes") / "scenes.db")


@pytest.mark.parametrize("name,width,height,theme", CASES)
@pytest.mark.slow
def test_the_screen_looks_as_accepted(name, width, height, theme, built, tmp_path, snap_compare):
    template, runs = built
    copy = sqlite3.connect(tmp_path / "scenes.db")
    template.conn.backup(copy)
    copy.close()
    db = store.open_db(tmp_path / "scenes.db")
    scene = scenes.SCENES[name]
    app = scene.make(db, runs)
    app.theme = theme
    assert snap_compare(app, terminal_size=(width, height), run_before=scenes.prepare(scene))


@pytest.mark.slow
def test_the_readme_screenshots_are_made_from_the_snapshot_states(tmp_path):
    """`python screenshots/make.py` runs, and its Home, Play and Review are the 160x50 snapshots, picture for
    picture."""
    result = subprocess.run(
        [sys.executable, str(ROOT / "screenshots" / "make.py"), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    made = {p.name for p in tmp_path.glob("*.svg")}
    assert made == {
        "home.svg",
        "play.svg",
        "results-light.svg",
        "review.svg",
        "scorecard-light.svg",
        "review-draft.svg",
        "review-picker.svg",
    }
    for picture, scene in (("home.svg", "home"), ("play.svg", "play"), ("review.svg", "review")):
        accepted = SNAPSHOTS / f"test_the_screen_looks_as_accepted[{scene}-160x50-dark].svg"
        assert normalize_svg((tmp_path / picture).read_text()) == normalize_svg(accepted.read_text())
