"""The judge's packet and the reading of its reply, pure: what is asked, how it is shown, what comes back."""

from __future__ import annotations

import json

import pytest

from sieve import scenarios
from sieve.engine.judge import packet as packets
from sieve.engine.judge import prompt as prompts
from sieve.engine.judge import reply as replies
from sieve.store.scoring import blind

KEYKEEPER = scenarios.load("keykeeper")
TRAIN = scenarios.load("train")


def fake_turns(scenario, words: int = 40) -> tuple[list[dict], dict[str, str]]:
    turns, steps = [], {}
    for step, _ in scenario.script():
        for role, text in (("user", step.text), ("assistant", " ".join(["reply"] * words) + f" to {step.id}")):
            idx = len(turns)
            turns.append({"id": f"t{idx}", "idx": idx, "role": role, "text": text, "status": "complete"})
            steps[f"t{idx}"] = step.id
    return turns, steps


def test_the_questions_are_the_whole_card_with_ids_and_values_from_the_scales():
    asked = packets.questions(KEYKEEPER)
    labels = [q.label for q in asked]
    assert labels[:4] == ["T1", "T2", "T3", "T4"] and "TB4" in labels and "R6" in labels
    assert [q.label for q in asked if q.target == "L1"] == [f"L1 at m{i}" for i in range(1, 14)]
    assert labels[-1] == "summary" and len(asked) == 16 + 6 + 13 + 7 + 1
    schema = prompts.schema(asked)
    assert schema["properties"]["T1"]["properties"]["score"]["enum"] == [0, 1, 2]
    assert schema["properties"]["TB1"]["properties"]["score"]["enum"] == [0, 1]
    assert schema["properties"]["L1"]["properties"]["m3"]["properties"]["verdict"]["enum"] == ["played out", "annulled"]
    assert schema["properties"]["L2"]["properties"]["answer"]["enum"] == ["yes", "no"]
    assert set(schema["required"]) == set(schema["properties"]) and schema["additionalProperties"] is False
    # The train key's undecided half points: an undecided pair is a value of its own.
    t3 = next(q for q in packets.questions(TRAIN) if q.target == "T3")
    assert "0.5-1" in prompts.schema([t3])["properties"]["T3"]["properties"]["score"]["enum"]


def test_the_packet_holds_the_rubric_word_for_word_the_transcript_and_the_rules_of_evidence():
    turns, steps = fake_turns(KEYKEEPER)
    shown = packets.blocks(turns, steps, KEYKEEPER, lambda t: t)
    asked = packets.questions(KEYKEEPER)
    text, used = prompts.render(
        KEYKEEPER, packets.Part(1, 1, None, tuple(asked)), shown, mask=lambda t: t, blind=True, model="m"
    )
    for rubric in KEYKEEPER.rubrics:
        assert rubric.text in text
        for item in rubric.all_items():
            assert item.text in text
    for counter in KEYKEEPER.counters:
        assert counter.text in text
    assert "### turn 2 · the player · step m1" in text and "### turn 3 · the model · step m1" in text
    assert "### turn 0 · the player · step m0 (setup)" in text
    assert 'write "no evidence" as the quote' in text and "Claim nothing without a verbatim quote" in text
    assert '- "T1": {"score": 0, 1 or 2, "quote": "…", "turn": N}' in text and used == []
    # The transcript comes before the questions, so the parts of a run share a prefix.
    assert text.index("## The transcript") < text.index("## The rubrics")


def test_a_long_run_is_planned_in_parts_each_question_where_its_steps_are():
    turns, steps = fake_turns(KEYKEEPER, words=400)
    shown = packets.blocks(turns, steps, KEYKEEPER, lambda t: t)
    asked = packets.questions(KEYKEEPER)
    parts = packets.plan(KEYKEEPER, asked, shown, fixed=1000, budget=1000 + 2500, reply_budget=100_000)
    assert len(parts) > 1 and all(p.steps for p in parts)
    t7 = next(p for p in parts if any(q.target == "T7" for q in p.questions))
    assert "m7" in t7.steps
    r1 = [p for p in parts if any(q.target == "R1" for q in p.questions)]
    assert len(r1) == len({p.steps for p in parts})  # a whole-run item: in every group
    assert sum(any(q.kind == "summary" for q in p.questions) for p in parts) == 1
    for part in parts:
        assert sum(b.tokens for b in shown if b.step in part.steps) <= 2500
    with pytest.raises(packets.PacketTooLarge, match="step m0 alone needs about"):
        packets.plan(KEYKEEPER, asked, shown, fixed=1000, budget=1000 + 300, reply_budget=100_000)


def test_a_reply_is_read_as_json_in_prose_as_a_table_or_cut_off():
    asked = [q for q in packets.questions(KEYKEEPER) if q.target in ("T1", "T2", "L3")]
    card = {"T1": {"score": 2, "quote": "He counts the coins", "turn": 3}, "T2": {"score": 1, "quote": "…", "turn": 5}}
    card["L3"] = {"events": [{"quote": "a gate creaks", "turn": 7}]}
    plain = replies.read(json.dumps(card), asked)
    assert plain.form == "json" and plain.claims[asked[0]].value == (2.0, None)
    assert plain.claims[asked[1]].evidence[0].quote is None  # the template's "…" is no quote
    assert plain.claims[asked[2]].evidence[0].quote == "a gate creaks"
    fenced = replies.read("My card:\n```json\n" + json.dumps(card) + "\n```\nDone.", asked)
    assert fenced.form == "json in prose" and not fenced.problems
    table = replies.read("| item | score | quote | turn |\n|---|---|---|---|\n| T1 | 2 | He counts | 3 |\n", asked)
    assert table.form == "markdown table" and table.claims[asked[0]].value == (2.0, None)
    assert table.problems == {asked[1]: "missing from your answer", asked[2]: "missing from your answer"}
    cut = replies.read(json.dumps(card)[:-40], asked)
    assert cut.form == "json, cut off" and asked[0] in cut.claims and asked[2] in cut.problems
    raw_newline = replies.read('{"T1": {"score": 0, "quote": "two\nlines", "turn": 1}}', asked)
    assert raw_newline.claims[asked[0]].evidence[0].quote == "two\nlines"


def test_what_cannot_stand_is_a_problem_by_item_and_strays_are_listed():
    asked = [q for q in packets.questions(KEYKEEPER) if q.target in ("T1", "TB1", "L2") or q.label == "L1 at m2"]
    reading = replies.read(
        json.dumps(
            {
                "T1": {"score": 7, "quote": "x"},
                "TB1": {"score": 2, "quote": "x"},
                "L2": {"answer": "maybe", "quote": "x"},
                "L1": {"m2": {"verdict": "annulled", "quote": "x"}, "m99": {"verdict": "annulled"}},
                "T13": {"score": 1},
            }
        ),
        asked,
    )
    problems = {q.label: p for q, p in reading.problems.items()}
    assert problems["T1"] == "the score 7 is not on its scale (0, 1, 2)"
    assert problems["TB1"] == "the score 2 is not on its scale (0, 1)"
    assert problems["L2"] == "the answer 'maybe' is not one of: yes, no"
    assert [q.label for q in reading.claims] == ["L1 at m2"] and reading.strays == ["T13", "L1.m99"]
    with pytest.raises(replies.Unreadable):
        replies.read("I'd rather not say.", asked)
    assert replies.looks_like_refusal("I'm sorry, but I can't help with that.")
    assert not replies.looks_like_refusal("Here is my card.")


def test_the_blind_mask_reaches_every_outside_text_of_the_packet():
    turns, steps = fake_turns(KEYKEEPER)
    turns[3]["text"] = "As Claude, made by Anthropic, I keep the keys."
    mask = blind.masker(["anthropic/claude-opus-5", "openrouter"])
    shown = packets.blocks(turns, steps, KEYKEEPER, mask)
    asked = packets.questions(KEYKEEPER)
    text, _ = prompts.render(KEYKEEPER, packets.Part(1, 1, None, tuple(asked)), shown, mask=mask, blind=True, model="x")
    assert "Claude" not in text and "Anthropic" not in text and "As ▒▒▒▒▒▒, made by ▒▒▒▒▒▒▒▒▒" in text


def test_the_blind_mask_hides_the_maker_in_an_endpoint_not_its_ordinary_words():
    mask = blind.masker(["vendor-x/keeper-7b", "https://api.openrouter.ai/v1", "local", "http://localhost:8080/v1"])
    text = "At the local inn, the api of keeper-7b from vendor-x, said OpenRouter over https."
    assert mask(text) == "At the local inn, the api of ▒▒▒▒▒▒▒▒▒ from ▒▒▒▒▒▒▒▒, said ▒▒▒▒▒▒▒▒▒▒ over https."
