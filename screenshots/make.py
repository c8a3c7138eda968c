"""Regenerate the screenshots the README and docs/ show (screenshots/*.svg) from the snapshot tests' states.

    python screenshots/make.py [--out DIR]

The states are tests/support/scenes.py: fixed records made from transcripts the embedded SmolLM2-135M
wrote (tests/data), so the pictures change only when a screen does. Home and Play mid-stream in
the dark theme, Results in the light theme, Review with its highlighted quotes in the dark theme,
the whole score card, an item chosen on it, in the light theme, Review with a judge's draft
beside the card, and the picker `i` opens on the next item with its quote selected by `.`. Needs
the test extra (pip install -e '.[test]'); takes a few seconds; no model is started. The report's
picture (report.png) is taken by its browser test in Chromium
(tests/test_report_browser.py::test_the_readme_screenshot_of_the_field), which skips where none is found.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # tests.support.scenes, from a checkout

# (file, scene, size, theme): the README or a page of docs/ shows each.
SHOTS = [
    ("home.svg", "home", (160, 50), "textual-dark"),
    ("play.svg", "play", (160, 50), "textual-dark"),
    ("results-light.svg", "results", (160, 50), "textual-light"),
    ("review.svg", "review", (160, 50), "textual-dark"),
    ("scorecard-light.svg", "review-card", (150, 62), "textual-light"),
    ("review-draft.svg", "review-draft", (160, 50), "textual-dark"),
    ("review-picker.svg", "item-picker", (160, 50), "textual-dark"),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=HERE, help="the folder to write the SVG files to")
    out = parser.parse_args().out
    with tempfile.TemporaryDirectory() as tmp:
        # A person's own config (keys, reviewer, endpoints) and database stay out of the pictures.
        os.environ.update(XDG_CONFIG_HOME=f"{tmp}/config", XDG_DATA_HOME=f"{tmp}/data")
        os.environ.pop("SIEVE_DB", None)
        from tests.support import scenes

        out.mkdir(parents=True, exist_ok=True)
        for name, scene, size, theme in SHOTS:
            # A database of its own for each: a scene may change its records (Home releases runs, for one).
            db, runs = scenes.build(Path(tmp) / f"{name}.db")
            (out / name).write_text(scenes.screenshot(scenes.SCENES[scene], db, runs, size, theme), encoding="utf-8")
            print(out / name)
    shot = out / "report.png"
    test = HERE.parent / "tests" / "test_report_browser.py"
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-n", "0", "-p", "no:cacheprovider", str(test), "-k", "readme"],
        env={**os.environ, "SIEVE_REPORT_SCREENSHOT": str(shot.resolve())},
        check=True,
    )
    print(shot)


if __name__ == "__main__":
    main()
