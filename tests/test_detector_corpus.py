"""The detectors against hand labels: precision and recall per detector, on transcripts the local model wrote.

tests/data/detector_labels.json marks the events in tests/data/transcripts.json and
tests/data/detector_transcripts.json (SmolLM2-135M's own replies) and in one run
written by hand for what that model never writes (leaked template tokens, refusals,
another language). A finding is right when one of its spans overlaps a labelled
event of its detector; an event is found when some finding overlaps it.
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

DATA = Path(__file__).resolve().parent / "data"
LABELS = json.loads((DATA / "detector_labels.json").read_text(encoding="utf-8"))
FILES = {
    name: json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))["runs"]
    for name in ("transcripts", "detector_transcripts")
}
# The precision each detector must keep (issue 13), and the recall measured on this corpus, less a margin.
PRECISION_FLOORS = {"repetition": 0.9, "form: leaks": 0.9, "out-of-game": 0.8, "plays-player": 0.8}
RECALL_FLOORS = {"repetition": 0.7, "form: leaks": 0.9, "out-of-game": 0.8, "plays-player": 0.7}


@cache
def run(key: str) -> tuple[str, tuple[dict, ...]]:
    """A labelled run's scenario name and turns (ids `key:idx`, status as recorded, else complete)."""
    source, n = key.split(":")
    if source == "handwritten":
        written = LABELS["handwritten"][int(n)]
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
    scenario = scenarios.load(name)
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


def tally() -> dict[str, dict[str, int]]:
    counts: dict[str, dict[str, int]] = defaultdict(lambda: {"found": 0, "right": 0, "events": 0, "caught": 0})
    events_by_run: dict[str, list[dict]] = defaultdict(list)
    for event in LABELS["events"]:
        events_by_run[event["run"]].append(event)
    for key, events in events_by_run.items():
        for finding in findings(key):
            m = measure(finding.detector, finding.category)
            counts[m]["found"] += 1
            if any(measure(e["detector"], e["category"]) == m and overlaps(finding, where(e)) for e in events):
                counts[m]["right"] += 1
        for event in events:
            m = measure(event["detector"], event["category"])
            counts[m]["events"] += 1
            if any(measure(f.detector, f.category) == m and overlaps(f, where(event)) for f in findings(key)):
                counts[m]["caught"] += 1
    return counts


def test_every_labelled_quote_stands_in_the_first_of_its_turns():
    for event in LABELS["events"]:
        places = where(event)
        assert places and places[0][0] == event["turns"][0], event
    for passage in LABELS["clean"]:
        _, turns = run(passage["run"])
        assert passage["quote"] in next(t["text"] for t in turns if t["idx"] == passage["turn"]), passage


def test_each_detector_keeps_its_precision_and_recall_on_the_labelled_runs(capsys):
    counts = tally()
    lines = []
    for m, c in sorted(counts.items()):
        precision = c["right"] / c["found"] if c["found"] else 1.0
        recall = c["caught"] / c["events"] if c["events"] else 1.0
        lines.append(
            f"  {m:<15} precision {precision:.2f} ({c['right']}/{c['found']})  recall {recall:.2f} ({c['caught']}/{c['events']})"
        )
        c["precision"], c["recall"] = precision, recall
    with capsys.disabled():
        print("\n  detectors on the labelled corpus:\n" + "\n".join(lines))
    for m, floor in PRECISION_FLOORS.items():
        assert counts[m]["found"] and counts[m]["precision"] >= floor, (m, counts[m])
    for m, floor in RECALL_FLOORS.items():
        assert counts[m]["recall"] >= floor, (m, counts[m])


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
