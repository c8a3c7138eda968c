"""What the app reads at run time besides its modules (scenario files, stylesheets) is in the distribution."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_data_file_the_app_reads_is_package_data():
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]

    def folder(package: str) -> Path:
        return ROOT.joinpath(*package.split("."))  # every folder under sieve/, as it installs

    shipped = {
        f for package, globs in setuptools["package-data"].items() for g in globs for f in folder(package).glob(g)
    }
    needed = {*(ROOT / "sieve" / "scenarios").glob("*.toml"), *(ROOT / "sieve" / "tui").rglob("*.tcss")}
    assert needed and sorted(str(f.relative_to(ROOT)) for f in needed - shipped) == []
