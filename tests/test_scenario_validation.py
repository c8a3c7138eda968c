"""Malformed scenario files: each gets the error it should, with path, line and key, and exit status 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
from click.testing import CliRunner

from sieve import scenarios
from sieve.cli import main
from sieve.scenarios import ScenarioError

VALID = textwrap.dedent(
    """\
    [scenario]
    name = "mini"
    title = "Mini"
    version = 1

    [scales.points]
    values = [0, 1, 2]

    [[steps]]
    id = "s0"
    kind = "setup"
    text = "Setup."

    [[steps]]
    id = "s1"
    text = "Hello."

    [[rubrics]]
    id = "T"
    title = "t"
    scale = "points"
    max = 2

    [[rubrics.items]]
    id = "T1"
    steps = ["s1"]
    text = "x"

    [[counters]]
    id = "L1"
    title = "c"
    kind = "verdict"
    values = ["played out", "annulled"]
    steps = ["s1"]
    """
)


def replace(old: str, new: str) -> str:
    assert old in VALID, old
    return VALID.replace(old, new, 1)


# (case id, file text, expected "line:col" or None, fragments the message must hold)
CASES = [
    ("unclosed-string", replace('title = "Mini"', 'title = "Mini'), "3:", ["string"]),
    ("duplicate-key", replace("version = 1", "version = 1\nversion = 2"), "5:", ["Cannot overwrite a value"]),
    (
        "item-points-at-missing-step",
        replace('steps = ["s1"]\ntext = "x"', 'steps = ["s9"]\ntext = "x"'),
        "26:1",
        ["rubrics[T].items[T1].steps[0]", "no step has the id 's9'"],
    ),
    (
        "scale-with-no-values",
        replace("values = [0, 1, 2]", "values = []"),
        "7:1",
        ["scales.points.values", "at least one value"],
    ),
    (
        "duplicate-step-id",
        replace('id = "s1"', 'id = "s0"'),
        "15:1",
        ["duplicate step id 's0' (first used at steps[s0].id, line 10)"],
    ),
    (
        "duplicate-item-id",
        replace('id = "L1"', 'id = "T1"'),
        "30:1",
        ["duplicate item id 'T1'", "rubrics[T].items[T1].id"],
    ),
    (
        "anchor-outside-scale",
        replace('text = "x"', 'text = "x"\nanchors = { "3" = "more than the scale" }'),
        "28:1",
        ["anchors.3", "3 is outside the scale (0/1/2)"],
    ),
    (
        "max-does-not-add-up",
        replace("max = 2", "max = 3"),
        "22:1",
        ["rubrics[T].max", "max is 3 but the items add up to 2"],
    ),
    (
        "unknown-key",
        replace('text = "Hello."', 'txt = "Hello."'),
        "16:1",
        ["steps[s1].txt", "unknown key 'txt' (known keys: chapter, id, kind, note, repeat, text)"],
    ),
    ("misspelt-key", replace('text = "x"', 'text = "x"\nscael = "points"'), "28:1", ["unknown key 'scael'"]),
    (
        "wrong-type",
        replace("version = 1", 'version = "one"'),
        "4:1",
        ["scenario.version", "expected an integer, found a string"],
    ),
    ("missing-name", replace('name = "mini"\n', ""), "1:1", ["scenario", "missing required key 'name'"]),
    ("missing-steps", '[scenario]\nname = "x"\n', "1:1", ["missing required key 'steps' (at the top level)"]),
    ("missing-text-key", replace('text = "Hello."\n', ""), "14:1", ["steps[s1]", "missing required key 'text'"]),
    (
        "unknown-scale",
        replace('scale = "points"', 'scale = "pts"'),
        "21:1",
        ["no scale is named 'pts' (scales: points)"],
    ),
    (
        "disqualify-on-unknown-value",
        VALID + 'disqualifying = true\ndisqualify_on = "skipped"\n',
        "36:1",
        ["counters[L1].disqualify_on", "'skipped' is not one of the values"],
    ),
    (
        "verdict-without-steps",
        VALID.replace('values = ["played out", "annulled"]\nsteps = ["s1"]\n', 'values = ["played out", "annulled"]\n'),
        "29:1",
        ["counters[L1]", "needs the 'steps' it judges"],
    ),
    (
        "unknown-step-kind",
        replace('kind = "setup"', 'kind = "intro"'),
        "11:1",
        ["steps[s0].kind", "unknown step kind 'intro'"],
    ),
    (
        "setup-not-first",
        replace('id = "s1"\n', 'id = "s1"\nkind = "setup"\n'),
        "16:1",
        ["only the first step can be the setup message"],
    ),
    (
        "repeat-on-a-player-step",
        replace('id = "s1"\n', 'id = "s1"\nrepeat = 3\n'),
        "16:1",
        ["only a filler step can be repeated"],
    ),
    ("empty-step-text", replace('text = "Hello."', 'text = "  "'), "16:1", ["steps[s1].text", "must not be empty"]),
    (
        "score-outside-scale-in-labels",
        replace("values = [0, 1, 2]", 'values = [0, 1, 2]\nlabels = { "5" = "five" }'),
        "8:1",
        ["scales.points.labels.5", "5 is outside the scale"],
    ),
    (
        "evidence-unknown",
        replace('text = "x"', 'text = "x"\nevidence = "anywhere"'),
        "28:1",
        ["rubrics[T].items[T1].evidence", "unknown value 'anywhere' (one of: steps, run)"],
    ),
    (
        "evidence-run-without-steps",
        replace('steps = ["s1"]\ntext = "x"', 'text = "x"\nevidence = "run"'),
        "27:1",
        ["rubrics[T].items[T1].evidence", "it lists no steps"],
    ),
    (
        "evidence-not-a-string",
        replace('text = "x"', 'text = "x"\nevidence = true'),
        "28:1",
        ["rubrics[T].items[T1].evidence"],
    ),
]


@pytest.mark.parametrize("case,text,position,fragments", CASES, ids=[c[0] for c in CASES])
def test_malformed_file_names_path_line_and_key(tmp_path, case, text, position, fragments):
    path = tmp_path / f"{case}.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ScenarioError) as caught:
        scenarios.load(path)
    message = str(caught.value)
    assert message.startswith(f"{path}:{position}"), message
    for fragment in fragments:
        assert fragment in message, message
    result = CliRunner().invoke(main, ["scenarios", "validate", str(path)])
    assert result.exit_code == 2
    assert message in result.output


def test_the_valid_base_file_is_valid(tmp_path):
    path = tmp_path / "mini.toml"
    path.write_text(VALID, encoding="utf-8")
    scenario = scenarios.load(path)
    assert [s.id for s in scenario.steps] == ["s0", "s1"]


def test_a_file_that_is_not_utf8_names_line_and_column(tmp_path):
    path = tmp_path / "latin1.toml"
    path.write_bytes(VALID.replace('title = "Mini"', 'title = "Mi\xe9"').encode("latin-1"))
    with pytest.raises(ScenarioError) as caught:
        scenarios.load(path)
    assert str(caught.value) == f"{path}:3:12: the scenario is not UTF-8 text"


def test_a_missing_file_and_an_unknown_name_are_clear(tmp_path):
    with pytest.raises(ScenarioError, match="cannot read the scenario"):
        scenarios.load(tmp_path / "nope.toml")
    with pytest.raises(ScenarioError, match=r"no such scenario or file \(built-in: keykeeper"):
        scenarios.load("keykeepr")


def test_validate_reports_every_file_and_fails_if_any_is_bad(tmp_path):
    good = tmp_path / "good.toml"
    good.write_text(VALID, encoding="utf-8")
    bad = tmp_path / "bad.toml"
    bad.write_text(VALID.replace("max = 2", "max = 3"), encoding="utf-8")
    result = CliRunner().invoke(main, ["scenarios", "validate", str(good), str(bad)])
    assert result.exit_code == 2
    assert f"{good}: ok (2 steps, 1 item, 1 counter, 0 probes)" in result.output
    assert f"{bad}:22:1: rubrics[T].max:" in result.output
    # --json (QA #10: every command that prints data has it): one object per file, the bad one placed.
    result = CliRunner().invoke(main, ["scenarios", "validate", str(good), str(bad), "--json"])
    assert result.exit_code == 2
    first, second = json.loads(result.stdout)
    assert first == {"path": str(good), "ok": True, "name": "mini", "steps": 2, "items": 1, "counters": 1, "probes": 0}
    assert second["ok"] is False and (second["line"], second["col"], second["key"]) == (22, 1, "rubrics[T].max")


def test_the_installed_command_exits_2_on_a_bad_file(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text(VALID.replace('title = "Mini"', 'title = "Mini'), encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "sieve", "scenarios", "show", str(bad)], capture_output=True, text=True
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"{bad}:3:")
    assert proc.stdout == ""


@pytest.mark.slow
def test_sieve_run_on_a_bad_file_exits_2_and_makes_no_database(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text(VALID.replace('title = "Mini"', 'title = "Mini'), encoding="utf-8")
    for where in (["--db", str(tmp_path / "given.db")], []):
        env = {**os.environ, "SIEVE_DB": str(tmp_path / "env.db")}
        proc = subprocess.run(
            [sys.executable, "-m", "sieve", "run", str(bad), "-m", "a", "--endpoint", "fake", *where],
            capture_output=True,
            text=True,
            env=env,
        )
        assert proc.returncode == 2 and proc.stderr.startswith(f"{bad}:3:"), proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.toml"]  # no database, nor its journal


def test_built_in_scenarios_validate(tmp_path):
    result = CliRunner().invoke(main, ["scenarios", "validate", *scenarios.builtin_names()])
    assert result.exit_code == 0, result.output
    assert result.output.count(": ok (") == 4
