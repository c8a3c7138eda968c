"""Scenario files, mutated at random (seeded, a few seconds): each is refused with path:line:col or accepted usable.

A refusal is a ScenarioError, never another exception. An accepted scenario has
finite numbers of a sane size, integers the record can hold, a script of a
sane length and valid settings, and it can be stored, described and played.
"""

from __future__ import annotations

import copy
import json
import math
import random
import re
import time
from typing import Any

import pytest
import tomli_w

from sieve import scenarios
from sieve.cli.scenario_commands import describe
from sieve.engine.session import resolve_settings
from sieve.scenarios import Scenario, ScenarioError, load_text, scenario_dict
from sieve.scenarios.loader import MAX_SENDS
from sieve.scenarios.settings import BY_NAME
from sieve.scenarios.toml_reader import INT64, NUMBER_LIMIT
from sieve.store.record.runs import snapshot_scenario

SEED = 20260710
CASES = 300
SECONDS = 4.0
LOCATED = re.compile(r"^fuzz\.toml(:\d+:\d+)?: ")

ODD_VALUES: list[Any] = [
    2**63,
    -(2**63) - 1,
    2**70,
    10**9,
    0,
    -1,
    1_000_000_000,
    math.inf,
    -math.inf,
    math.nan,
    1e300,
    -0.0,
    0.25,
    "",
    " ",
    "x",
    "\x1b]0;t\x07[/b]\u202e",
    "T1",
    True,
    [],
    [1, "a"],
    [[[[1]]]],
    {},
    {"a": 1},
    {"0": "zero", "½": "half"},
]


def paths(node: Any, prefix: tuple = ()) -> list[tuple]:
    """Every key path in the document (tables, arrays and leaves)."""
    out = [prefix] if prefix else []
    if isinstance(node, dict):
        for key, value in node.items():
            out += paths(value, (*prefix, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            out += paths(value, (*prefix, i))
    return out


def parent_of(doc: Any, path: tuple) -> Any:
    for part in path[:-1]:
        doc = doc[part]
    return doc


def mutate_doc(doc: dict, rng: random.Random) -> dict:
    doc = copy.deepcopy(doc)
    for _ in range(rng.randint(1, 3)):
        path = rng.choice(paths(doc))
        parent, key = parent_of(doc, path), path[-1]
        action = rng.random()
        if action < 0.55:
            parent[key] = copy.deepcopy(rng.choice(ODD_VALUES))
        elif action < 0.75:
            del parent[key]
        elif action < 0.9 and isinstance(parent, list):
            parent.insert(rng.randrange(len(parent) + 1), copy.deepcopy(parent[key]))  # a duplicate
        elif isinstance(parent, dict):
            parent[f"unknown_{rng.randrange(9)}"] = rng.choice(ODD_VALUES)
        if not paths(doc):
            break
    return doc


def mutate_text(text: str, rng: random.Random) -> str:
    lines = text.splitlines(keepends=True)
    action = rng.random()
    if action < 0.25:
        return text[: rng.randrange(len(text))]
    if action < 0.45:
        del lines[rng.randrange(len(lines))]
        return "".join(lines)
    if action < 0.6:
        depth = rng.choice([70, 500, 5000])
        at = rng.randrange(len(lines))
        lines.insert(at, "deep = " + "[" * depth + "]" * depth + "\n")
        return "".join(lines)
    if action < 0.75:  # a step repeated past any sane run
        return text.replace("repeat = 2", f"repeat = {rng.choice([10**4, 10**9, 2**64])}", 1)
    position = rng.randrange(len(text))
    return text[:position] + rng.choice(['"', "[", "]", "=", "\n", "\x00", "'''", "{", "é", "#"]) + text[position + 1 :]


def assert_usable(scenario: Scenario, db) -> None:
    """What an accepted scenario must be: every value in range, storable, describable, playable."""
    assert 1 <= scenario.version <= INT64
    assert 1 <= len(scenario.script()) <= MAX_SENDS
    for name, value in scenario.settings.items():
        assert BY_NAME[name].problem(value) is None, (name, value)
    numbers = [v for s in scenario.scales.values() for v in s.values]
    for rubric in scenario.rubrics:
        numbers += [x for x in (rubric.maximum, rubric.bonus_maximum) if x is not None]
        if rubric.deductions:
            numbers += [rubric.deductions.step, rubric.deductions.maximum]
    for number in numbers:
        assert math.isfinite(number) and abs(number) <= NUMBER_LIMIT, number
    json.dumps(scenario_dict(scenario), allow_nan=False)
    describe(scenario)
    resolve_settings("m", scenario)
    snapshot_scenario(db, scenario)


def sources() -> list[tuple[str, str, dict]]:
    out = []
    for name in scenarios.builtin_names():
        text = scenarios.load(name).source
        out.append((name, text, tomllib_loads(text)))
    return out


def tomllib_loads(text: str) -> dict:
    import tomllib

    return tomllib.loads(text)


@pytest.mark.slow
def test_fuzzed_scenarios_are_refused_with_a_place_or_accepted_usable(db):
    rng = random.Random(SEED)
    bases = sources()
    started = time.monotonic()
    outcomes = {"refused": 0, "accepted": 0}
    for case in range(CASES):
        if time.monotonic() - started > SECONDS:
            break
        name, text, doc = rng.choice(bases)
        if rng.random() < 0.6:
            try:
                mutated = tomli_w.dumps(mutate_doc(doc, rng))
            except (TypeError, ValueError):
                continue  # a document TOML cannot spell
        else:
            mutated = mutate_text(text, rng)
        try:
            scenario = load_text(mutated, "fuzz.toml")
        except ScenarioError as exc:
            assert LOCATED.match(str(exc)), (case, str(exc))
            outcomes["refused"] += 1
            continue
        except Exception as exc:  # the defect this test exists for
            pytest.fail(f"case {case} (from {name}): {type(exc).__name__}: {exc}\n{mutated[:3000]}")
        assert_usable(scenario, db)
        outcomes["accepted"] += 1
    print(f"fuzzed scenarios: {outcomes} in {time.monotonic() - started:.1f} s")
    assert outcomes["refused"] > 50 and outcomes["accepted"] > 5, outcomes


@pytest.mark.parametrize(
    "old,new,message",
    [
        ("max = 8", "max = inf", "must be a finite number"),
        ("max = 8", "max = nan", "must be a finite number"),
        ("max = 8", "max = 1e300", "must be between"),
        ("values = [1, 0.5, 0]", "values = [1, 0.5, nan]", "must be a finite number"),
        ("values = [1, 0.5, 0]", "values = [1, 0.5, 1e9]", "must be between"),
        ("version = 1", "version = 9223372036854775808", "integers are at most 64 bits"),
        ("temperature = 1.0", "temperature = inf", "must be a finite number"),
        ("temperature = 1.0", "temperature = 1e9", "must be at most 2"),
        ("max_tokens = 24000", "max_tokens = 0", "must be at least 1"),
        ("max_tokens = 24000", "max_tokens = -5", "must be at least 1"),
        ("timeout = 240", "timeout = 0", "must be more than 0"),
        ("timeout = 240", "timeout = nan", "must be a finite number"),
        ("version = 1", "version = 1\nnested = " + "[" * 3000 + "]" * 3000, "nested too deeply"),
    ],
    ids=lambda v: v if len(v) < 40 else v[:20] + "…",
)
def test_each_value_out_of_range_is_refused_with_its_place(old, new, message):
    text = scenarios.load("train").source
    assert old in text, old
    with pytest.raises(ScenarioError) as caught:
        load_text(text.replace(old, new, 1), "fuzz.toml")
    assert message in str(caught.value) and re.match(r"^fuzz\.toml:\d+:\d+: ", str(caught.value))


def test_a_repeat_that_would_send_a_billion_messages_is_refused():
    text = scenarios.load("story-12").source
    assert "repeat = 2" in text
    bad = text.replace("repeat = 2", "repeat = 1000000000", 1)
    with pytest.raises(ScenarioError, match=r"would send 1,000,000,0\d\d messages in one run; at most 10,000"):
        load_text(bad, "fuzz.toml")
