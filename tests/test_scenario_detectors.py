"""Detectors and the player's character in scenario files: what loads, and bad values with path:line:col."""

from __future__ import annotations

import textwrap

import pytest

from sieve import scenarios
from sieve.scenarios import ScenarioError
from sieve.scenarios.detectors import DETECTORS
from sieve.store.scoring.detectors import REGISTRY

MINI = textwrap.dedent(
    """\
    [scenario]
    name = "mini"
    title = "Mini"
    version = 1
    player_character = "Jarla"
    player_aliases = ["the traveler"]
    language = "en"

    [scales.points]
    values = [0, 1, 2]

    [[steps]]
    id = "s0"
    kind = "setup"
    text = "Setup."

    [[rubrics]]
    id = "C"
    title = "c"
    scale = "points"

    [[rubrics.items]]
    id = "C1"
    text = "prose"
    detector = "repetition"

    [[counters]]
    id = "L5"
    title = "looping"
    kind = "chain"
    detector = "repetition"
    detector_params = { min_words = 6, min_chain = 3 }

    [[counters]]
    id = "L6"
    title = "out-of-game voice"
    kind = "count"
    detector = "out-of-game"
    """
)


def load(text: str):
    return scenarios.load_text(text, "mini.toml")


def broken(old: str, new: str) -> ScenarioError:
    assert old in MINI, old
    with pytest.raises(ScenarioError) as caught:
        load(MINI.replace(old, new, 1))
    return caught.value


def test_detectors_on_counters_and_items_and_the_player_character_load():
    scenario = load(MINI)
    assert scenario.player_names == ("Jarla", "the traveler")
    assert scenario.language == "en"
    uses = {(u.detector, u.item): u for u in scenario.detector_uses()}
    assert uses[("repetition", "L5")].counter_kind == "chain"
    assert uses[("repetition", "L5")].params == {"min_words": 6, "min_chain": 3}
    assert uses[("repetition", "C1")].counter_kind is None  # on a rubric item: notes
    assert uses[("out-of-game", "L6")].counter_kind == "count"
    shown = scenarios.scenario_dict(scenario)
    assert shown["player_character"] == "Jarla" and shown["counters"][0]["detector"] == "repetition"


@pytest.mark.parametrize(
    ("old", "new", "where", "says"),
    [
        ('detector = "out-of-game"', 'detector = "loops"', (38, 1), "unknown detector 'loops'"),
        ("min_words = 6", "min_words = 2", (32, 1), "must be at least 3"),
        ("min_words = 6", "min_word = 6", (32, 1), "unknown parameter 'min_word' of repetition"),
        ("min_chain = 3", 'min_chain = "3"', (32, 1), "expected a whole number, found a string"),
        (
            'kind = "count"\ndetector = "out-of-game"',
            'kind = "chain"\ndetector = "out-of-game"',
            (38, 1),
            "cannot feed a chain",
        ),
        ('language = "en"', 'language = "klingon"', (7, 1), "unknown language 'klingon'"),
        ('player_aliases = ["the traveler"]', 'player_aliases = ["jarla"]', (6, 1), "'jarla' is listed twice"),
        ('player_character = "Jarla"\n', "", (5, 1), "aliases need the 'player_character'"),
        ('player_character = "Jarla"', 'player_character = " "', (5, 1), "must not be empty"),
    ],
)
def test_a_bad_detector_or_player_value_names_its_line_and_key(old, new, where, says):
    error = broken(old, new)
    assert says in error.message
    assert (error.line, error.col) == where
    assert str(error).startswith("mini.toml:")


def test_params_without_a_detector_are_refused():
    error = broken('kind = "chain"\ndetector = "repetition"\n', 'kind = "chain"\n')
    assert "parameters need the 'detector'" in error.message and error.line == 31


def test_every_detector_in_the_catalogue_is_implemented_with_its_parameters():
    assert set(REGISTRY) == {spec.name for spec in DETECTORS}
    for spec in DETECTORS:
        module = REGISTRY[spec.name]
        assert module.NAME == spec.name and isinstance(module.VERSION, int)
        assert set(spec.defaults) == {p.name for p in spec.params}


def test_the_built_in_scenarios_declare_their_detectors():
    keykeeper = scenarios.load("keykeeper")
    assert keykeeper.player_character == "Jarla"
    assert {(u.item, u.detector) for u in keykeeper.detector_uses()} == {
        ("L5", "repetition"),
        ("L6", "out-of-game"),
        ("L8", "plays-player"),
    }
    for name in ("story-5", "story-12"):
        story = scenarios.load(name)
        assert {(u.item, u.detector, u.counter_kind) for u in story.detector_uses()} == {
            ("C1", "repetition", None),
            ("C9", "form", None),
        }
        assert story.player_character is None
    train = scenarios.load("train")
    assert train.player_character == "the woman" and not train.detector_uses()


def test_scenarios_show_names_the_player_and_the_detectors():
    from click.testing import CliRunner

    from sieve.cli import main

    shown = CliRunner().invoke(main, ["scenarios", "show", "keykeeper"]).output
    assert "the player plays: Jarla (also: the traveler, the traveller)" in shown
    assert "events suggested by the repetition detector" in shown
    story = CliRunner().invoke(main, ["scenarios", "show", "story-5"]).output
    assert "notes suggested by the form detector" in story
