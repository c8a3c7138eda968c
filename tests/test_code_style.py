"""One formatter and one linter, configured in pyproject.toml, and the code passes both."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def ruff(*args: str) -> subprocess.CompletedProcess:
    exe = shutil.which("ruff")
    assert exe, "ruff is a test dependency: pip install -e '.[test]'"
    return subprocess.run([exe, *args], cwd=ROOT, capture_output=True, text=True)


def test_the_code_passes_the_linter():
    result = ruff("check", ".")
    assert result.returncode == 0, result.stdout


def test_the_code_is_formatted():
    result = ruff("format", "--check", ".")
    assert result.returncode == 0, result.stdout


def test_nothing_opts_out_of_the_formatter():
    skips = [str(p.relative_to(ROOT)) for p in ROOT.rglob("*.py") if "fmt: skip" in p.read_text(encoding="utf-8")]
    assert skips == [str(Path(__file__).relative_to(ROOT))]
