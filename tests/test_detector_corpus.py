"""The detectors against hand labels: precision and recall per detector and language, the runs held apart apart.

tests/data/detector_labels.json marks the events in tests/data/transcripts.json and
tests/data/detector_transcripts.json (SmolLM2-135M's own replies) and in runs
written by hand for what that model never writes (leaked template tokens, refusals,
another language); tests/data/detector_labels_cs.json marks a Czech corpus written
by hand (tests/data/detector_transcripts_cs.json, the keykeeper test in Czech). Runs
marked `held-apart` were written before the cues they test and are never used to
tune them: their figures are printed, and reported, apart. A finding is right when
one of its spans overlaps a labelled event of its detector; an event is found when
some finding overlaps it.
"""

from __future__ import annotations

import json
from collections import defaultdict
from functools import cache
from pathlib import Path

import pytest

from sieve import scenarios
from sieve.scenarios.detectors import BY_NAME as SPECS
from sieve.store.scoring import detectors
from sieve.store.scoring.detectors import REGISTRY
from sieve.store.scoring.statistics import wilson

DATA = Path(__file__).resolve().parent / "data"
ROOT = DATA.parent.parent
ENGLISH = json.loads((DATA / "detector_labels.json").read_text(encoding="utf-8"))
CZECH = json.loads((DATA / "detector_labels_cs.json").read_text(encoding="utf-8"))
LABELS = {key: ENGLISH[key] + CZECH[key] for key in ("events", "clean")}
FILES = {
    name: json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))["runs"]
    for name in ("transcripts", "detector_transcripts")
}
FILES["cs"] = json.loads((DATA / "detector_transcripts_cs.json").read_text(encoding="utf-8"))["runs"]
HELD_APART = "held-apart"
# The precision each detector must keep on the runs it was tuned on (issue 13), and the recall measured there,
# less a margin: (language, measure) -> floor. The runs held apart have no floors: what they show is reported.
PRECISION_FLOORS = {
    ("en", "repetition"): 0.9,
    ("en", "form: leaks"): 0.9,
    ("en", "out-of-game"): 0.8,
    ("en", "plays-player"): 0.8,
    ("cs", "out-of-game"): 0.9,
    ("cs", "plays-player"): 0.9,
}
RECALL_FLOORS = {
    ("en", "repetition"): 0.7,
    ("en", "form: leaks"): 0.9,
    ("en", "out-of-game"): 0.8,
    ("en", "plays-player"): 0.7,
    ("cs", "out-of-game"): 0.85,
    ("cs", "plays-player"): 0.85,
}


def part(key: str) -> tuple[str, str]:
    """A labelled run's language and part: ("en", "tuned") or ("cs", "held-apart")."""
    source, n = key.split(":")
    if source == "cs":
        return "cs", HELD_APART if FILES["cs"][int(n)]["part"] == HELD_APART else "tuned"
    if source == "handwritten":
        return "en", ENGLISH["handwritten"][int(n)].get("part", "tuned")
    return "en", "tuned"


@cache
def run(key: str) -> tuple[str, tuple[dict, ...]]:
    """A labelled run's scenario (a name or a path) and turns (ids `key:idx`, status as recorded, else complete)."""
    source, n = key.split(":")
    if source == "handwritten":
        written = ENGLISH["handwritten"][int(n)]
        scenario = scenarios.load(written["scenario"])
        turns = []
        for k, ((step, _), reply) in enumerate(zip(scenario.script(), written["replies"])):
            turns += [
                {"idx": 2 * k, "role": "user", "text": step.text},
                {"idx": 2 * k + 1, "role": "assistant", "text": reply},
            ]
        name = written["scenario"]
    else:
        recorded = FILES[source][int(n)]
        name, turns = recorded["scenario"], recorded["turns"]
    return name, tuple(
        {**t, "id": f"{key}:{t['idx']}", "status": t.get("status", "complete"), "finish_reason": t.get("finish_reason")}
        for t in turns
    )


@cache
def findings(key: str) -> tuple:
    """Every finding of every detector on a run, with the parameters its scenario gives the detector."""
    name, turns = run(key)
    scenario = scenarios.load(ROOT / name if name.endswith(".toml") else name)
    text = detectors.run_text(list(turns), scenario)
    params = {u.detector: u.params for u in scenario.detector_uses()}
    out = []
    for detector, module in REGISTRY.items():
        out += module.detect(text, SPECS[detector].resolve(params.get(detector)))
    return tuple(out)


def measure(detector: str, category: str) -> str:
    if detector == "form":
        return f"form: {'leaks' if category == 'leak' else category}"
    return detector


def where(event: dict) -> list[tuple[int, int, int]]:
    """(turn, start, end) of an event's quote in each of its turns that holds it (no quote: the whole reply;
    a loop is an event of its whole reply, the quote one instance of it)."""
    _, turns = run(event["run"])
    by_idx = {t["idx"]: t for t in turns}
    out = []
    for idx in event["turns"]:
        text = by_idx[idx]["text"]
        if not event["quote"] or (event["category"] == "loop" and event["quote"] in text):
            out.append((idx, 0, len(text)))
        elif event["quote"] in text:
            start = text.index(event["quote"])
            out.append((idx, start, start + len(event["quote"])))
    return out


def overlaps(finding, places: list[tuple[int, int, int]]) -> bool:
    return any(s.turn_idx == t and s.start < e and b < s.end for s in finding.spans for t, b, e in places)


Counts = dict[tuple[str, str, str], dict[str, float]]


def tally() -> Counts:
    """(language, part, measure) -> found, right, events, caught."""
    counts: Counts = defaultdict(lambda: {"found": 0, "right": 0, "events": 0, "caught": 0})
    events_by_run: dict[str, list[dict]] = defaultdict(list)
    for event in LABELS["events"]:
        events_by_run[event["run"]].append(event)
    for key, events in events_by_run.items():
        language, kind = part(key)
        for finding in findings(key):
            m = measure(finding.detector, finding.category)
            counts[language, kind, m]["found"] += 1
            if any(measure(e["detector"], e["category"]) == m and overlaps(finding, where(e)) for e in events):
                counts[language, kind, m]["right"] += 1
        for event in events:
            m = measure(event["detector"], event["category"])
            counts[language, kind, m]["events"] += 1
            if any(measure(f.detector, f.category) == m and overlaps(f, where(event)) for f in findings(key)):
                counts[language, kind, m]["caught"] += 1
    for c in counts.values():
        c["precision"] = c["right"] / c["found"] if c["found"] else 1.0
        c["recall"] = c["caught"] / c["events"] if c["events"] else 1.0
    return counts


def share(hits: float, n: float) -> str:
    """`0.60 (6/10, 95% 0.31–0.83)`: a share with its Wilson interval, since the counts are small; `–` of none."""
    if not n:
        return "– (0/0)"
    low, high = wilson(hits / n, n)
    return f"{hits / n:.2f} ({hits}/{n}, 95% {low:.2f}–{high:.2f})"


def table(counts: Counts) -> str:
    """The figures as printed (and as docs/judging.md reports them): per language, the tuned runs, then apart."""
    lines = []
    for language, kind, m in sorted(counts, key=lambda k: (k[0] != "en", k[0], k[1] == HELD_APART, k[2])):
        c = counts[language, kind, m]
        lines.append(
            f"  {language}  {kind:<10}  {m:<15} precision {share(c['right'], c['found'])}"
            f"  recall {share(c['caught'], c['events'])}"
        )
    return "\n".join(lines)


def test_every_run_is_tuned_on_or_held_apart_and_both_languages_have_both():
    keys = {e["run"] for e in LABELS["events"]}
    assert {part(k) for k in keys} == {("en", "tuned"), ("en", HELD_APART), ("cs", "tuned"), ("cs", HELD_APART)}


def test_every_labelled_quote_stands_in_the_first_of_its_turns():
    for event in LABELS["events"]:
        places = where(event)
        assert places and places[0][0] == event["turns"][0], event
    for passage in LABELS["clean"]:
        _, turns = run(passage["run"])
        assert passage["quote"] in next(t["text"] for t in turns if t["idx"] == passage["turn"]), passage


def test_each_detector_keeps_its_precision_and_recall_on_the_labelled_runs(capsys):
    counts = tally()
    with capsys.disabled():
        print("\n  detectors on the labelled corpus (language, runs tuned on or held apart):\n" + table(counts))
    for (language, m), floor in PRECISION_FLOORS.items():
        c = counts[language, "tuned", m]
        assert c["found"] and c["precision"] >= floor, (language, m, c)
    for (language, m), floor in RECALL_FLOORS.items():
        assert counts[language, "tuned", m]["recall"] >= floor, (language, m, counts[language, "tuned", m])


@pytest.mark.parametrize("passage", LABELS["clean"], ids=[p["why"] for p in LABELS["clean"]])
def test_a_clean_passage_is_not_flagged(passage):
    _, turns = run(passage["run"])
    text = next(t["text"] for t in turns if t["idx"] == passage["turn"])
    start = text.index(passage["quote"])
    place = [(passage["turn"], start, start + len(passage["quote"]))]
    flagged = [f for f in findings(passage["run"]) if f.detector in passage["detectors"] and overlaps(f, place)]
    assert not flagged, flagged


@pytest.mark.parametrize("key", sorted({e["run"] for e in LABELS["events"]}))
def test_every_span_is_an_offset_into_the_original_text(key):
    _, turns = run(key)
    texts = {t["id"]: t["text"] for t in turns}
    for finding in findings(key):
        assert finding.spans and 0 <= finding.confidence <= 1 and finding.reason
        for s in finding.spans:
            assert texts[s.turn_id][s.start : s.end] == s.text, (finding, s)
