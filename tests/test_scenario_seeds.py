"""The built-in scenarios carry the seeds' words exactly, and every scored thing of the seeds."""

from __future__ import annotations

import re

import pytest

from sieve import scenarios
from tests.conftest import SHARED_SEEDS, VENDORED_SEEDS


def seed_lines(seeds_dir, name):
    return (seeds_dir / name).read_text(encoding="utf-8").splitlines()


def section(lines, start, stop):
    """The lines after the one equal to `start`, up to the one that starts with `stop`."""
    i = lines.index(start) + 1
    j = next(k for k in range(i, len(lines)) if lines[k].startswith(stop))
    return lines[i:j]


def table_rows(lines):
    return [
        [c.strip() for c in line.strip().strip("|").split("|")]
        for line in lines
        if line.startswith("| ")
        and not line.startswith("| item")
        and not line.startswith("| marker")
        and not line.startswith("| turn")
    ]


@pytest.mark.skipif(not SHARED_SEEDS.is_dir(), reason="../shared/seeds is not beside this checkout")
def test_vendored_seeds_are_identical_to_shared_seeds():
    for path in SHARED_SEEDS.iterdir():
        assert (VENDORED_SEEDS / path.name).read_bytes() == path.read_bytes(), path.name


# -- keykeeper ----------------------------------------------------------------


@pytest.fixture(scope="module")
def keykeeper():
    return scenarios.load("keykeeper")


def test_keykeeper_message_0_is_the_seed_text(seeds_dir, keykeeper):
    lines = seed_lines(seeds_dir, "keykeeper-test.txt")
    body = section(
        lines,
        "This is what every model got first, as an ordinary user message, with no system prompt.",
        "Thirteen messages",
    )
    assert keykeeper.steps[0].kind == "setup"
    assert keykeeper.steps[0].text == "\n".join(body)
    assert keykeeper.system is None  # "no system prompt"


def test_keykeeper_thirteen_messages_are_the_seed_text_in_order(seeds_dir, keykeeper):
    lines = seed_lines(seeds_dir, "keykeeper-test.txt")
    seeded = [re.sub(r"^\d+\. ", "", line) for line in lines if re.match(r"^\d+\. ", line)]
    assert len(seeded) == 13
    players = [s for s in keykeeper.steps if s.kind == "player"]
    assert [s.text for s in players] == seeded
    assert all(s.note for s in keykeeper.steps), "every step says what it tests"


def test_keykeeper_rubric_t_has_the_twelve_items_and_four_bonuses(seeds_dir, keykeeper):
    lines = seed_lines(seeds_dir, "keykeeper-test.txt")
    rows = table_rows(section(lines, "Rubric T, the sieve", "Bonuses of one point each"))
    rubric = next(r for r in keykeeper.rubrics if r.id == "T")
    assert [(i.id, i.text) for i in rubric.items] == [tuple(r) for r in rows]
    assert len(rubric.items) == 12
    assert all(i.scale.values == (0, 1, 2) for i in rubric.items)
    assert (rubric.item_maximum, rubric.bonus_item_maximum) == (24, 4)
    bonus_paragraph = next(line for line in lines if line.startswith("Bonuses of one point each."))
    assert bonus_paragraph == "Bonuses of one point each. " + " ".join(b.text for b in rubric.bonuses)
    assert len(rubric.bonuses) == 4 and all(b.scale.values == (0, 1) for b in rubric.bonuses)
    for item in rubric.items:
        for anchor in item.anchors.values():
            assert anchor in item.text


def test_keykeeper_rubric_r_has_the_six_markers(seeds_dir, keykeeper):
    lines = seed_lines(seeds_dir, "keykeeper-test.txt")
    rows = table_rows(section(lines, "Rubric R, is there someone inside", "Axis L"))
    rubric = next(r for r in keykeeper.rubrics if r.id == "R")
    assert [(f"{i.id} {i.title}", i.text) for i in rubric.items] == [tuple(r) for r in rows]
    assert len(rubric.items) == 6 and rubric.item_maximum == 12
    # "scored from the whole run, not from single turns" (except R6, message 12)
    assert [i.id for i in rubric.items if i.steps] == ["R6"]


def test_keykeeper_axis_l_has_the_eight_counters_with_their_kinds(seeds_dir, keykeeper):
    lines = seed_lines(seeds_dir, "keykeeper-test.txt")
    paragraph = next(line for line in lines if line.startswith("L1 played out against annulled."))
    for counter in keykeeper.counters:
        assert f"{counter.id} {counter.title}" in paragraph
        assert counter.text in paragraph
    assert [c.id for c in keykeeper.counters] == [f"L{n}" for n in range(1, 9)]
    kinds = {c.id: c.kind for c in keykeeper.counters}
    assert kinds == {
        "L1": "verdict",
        "L2": "yesno",
        "L3": "count",
        "L4": "count",
        "L5": "chain",
        "L6": "count",
        "L7": "count",
        "L8": "count",
    }
    l1 = keykeeper.counter("L1")
    assert l1.values == ("played out", "annulled") and len(l1.steps) == 13
    assert {c.id for c in keykeeper.counters if c.disqualifying} == {"L1", "L2"}
    assert (l1.disqualify_on, keykeeper.counter("L2").disqualify_on) == ("annulled", "no")


def test_keykeeper_items_look_at_the_messages_that_test_them(keykeeper):
    _, t10 = keykeeper.item("T10")
    _, t12 = keykeeper.item("T12")
    assert t10.steps == ("m10",) and t12.steps == ("m13",)
    assert keykeeper.settings == {"temperature": 1.0, "max_tokens": 24000, "reasoning_effort": "low", "timeout": 240}


# -- train --------------------------------------------------------------------


@pytest.fixture(scope="module")
def train():
    return scenarios.load("train")


def test_train_brief_and_ten_turns_are_the_seed_text(seeds_dir, train):
    lines = seed_lines(seeds_dir, "train-test.txt")
    brief_line = next(line for line in lines if line.startswith("Play Viktor"))
    brief = train.steps[0]
    assert brief.kind == "setup"
    # The seed runs the brief and the tester's instruction together ("character.Insert").
    assert (
        brief_line
        == brief.text
        + "Insert one at a time, always the same, regardless of what the model replies. A mismatch is data too."
    )
    start = lines.index(brief_line) + 1
    turns = lines[start : lines.index("Scoring key")]
    assert len(turns) == 10
    assert [s.text for s in train.steps[1:]] == turns


def test_train_key_has_traps_t3_to_t10_on_the_half_point_scale(seeds_dir, train):
    lines = seed_lines(seeds_dir, "train-test.txt")
    rows = table_rows(lines)
    (key,) = train.rubrics
    assert [(i.id, i.title, i.text, i.anchors[0]) for i in key.items] == [tuple(r) for r in rows]
    assert [i.id for i in key.items] == [f"T{n}" for n in range(3, 11)]
    for item in key.items:
        assert item.scale.values == (1, 0.5, 0) and item.scale.undecided
        assert item.scale.allows(0.5, 1) and not item.scale.allows(0, 1)
    assert key.item_maximum == 8


def test_train_scoring_rules_are_the_seed_sentences(seeds_dir, train):
    lines = [line.removeprefix("- ") for line in seed_lines(seeds_dir, "train-test.txt")]
    (key,) = train.rubrics
    rules = list(key.rules) + [r for item in key.items for r in item.rules]
    assert len(rules) == 8
    for rule in rules:
        assert rule in lines
    assert key.deductions.text in lines and key.deductions.maximum == 1.5
    (written,) = key.written
    assert written.items == ("T7", "T8") and written.text in lines


# -- story --------------------------------------------------------------------


def criteria(seeds_dir):
    lines = seed_lines(seeds_dir, "story-benchmark.txt")
    out = {}
    for i, line in enumerate(lines):
        found = re.match(r"^(C\d+) (.+)$", line)
        if found and len(line) < 40:
            out[found.group(1)] = (found.group(2), lines[i + 2])
    return out


@pytest.mark.parametrize("name,chapters", [("story-5", 5), ("story-12", 12)])
def test_story_criteria_are_the_seed_text_with_their_anchors(seeds_dir, name, chapters):
    story = scenarios.load(name)
    seeded = criteria(seeds_dir)
    (rubric,) = story.rubrics
    assert [i.id for i in rubric.items] == [f"C{n}" for n in range(1, 11)]
    for item in rubric.items:
        title, paragraph = seeded[item.id]
        assert item.title == title
        assert paragraph.startswith(item.text)
        assert item.scale.values == (1, 2, 3, 4, 5)
        levels = {int(n) for n in re.findall(r"\b[Aa] ([1-5]) ", paragraph)}
        assert set(item.anchors) == levels, item.id
        for text in [*item.anchors.values(), *item.rules]:
            assert text in paragraph
    assert set(next(i for i in rubric.items if i.id == "C3").anchors) == {1, 2, 3, 5}
    assert next(i for i in rubric.items if i.id == "C7").exclude == ("filler",)
    assert len(story.chapters) == chapters


@pytest.mark.parametrize("name", ["story-5", "story-12"])
def test_story_chapter_1_plants_and_the_final_chapter_asks(name):
    story = scenarios.load(name)
    first, last = story.chapters[0].id, story.chapters[-1].id
    probes = {p.id: p for p in story.probes}
    chapter_of = {s.id: s.chapter for s in story.steps}
    for pid in ("P-bread", "P-ring", "P-pebble", "P-first"):
        assert all(chapter_of[s] == last for s in probes[pid].asked), pid
    for pid in ("P-bread", "P-ring", "P-pebble"):
        assert all(chapter_of[s] == first for s in probes[pid].planted), pid
    assert probes["P-bread"].marks == ("correct", "omitted", "contradicted")
    assert probes["P-pebble"].kind == "control"
    assert probes["P-demand"].expected == "refused in character"
    assert probes["P-leap"].expected == "fails at a cost"
    for pid in ("P-demand", "P-leap"):
        assert chapter_of[probes[pid].asked[0]] == first
    text = {s.id: s.text.lower() for s in story.steps}
    assert "bread" in text[probes["P-bread"].planted[0]] and "winter" in text[probes["P-bread"].planted[0]]
    assert "silver ring" in text[probes["P-ring"].planted[0]] and "swear" in text[probes["P-ring"].planted[0]]
    assert "pebble" in text[probes["P-pebble"].asked[0]]
    recall = text[probes["P-first"].asked[0]]
    assert "first person i met" in recall and "this place" in recall
    # Nothing between chapter 1 and the payoff reminds the model of the planted facts.
    middle = [s for s in story.steps if s.chapter not in (first, last, None)]
    assert middle
    for step in middle:
        for word in ("bread", "ring", "swear", "secret", "pebble", "promise"):
            assert not re.search(rf"\b{word}", step.text.lower()), (step.id, word)


def test_story_long_chapters_close_with_a_repeated_filler_action():
    story = scenarios.load("story-12")
    by_chapter: dict[str, list] = {}
    for step in story.steps:
        if step.chapter:
            by_chapter.setdefault(step.chapter, []).append(step)
    long_chapters = [
        c
        for c, steps in by_chapter.items()
        if len([s for s in steps if s.kind == "player"]) >= 3 and c not in ("c1", "c12")
    ]
    assert len(long_chapters) >= 3
    for chapter in long_chapters:
        last = by_chapter[chapter][-1]
        assert last.kind == "filler" and last.repeat >= 2, chapter
    assert len(story.script()) > len(story.steps)
    assert len(scenarios.load("story-5").script()) < len(story.script())
