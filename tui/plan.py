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

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scenarios import ScenarioError
from scenarios.errors import locate
from scenarios.loader import parse_toml

SETTING_TYPES = {
    "temperature": (int, float),
    "max_tokens": (int,),
    "reasoning_effort": (str,),
    "seed": (int,),
    "timeout": (int, float),
    "read_timeout": (int, float),
}


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
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScenarioError(str(path), f"cannot read the plan: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise ScenarioError(str(path), "the plan is not UTF-8 text") from None
    doc = parse_toml(str(path), text)

    def error(keypath: list, message: str) -> ScenarioError:
        where = locate(text, keypath)
        line, col = where if where else (None, None)
        key = ".".join(str(k) if isinstance(k, str) else f"[{k}]" for k in keypath).replace(".[", "[")
        return ScenarioError(str(path), message, line=line, col=col, key=key or None)

    def check(table: dict, keypath: list, allowed: dict[str, tuple]) -> None:
        for key, value in table.items():
            if key not in allowed:
                raise error([*keypath, key], f"unknown key '{key}' (known keys: {', '.join(sorted(allowed))})")
            if not isinstance(value, allowed[key]) or isinstance(value, bool):
                raise error([*keypath, key], f"expected {' or '.join(t.__name__ for t in allowed[key])}")
            if key in ("concurrency", "repeat", "max_tokens") and value < 1:
                raise error([*keypath, key], "must be 1 or more")

    top = {"scenario": (str,), "endpoint": (str,), "concurrency": (int,), "repeat": (int,), "settings": (dict,), "models": (list,)}
    check(doc, [], top)
    settings = doc.get("settings", {})
    check(settings, ["settings"], SETTING_TYPES)
    models = []
    if not doc.get("models"):
        raise error([], "a plan needs at least one [[models]] entry")
    seen: dict[tuple, int] = {}
    for i, entry in enumerate(doc["models"]):
        if not isinstance(entry, dict):
            raise error(["models", i], "expected a table")
        check(entry, ["models", i], {"model": (str,), "repeat": (int,), "endpoint": (str,), **SETTING_TYPES})
        if not entry.get("model", "").strip():
            raise error(["models", i], "missing required key 'model'")
        own = {k: v for k, v in entry.items() if k in SETTING_TYPES}
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
