"""Run plans: a TOML file listing the models of a field, each with its own settings.

scenario = "keykeeper"          # optional; the command line may name it instead
endpoint = "openrouter"         # optional; a name from the config or a URL
concurrency = 8
repeat = 1

[settings]                      # for every model unless it says otherwise
max_tokens = 24000
reasoning_effort = "low"

[[models]]
model = "minimax/minimax-m2-her"
max_tokens = 2048               # the seeds lowered the ceiling for some models
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sieve.errors import SieveInputError
from sieve.files import read_text
from sieve.scenarios.errors import locate
from sieve.scenarios.settings import BY_NAME as SETTINGS
from sieve.scenarios.toml_reader import parse_toml

MAX_PLAN_BYTES = 1024 * 1024
# Counts a plan may set besides the settings: how many runs at once, and per model.
COUNTS = {"concurrency": 1024, "repeat": 1000}


class PlanError(SieveInputError):
    """A run plan that cannot be used: `path:line:col: key: what is wrong`."""


@dataclass(frozen=True)
class PlannedModel:
    model: str
    settings: dict[str, Any] = field(default_factory=dict)
    repeat: int | None = None
    endpoint: str | None = None


@dataclass(frozen=True)
class Plan:
    path: str
    models: tuple[PlannedModel, ...]
    scenario: str | None = None
    endpoint: str | None = None
    concurrency: int | None = None
    repeat: int | None = None
    settings: dict[str, Any] = field(default_factory=dict)


def load_plan(path: str | Path) -> Plan:
    path = Path(path)
    text = read_text(path, MAX_PLAN_BYTES, "plan", PlanError)
    doc = parse_toml(str(path), text)

    def error(keypath: list[str | int], message: str) -> PlanError:
        where = locate(text, keypath)
        line, col = where if where else (None, None)
        key = ".".join(str(k) if isinstance(k, str) else f"[{k}]" for k in keypath).replace(".[", "[")
        return PlanError(str(path), message, line=line, col=col, key=key or None)

    def check(table: dict[str, Any], keypath: list[str | int], allowed: Mapping[str, type[Any]]) -> None:
        for key, value in table.items():
            if key in SETTINGS and key in allowed:
                problem = SETTINGS[key].problem(value)
                if problem:
                    raise error([*keypath, key], problem)
                continue
            if key not in allowed:
                raise error([*keypath, key], f"unknown key '{key}' (known keys: {', '.join(sorted(allowed))})")
            if not isinstance(value, allowed[key]) or isinstance(value, bool):
                raise error([*keypath, key], f"expected {allowed[key].__name__}")
            if key in COUNTS and not 1 <= value <= COUNTS[key]:
                raise error([*keypath, key], f"must be between 1 and {COUNTS[key]}")

    settings_keys = {name: object for name in SETTINGS}
    top = {"scenario": str, "endpoint": str, "concurrency": int, "repeat": int, "settings": dict, "models": list}
    check(doc, [], top)
    settings = doc.get("settings", {})
    check(settings, ["settings"], settings_keys)
    models = []
    if not doc.get("models"):
        raise error([], "a plan needs at least one [[models]] entry")
    seen: dict[tuple, int] = {}
    for i, entry in enumerate(doc["models"]):
        if not isinstance(entry, dict):
            raise error(["models", i], "expected a table")
        check(entry, ["models", i], {"model": str, "repeat": int, "endpoint": str, **settings_keys})
        if not entry.get("model", "").strip():
            raise error(["models", i], "missing required key 'model'")
        own = {k: v for k, v in entry.items() if k in SETTINGS}
        key = (entry["model"], entry.get("endpoint"), tuple(sorted(own.items())))
        if key in seen:
            raise error(["models", i], f"the same model and settings as models[{seen[key]}]; use 'repeat' for repeats")
        seen[key] = i
        models.append(PlannedModel(entry["model"], own, entry.get("repeat"), entry.get("endpoint")))
    return Plan(
        path=str(path),
        models=tuple(models),
        scenario=doc.get("scenario"),
        endpoint=doc.get("endpoint"),
        concurrency=doc.get("concurrency"),
        repeat=doc.get("repeat"),
        settings=dict(settings),
    )
