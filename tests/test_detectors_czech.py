"""Detectors in the scenario's language (issue 24): Czech cue lists beside English's, the player's character found
by her name in its cases, a scenario's own cues and verbs. The figures per language are in
tests/test_detector_corpus.py; here, the cases the issue names, through `sieve suggest` on a real database."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from sieve import scenarios, store
from sieve.cli import main
from sieve.scenarios import ScenarioError
from sieve.scenarios.detectors import BY_NAME as SPECS
from sieve.store.record import turns as record
from sieve.store.scoring import detectors
from sieve.store.scoring.detectors import czech, out_of_game

CZECH = Path(__file__).resolve().parent / "data" / "keykeeper-cs.toml"
ASIDE = "(Poznámka vypravěče: podle pravidel hry si Havel nic takového nepamatuje.)"
SPEAKS = "Povzdechne si a řekne: „No jo, vlastně.“"


def reply_turns(scenario, replies: list[str]) -> list[dict]:
    turns = []
    for k, ((step, _), reply) in enumerate(zip(scenario.script(), replies)):
        turns.append({"id": f"u{k}", "idx": 2 * k, "role": "user", "text": step.text, "status": "complete"})
        turns.append({"id": f"a{k}", "idx": 2 * k + 1, "role": "assistant", "text": reply, "status": "complete"})
    return turns


def found(scenario, replies: list[str], detector: str, params: dict | None = None) -> list[str]:
    """The text of each finding's first span."""
    run = detectors.run_text(reply_turns(scenario, replies), scenario)
    spec = SPECS[detector]
    return [f.spans[0].text for f in detectors.REGISTRY[detector].detect(run, spec.resolve(params))]


def test_a_czech_name_in_its_cases():
    assert czech.name_forms("Jarla") == ("Jarla", "Jarly", "Jarle", "Jarlu", "Jarlou", "Jarlo")
    assert czech.name_forms("Olga")[2] == "Olze" and czech.name_forms("Petra")[2] == "Petře"
    assert czech.name_forms("Marta")[2] == "Martě" and czech.name_forms("Hanka")[2] == "Hance"
    assert czech.name_forms("poutnice") == ("poutnice", "poutnici", "poutnicí", "poutnicím")
    assert czech.name_forms("Havel")[:3] == ("Havel", "Havela", "Havelovi")  # no mobile e: Havla is not made


def test_the_issues_czech_aside_and_her_lines_are_suggested_on_a_czech_run(tmp_path):
    """Issue 24's two examples, on a run of a scenario played in Czech, through `sieve suggest`."""
    scenario = scenarios.load(CZECH)
    assert scenario.language == "cs"
    db_path = tmp_path / "cs.db"
    db = store.open_db(db_path)
    run_id = store.create_run(db, scenario, model="m", endpoint="e", settings={})
    replies = [
        "Havel postaví misku s kaší na pryčnu. „Třetí den,“ řekne. Venku prší.",
        f"Havel zavrtí hlavou. „Nic takového jsme si neřekli.“ {ASIDE}",
        f"Havel se na ni dívá. Jarla si otře slzy rukávem. {SPEAKS} Havel přikývne.",
        "Havel podá Jarle kapesník. Jarlu to nepotěší, ale s Jarlou se nikdo nehádá.",
    ]
    for turn in reply_turns(scenario, replies):
        step = scenario.script()[turn["idx"] // 2][0]
        if turn["role"] == "user":
            record.add_turn(
                db, run_id, idx=turn["idx"], role="user", origin="script", text=turn["text"], step_id=step.id
            )
        else:
            record.add_turn(db, run_id, idx=turn["idx"], role="assistant", origin="reply", text=turn["text"])
    out = CliRunner().invoke(main, ["suggest", run_id, "--json", "--db", str(db_path)])
    assert out.exit_code == 0, out.output
    (suggested,) = json.loads(out.output)
    by_item = {}
    for s in suggested["suggestions"]:
        by_item.setdefault(s["item"], []).append(s["spans"][0]["text"])
    assert ASIDE in by_item["L6"]  # the out-of-game voice
    assert SPEAKS in by_item["L8"] and "Jarla si otře slzy rukávem." in by_item["L8"]  # playing her
    # Her name in another case is someone acting on her: nothing of the last reply is suggested.
    assert not [t for t in by_item["L8"] if "kapesník" in t or "Jarlou" in t]


def test_the_language_picks_the_cue_lists():
    """The Czech aside is Czech's to find: an English scenario leaves it, a Czech one finds it; a model stepping
    out in English is found in both (English's lists stand beside every language's)."""
    english, czech_scenario = scenarios.load("keykeeper"), scenarios.load(CZECH)
    replies = [f"Havel zavrtí hlavou. {ASIDE}", "Havel nods. As an AI language model, I cannot continue."]
    assert found(czech_scenario, replies, "out-of-game") == [ASIDE, "As an AI language model, I cannot continue."]
    assert found(english, replies, "out-of-game") == ["As an AI language model, I cannot continue."]
    always, cues = out_of_game.cues_for("de", {"refusals": True})  # no lists of its own: English's
    assert (always, cues) == out_of_game.cues_for("en", {"refusals": True})


def test_the_second_person_is_her_unless_she_declared_it():
    scenario = scenarios.load(CZECH)  # m1: "Podám mu jednu stříbrnou minci."
    replies = ["Havel odemkne.", "Podáš mu minci a on ji schová. Pak si sedneš na pryčnu. Když odejdeš, zavře."]
    assert found(scenario, replies, "plays-player") == ["Pak si sedneš na pryčnu."]


def test_a_scenario_adds_its_own_cues_and_verbs(tmp_path):
    scenario = scenarios.load(CZECH)
    replies = ["Havel mlčí.", "Havel mlčí. Poznámka autora: Havel je přísný. Jarla zahvízdá na psa."]
    assert found(scenario, replies, "out-of-game") == []
    assert found(scenario, replies, "out-of-game", {"cues": ["poznámka autora"]}) == [
        "Poznámka autora: Havel je přísný."
    ]
    assert found(scenario, replies, "plays-player") == []
    assert found(scenario, replies, "plays-player", {"verbs": ["zahvízdá"]}) == ["Jarla zahvízdá na psa."]
    # English scenarios take verbs of their own too.
    english = scenarios.load("keykeeper")
    assert found(english, ["Jarla yodels at the gate."], "plays-player", {"verbs": ["yodels"]}) == [
        "Jarla yodels at the gate."
    ]
    # In the file, checked where the loader checks every parameter.
    text = CZECH.read_text(encoding="utf-8").replace(
        'detector = "out-of-game"', 'detector = "out-of-game"\ndetector_params = { cues = ["poznámka autora"] }'
    )
    path = tmp_path / "own.toml"
    path.write_text(text, encoding="utf-8")
    loaded = scenarios.load(path)
    assert loaded.counter("L6").detector_params == {"cues": ["poznámka autora"]}
    path.write_text(text.replace('["poznámka autora"]', '["", "x"]'), encoding="utf-8")
    with pytest.raises(
        ScenarioError, match=r"own\.toml:\d+:\d+: counters\[L6\]\.detector_params\.cues: '' is not a phrase"
    ):
        scenarios.load(path)
    path.write_text(text.replace('["poznámka autora"]', "[1]"), encoding="utf-8")
    with pytest.raises(ScenarioError, match="expected a list of strings"):
        scenarios.load(path)


def test_an_english_run_is_read_as_before():
    """The language switch leaves English scenarios on English's rules, word for word."""
    english = scenarios.load("keykeeper")
    assert english.language == "en"
    replies = ["Havel nods.", "Jarla stood up and pressed her face to the bars. You take out the key."]
    assert found(english, replies, "plays-player") == [
        "Jarla stood up and pressed her face to the bars.",
        "You take out the key.",
    ]


def test_her_name_then_an_adverb_of_manner_then_her_verb_is_her_acting():
    scenario = scenarios.load(CZECH)
    replies = [
        "Havel odemkne.",
        "Jarla se smutně usměje a podá Havlovi ruku. Jarla se hlasitě zasměje. Havel se Jarle přátelsky ukloní.",
    ]
    assert found(scenario, replies, "plays-player") == [
        "Jarla se smutně usměje a podá Havlovi ruku.",
        "Jarla se hlasitě zasměje.",
    ]
