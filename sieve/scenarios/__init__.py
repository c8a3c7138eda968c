"""What is played and how it is scored: the scenario files and their loader.

Built-in scenarios are the TOML files beside this module; any other file can be
loaded by its path. This package never imports Textual.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from sieve.scenarios.errors import ScenarioError
from sieve.scenarios.loader import load_file, load_text
from sieve.scenarios.model import (
    Chapter,
    Counter,
    Item,
    Player,
    Probe,
    Rubric,
    Scale,
    Scenario,
    Step,
    format_value,
    scenario_dict,
)

__all__ = [
    "Chapter",
    "Counter",
    "Item",
    "Player",
    "Probe",
    "Rubric",
    "Scale",
    "Scenario",
    "ScenarioError",
    "Step",
    "builtin_names",
    "format_value",
    "load",
    "load_file",
    "load_text",
    "scenario_dict",
]


def builtin_names() -> list[str]:
    """Names of the scenarios shipped with sieve, sorted."""
    return sorted(
        entry.name[: -len(".toml")] for entry in resources.files(__package__).iterdir() if entry.name.endswith(".toml")
    )


def load(name_or_path: str | Path) -> Scenario:
    """A built-in scenario by name, or any scenario file by its path."""
    candidate = Path(name_or_path)
    if str(name_or_path) in builtin_names() and not candidate.is_file():
        source = resources.files(__package__).joinpath(f"{name_or_path}.toml")
        return load_text(source.read_text(encoding="utf-8"), f"<builtin>/{name_or_path}.toml")
    if candidate.suffix == ".toml" or candidate.exists():
        return load_file(candidate)
    known = ", ".join(builtin_names())
    raise ScenarioError(str(name_or_path), f"no such scenario or file (built-in: {known})")
