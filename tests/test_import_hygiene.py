"""The layering holds for every module, found by walking the packages (no hand-kept list).

Dependency direction, never the other way: cli -> tui -> engine -> store -> scenarios
-> the foundation modules at the top of `sieve`. Only the Textual app imports Textual.
"""

from __future__ import annotations

import ast
import importlib.util
import pkgutil
import subprocess
import sys
from pathlib import Path

# What a layer may not import, by module prefix. The foundation (sieve.errors,
# sieve.safe_text, ...) may import nothing of sieve's subpackages.
FORBIDDEN = {
    "sieve.scenarios": ("sieve.store", "sieve.engine", "sieve.cli", "sieve.tui", "textual"),
    "sieve.store.record": ("sieve.store.scoring", "sieve.engine", "sieve.cli", "sieve.tui", "textual"),
    "sieve.store.scoring": ("sieve.engine", "sieve.cli", "sieve.tui", "textual"),
    "sieve.store": ("sieve.engine", "sieve.cli", "sieve.tui", "textual"),
    "sieve.engine": ("sieve.cli", "sieve.tui", "textual"),
    "sieve.cli": (),  # checked at module level below: the TUI is imported only when it opens
    "sieve.tui": ("sieve.cli",),
    "sieve": ("sieve.scenarios", "sieve.store", "sieve.engine", "sieve.cli", "sieve.tui", "textual"),
}
CLI_MODULE_LEVEL = ("sieve.tui", "textual")


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


def layer(module: str) -> str:
    return max((prefix for prefix in FORBIDDEN if module == prefix or module.startswith(prefix + ".")), key=len)


def imports(module: str, module_level_only: bool = False) -> list[str]:
    spec = importlib.util.find_spec(module)
    tree = ast.parse(Path(spec.origin).read_text(encoding="utf-8"))
    nodes = tree.body if module_level_only else ast.walk(tree)
    out = []
    for node in nodes:
        if isinstance(node, ast.Import):
            out += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            out += [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
    return out


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


def test_every_module_imports_only_downward():
    offenders = []
    for module in every_module():
        banned = FORBIDDEN[layer(module)]
        for name in imports(module):
            if any(name == b or name.startswith(b + ".") for b in banned):
                offenders.append(f"{module} imports {name}")
        if layer(module) == "sieve.cli":
            for name in imports(module, module_level_only=True):
                if any(name == b or name.startswith(b + ".") for b in CLI_MODULE_LEVEL):
                    offenders.append(f"{module} imports {name} at module level")
    assert offenders == []


def test_only_the_app_imports_textual():
    offenders = [
        f"{module} imports {name}"
        for module in every_module()
        if not module.startswith("sieve.tui")
        for name in imports(module)
        if name == "textual" or name.startswith("textual.")
    ]
    assert offenders == []


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
