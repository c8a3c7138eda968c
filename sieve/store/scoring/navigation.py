"""Where a reviewer goes next in a run: a step or a chapter by number, the next thing left to score, and
the places a word stands in it. (The next run to score is store.scoring.field's.)

Review asks these; they read the record and the card only, so they are the same
in a test without a screen.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from sieve.errors import SieveUsageError
from sieve.scenarios import Chapter, Scenario, Step
from sieve.store.scoring.runview import RunView
from sieve.store.scoring.scorecard import Card
from sieve.store.scoring.search_terms import Query

# -- steps and chapters by number ---------------------------------------------------------


def step_numbers(scenario: Scenario) -> dict[str, int]:
    """Each step's number as a reviewer counts them: the setup message is 0, the player's messages from 1."""
    first = 0 if scenario.steps and scenario.steps[0].kind == "setup" else 1
    return {step.id: n for n, step in enumerate(scenario.steps, start=first)}


def step_label(scenario: Scenario, step_id: str) -> str:
    """`step 3 of 13 · m3` (or the live message's key, `live@12`, in a run that left the script)."""
    numbers = step_numbers(scenario)
    if step_id not in numbers:
        return step_id
    last = max(numbers.values())
    return f"step {numbers[step_id]} of {last} · {step_id}"


def chapter_of(scenario: Scenario, step_id: str | None) -> tuple[int, Chapter] | None:
    """The chapter a step belongs to, with its number from 1."""
    try:
        step = scenario.step(step_id or "")
    except KeyError:
        return None
    for n, chapter in enumerate(scenario.chapters, start=1):
        if chapter.id == step.chapter:
            return n, chapter
    return None


def resolve_step(scenario: Scenario, wanted: str) -> Step:
    """A step by its number (`3`) or its id (`m3`, any case); SieveUsageError names what there is."""
    text = wanted.strip()
    by_id = {s.id.casefold(): s for s in scenario.steps}
    if text.casefold() in by_id:
        return by_id[text.casefold()]
    if re.fullmatch(r"\d{1,6}", text):
        numbers = step_numbers(scenario)
        for step in scenario.steps:
            if numbers[step.id] == int(text):
                return step
        raise SieveUsageError(
            f"no step {text}: the steps are numbered {min(numbers.values())} to {max(numbers.values())}"
        )
    raise SieveUsageError(f"no step '{text}': give its number or its id ({scenario.steps[0].id}, …)")


def resolve_chapter(scenario: Scenario, wanted: str) -> Chapter:
    """A chapter by its number (`2`), its id (`c2`) or the start of its title (`the val`)."""
    if not scenario.chapters:
        raise SieveUsageError(f"{scenario.name} has no chapters")
    text = wanted.strip().casefold()
    if re.fullmatch(r"\d{1,6}", text):
        n = int(text)
        if 1 <= n <= len(scenario.chapters):
            return scenario.chapters[n - 1]
        raise SieveUsageError(f"no chapter {n}: there are {len(scenario.chapters)}")
    for chapter in scenario.chapters:
        if chapter.id.casefold() == text:
            return chapter
    titled = [c for c in scenario.chapters if text and c.title.casefold().startswith(text)]
    if len(titled) == 1:
        return titled[0]
    raise SieveUsageError(
        f"no chapter '{wanted.strip()}': give its number (1 to {len(scenario.chapters)}), its id or the start of "
        "its title"
    )


def position_of_step(view: RunView, step_id: str) -> int | None:
    """Where in the run a step is read: its (first) reply, else the message itself; None if never played."""
    for i, turn in enumerate(view.turns):
        if turn["role"] == "assistant" and view.steps.get(turn["id"]) == step_id:
            return i
    for i, turn in enumerate(view.turns):
        if view.steps.get(turn["id"]) == step_id:
            return i
    return None


# -- what is left to score ----------------------------------------------------------------


@dataclass(frozen=True)
class Task:
    """One thing left to score: what (an item, a counter's step, a probe, a written judgment), and where."""

    id: str  # the item, counter, probe or written judgment
    picker: str  # "score" (the rubric picker) or "count" (counters and probes)
    step: str | None  # the step it is scored from; None: from the whole run

    @property
    def label(self) -> str:
        return self.id + (f" at {self.step}" if self.step else "")


def tasks(scenario: Scenario, card: Card) -> list[Task]:
    """Everything left to score on this card, in the order of the script; whole-run things last."""
    out: list[Task] = []
    for rubric in card.rubrics:
        for item in rubric.items + rubric.bonuses:
            if not item.scored:
                out.append(Task(item.item.id, "score", item.item.steps[0] if item.item.steps else None))
        for written in rubric.rubric.written:
            if written.id not in rubric.written:
                steps = [s for i in written.items for s in scenario.item(i)[1].steps]
                out.append(Task(written.id, "score", steps[0] if steps else None))
    for counter in card.counters:
        if counter.counter.kind == "verdict":
            out += [Task(counter.counter.id, "count", step) for step in counter.unjudged_steps]
        elif not counter.judged:
            out.append(Task(counter.counter.id, "count", None))
    for probe in card.probes:
        if probe.mark is None:
            out.append(Task(probe.probe.id, "count", probe.probe.asked[0] if probe.probe.asked else None))
    order = {s.id: n for n, s in enumerate(scenario.steps)}
    return sorted(out, key=lambda t: order.get(t.step or "", len(order)))


def next_task(todo: list[Task], at_step: str | None, offered: Task | None, scenario: Scenario) -> Task | None:
    """The task `i` opens: the one offered (what Review's header names) while it is left to score, else the first
    at or past the step being read, round to the start when none is left past it.

    The one offered is never passed over: the header promises it, so `i` keeps its word after an
    escape. Going to another step drops the offer (Review), and `i` then starts from there.
    """
    if not todo:
        return None
    if offered is not None and offered in todo:
        return offered
    order = {s.id: n for n, s in enumerate(scenario.steps)}
    here = order.get(at_step or "", -1)
    for task in todo:
        if task.step is None or order.get(task.step, len(order)) >= here:
            return task
    return todo[0]


# -- searching the transcript -------------------------------------------------------------


@dataclass(frozen=True)
class Hit:
    turn_id: str
    start: int
    end: int


def find(view: RunView, text: str, shown: Callable[[str], str] | None = None) -> list[Hit]:
    """Where `text` stands in the run's turns, in reading order, as spans of each turn's original text.

    The same matcher as `sieve search` (search_terms.Query: any order, case and diacritics
    folded, prefixes and word forms), so the same turns. In each turn, the places where the
    words stand side by side, if they do; else every word. `shown` is what the reviewer
    sees of a text (masked when blind): that is searched.
    """
    query = Query(text)
    if not query:
        return []
    shown = shown or (lambda t: t)
    hits: list[Hit] = []
    for turn in view.turns:
        body = shown(turn["text"] or "")
        if query.match(body) is None:
            continue
        spans = query.hits_together(body) or query.hits(body)
        hits += [Hit(turn["id"], a, b) for a, b in spans]
    return hits
