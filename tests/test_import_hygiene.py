"""What the import-linter contract in pyproject.toml (the one statement of the layers) cannot see.

The contract reads the source; these check the installed package in a fresh interpreter: that
importing every module but the app loads no Textual, and that only `sieve` is installed at the top.
"""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import pytest


def every_module() -> list[str]:
    """Every module of the installed package: the foundation, and each folder that installs under sieve."""
    import sieve.scenarios
    import sieve.store
    import sieve.tui

    names = []
    for package in (sieve, sieve.scenarios, sieve.store, sieve.tui):
        names.append(package.__name__)
        names += [m.name for m in pkgutil.walk_packages(package.__path__, package.__name__ + ".")]
    return sorted(set(names) - {"sieve.__main__"})


def test_the_walk_finds_every_part():
    found = every_module()
    assert len(found) > 40
    for expected in (
        "sieve.scenarios.loader",
        "sieve.store.record.turns",
        "sieve.store.scoring.quotes",
        "sieve.engine.gateway",
        "sieve.cli",
        "sieve.tui.screens.review",
        "sieve.engine.judge.runs",
    ):
        assert expected in found


@pytest.mark.slow
def test_the_core_runs_without_textual_in_a_fresh_interpreter():
    """Importing everything but the app (the CLI included) loads no Textual (harlequin's check)."""
    core = [m for m in every_module() if not m.startswith("sieve.tui")]
    code = "\n".join(f"import {m}" for m in core) + (
        "\nimport sys\nprint(','.join(sorted(m for m in sys.modules if m == 'textual' or m.startswith('textual.'))))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == ""


def test_only_sieve_is_installed_at_the_top(tmp_path):
    """The three folders install under sieve, not as top-level packages of their own."""
    code = (
        "import importlib.util\n"
        "print([n for n in ('scenarios', 'store', 'tui') if importlib.util.find_spec(n)])\n"
        "import sieve.scenarios, sieve.store, sieve.tui\n"
    )
    # Away from the source tree, so only what is installed can be found.
    proc = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path)
    assert proc.stdout.strip() == "[]"
