"""The non-visual core never imports Textual (checked in a fresh interpreter)."""

from __future__ import annotations

import subprocess
import sys

import pytest

CORE = ["scenarios", "store", "tui.cli", "tui.cli_common", "tui.scenario_commands", "tui.evidence_commands", "tui.safe_text", "tui.table", "tui.gateway", "tui.session", "tui.local_model", "tui.batch", "tui.config", "tui.plan", "tui.run_command"]


@pytest.mark.parametrize("module", CORE)
def test_core_module_imports_no_textual(module):
    code = (
        f"import {module}, sys\n"
        "loaded = sorted(m for m in sys.modules if m == 'textual' or m.startswith('textual.'))\n"
        "print(','.join(loaded))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == "", f"{module} pulls in {proc.stdout.strip()}"


def test_only_the_app_screens_and_widgets_import_textual():
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    visual = {root / "tui" / "app.py"}
    offenders = []
    for package in ("scenarios", "store", "tui"):
        for path in (root / package).rglob("*.py"):
            if path in visual or path.parent.name in ("screens", "widgets"):
                continue
            for line in path.read_text(encoding="utf-8").splitlines():
                stripped = line.strip()
                if stripped.startswith(("import textual", "from textual")):
                    offenders.append(f"{path.relative_to(root)}: {stripped}")
    assert offenders == []
