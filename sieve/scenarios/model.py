"""What a scenario is, once loaded: plain frozen dataclasses, no parsing here.

A scenario holds the script (steps, optionally grouped into chapters), how a run
is scored (rubrics of items on their own scales, counters of the L axis) and the
probes a story benchmark plants and asks about.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

# Step kinds: the setup message (message 0, the brief), a scripted player
# message, and a filler action the harness repeats to close a long chapter.
STEP_KINDS = ("setup", "player", "filler")

# Counter kinds of the L axis.
COUNTER_KINDS = ("count", "verdict", "yesno", "chain")

# Where an item's evidence may stand: the replies to its steps (the default), or anywhere in the run.
EVIDENCE_FROM = ("steps", "run")

# Probe kinds of the story benchmark.
PROBE_KINDS = ("memory", "control", "expected")


def format_value(value: float) -> str:
    """A scale value as a reviewer writes it: 2, 0.5 -> "½", 1.5 -> "1½", -0.5 -> "-½", -1.25 -> "-1¼"."""
    if value == int(value):
        return str(int(value))
    # The fraction of the magnitude, the sign before it: floor division would write −½ as -1½.
    sign = "-" if value < 0 else ""
    whole, frac = divmod(Fraction(abs(value)).limit_denominator(8), 1)
    if frac == 0:  # within an eighth of a whole number (a sum of floats): that number
        return str(int(whole) * (-1 if sign else 1))
    glyph = {Fraction(1, 2): "½", Fraction(1, 4): "¼", Fraction(3, 4): "¾"}.get(frac)
    if glyph is None:
        return str(value)
    return sign + (glyph if whole == 0 else f"{whole}{glyph}")


@dataclass(frozen=True)
class Scale:
    """The values an item may be scored with, best first as the seed lists them."""

    name: str
    values: tuple[float, ...]
    labels: dict[float, str] = field(default_factory=dict)
    # An undecided pair of neighbouring values (½–1) may be given; totals then
    # show as a range, as the train test's score table does (7.5–8).
    undecided: bool = False

    @property
    def maximum(self) -> float:
        return max(self.values)

    @property
    def minimum(self) -> float:
        return min(self.values)

    def label(self, value: float) -> str:
        return self.labels.get(value, format_value(value))

    def allows(self, low: float, high: float | None = None) -> bool:
        """Whether a score (or an undecided pair low–high) belongs to this scale."""
        if high is None or high == low:
            return low in self.values
        if not self.undecided or low not in self.values or high not in self.values:
            return False
        ordered = sorted(self.values)
        return ordered.index(high) - ordered.index(low) == 1


@dataclass(frozen=True)
class Chapter:
    id: str
    title: str


@dataclass(frozen=True)
class Step:
    id: str
    kind: str
    text: str
    note: str = ""
    chapter: str | None = None
    repeat: int = 1


@dataclass(frozen=True)
class Item:
    """One scored thing: a rubric item, a marker or a bonus."""

    id: str
    text: str
    scale: Scale
    title: str = ""
    steps: tuple[str, ...] = ()  # empty: scored from the whole run
    anchors: dict[float, str] = field(default_factory=dict)
    rules: tuple[str, ...] = ()
    disqualifying: bool = False
    exclude: tuple[str, ...] = ()  # step kinds that are not evidence for it
    # Judged at its steps, but its evidence may stand anywhere in the run (`evidence = "run"`); else a quote
    # from outside its steps is kept, marked off its step.
    whole_run: bool = False
    bonus: bool = False
    # A detector whose findings are suggested as notes on this item (sieve.scenarios.detectors).
    detector: str | None = None
    detector_params: dict[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class Deductions:
    """Points taken off outside the items, where a seed's rater did so."""

    text: str
    step: float
    maximum: float


@dataclass(frozen=True)
class Written:
    """A written judgment the rubric asks for, attached to some of its items."""

    id: str
    text: str
    items: tuple[str, ...]


@dataclass(frozen=True)
class Rubric:
    id: str
    title: str
    items: tuple[Item, ...]
    text: str = ""
    bonuses: tuple[Item, ...] = ()
    maximum: float | None = None
    bonus_maximum: float | None = None
    rules: tuple[str, ...] = ()
    deductions: Deductions | None = None
    written: tuple[Written, ...] = ()
    quote_required: bool = True

    @property
    def item_maximum(self) -> float:
        return sum(item.scale.maximum for item in self.items)

    @property
    def bonus_item_maximum(self) -> float:
        return sum(item.scale.maximum for item in self.bonuses)

    def all_items(self) -> tuple[Item, ...]:
        return self.items + self.bonuses


@dataclass(frozen=True)
class Counter:
    """An L-axis count, counted from the transcript rather than judged."""

    id: str
    title: str
    kind: str
    text: str = ""
    values: tuple[str, ...] = ()  # for verdict and yesno counters
    steps: tuple[str, ...] = ()  # for verdict counters: the steps judged
    disqualifying: bool = False
    disqualify_on: str | None = None  # the value that disqualifies a run
    # A detector that suggests this counter's events (sieve.scenarios.detectors).
    detector: str | None = None
    detector_params: dict[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class Probe:
    """A planted fact, a control object or an expected outcome (story benchmark)."""

    id: str
    kind: str
    title: str
    text: str
    planted: tuple[str, ...] = ()
    asked: tuple[str, ...] = ()
    marks: tuple[str, ...] = ()
    expected: str | None = None


@dataclass(frozen=True)
class Player:
    """A brief for a model in the player's seat: whom it plays, what it is after, the pressure to apply.

    Written from the player's side. The player model sees the brief and the
    conversation, never the steps' hidden notes.
    """

    id: str
    title: str
    brief: str


@dataclass(frozen=True)
class DetectorUse:
    """A detector as a scenario uses it: the item it serves (None: notes of its own) and its parameters."""

    detector: str
    item: str | None
    counter_kind: str | None  # the kind of counter it feeds; None when its findings are notes
    params: dict[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class Scenario:
    name: str
    title: str
    version: int
    steps: tuple[Step, ...]
    description: str = ""
    system: str | None = None
    chapters: tuple[Chapter, ...] = ()
    scales: dict[str, Scale] = field(default_factory=dict)
    rubrics: tuple[Rubric, ...] = ()
    counters: tuple[Counter, ...] = ()
    probes: tuple[Probe, ...] = ()
    players: tuple[Player, ...] = ()
    settings: dict[str, object] = field(default_factory=dict)
    source: str = ""  # the TOML text it was loaded from, snapshotted with each run
    path: str = ""
    sha256: str = ""
    # Who the player plays, for the detector of a model playing her; aliases are other names for her.
    player_character: str | None = None
    player_aliases: tuple[str, ...] = ()
    language: str | None = None  # the language the scenario is played in (a code from detectors.LANGUAGES)
    # What the scenario calls its counters: a heading ("Axis L, the literary life of a run") and a short name
    # ("axis L") for the card, the pickers and the exports.
    counters_title: str = "Counters"
    counters_name: str = "counters"

    @property
    def player_names(self) -> tuple[str, ...]:
        return ((self.player_character,) if self.player_character else ()) + self.player_aliases

    def detector_uses(self) -> list[DetectorUse]:
        """The detectors the scenario names, on counters (their events) and rubric items (notes)."""
        uses = [DetectorUse(c.detector, c.id, c.kind, dict(c.detector_params)) for c in self.counters if c.detector]
        uses += [
            DetectorUse(i.detector, i.id, None, dict(i.detector_params))
            for r in self.rubrics
            for i in r.all_items()
            if i.detector
        ]
        return uses

    def step(self, step_id: str) -> Step:
        for step in self.steps:
            if step.id == step_id:
                return step
        raise KeyError(step_id)

    def item(self, item_id: str) -> tuple[Rubric, Item]:
        for rubric in self.rubrics:
            for item in rubric.all_items():
                if item.id == item_id:
                    return rubric, item
        raise KeyError(item_id)

    def player(self, player_id: str) -> Player:
        for player in self.players:
            if player.id == player_id:
                return player
        raise KeyError(player_id)

    def counter(self, counter_id: str) -> Counter:
        for counter in self.counters:
            if counter.id == counter_id:
                return counter
        raise KeyError(counter_id)

    def script(self) -> list[tuple[Step, int]]:
        """The messages in the order they are sent: (step, repetition from 1)."""
        return [(step, n) for step in self.steps for n in range(1, step.repeat + 1)]


def _num(value: float) -> float | int:
    """Scale values for JSON: 2.0 -> 2, 0.5 stays 0.5."""
    return int(value) if value == int(value) else value


def _item_dict(item: Item) -> dict[str, object]:
    return {
        "id": item.id,
        "title": item.title,
        "text": item.text,
        "scale": [_num(v) for v in item.scale.values],
        "scale_name": item.scale.name,
        "labels": {format_value(v): label for v, label in item.scale.labels.items()},
        "undecided": item.scale.undecided,
        "steps": list(item.steps),
        "anchors": {format_value(v): text for v, text in item.anchors.items()},
        "rules": list(item.rules),
        "disqualifying": item.disqualifying,
        "exclude": list(item.exclude),
        "evidence": "run" if item.whole_run else "steps",
        "bonus": item.bonus,
        "detector": item.detector,
        "detector_params": dict(item.detector_params),
    }


def scenario_dict(scenario: Scenario) -> dict[str, object]:
    """The scenario as JSON-ready data (`sieve scenarios show --json`)."""
    return {
        "name": scenario.name,
        "title": scenario.title,
        "version": scenario.version,
        "sha256": scenario.sha256,
        "path": scenario.path,
        "description": scenario.description,
        "system": scenario.system,
        "player_character": scenario.player_character,
        "player_aliases": list(scenario.player_aliases),
        "language": scenario.language,
        "counters_title": scenario.counters_title,
        "counters_name": scenario.counters_name,
        "settings": scenario.settings,
        "chapters": [{"id": c.id, "title": c.title} for c in scenario.chapters],
        "steps": [
            {
                "id": s.id,
                "kind": s.kind,
                "chapter": s.chapter,
                "repeat": s.repeat,
                "text": s.text,
                "note": s.note,
            }
            for s in scenario.steps
        ],
        "rubrics": [
            {
                "id": r.id,
                "title": r.title,
                "text": r.text,
                "max": _num(r.item_maximum),
                "bonus_max": _num(r.bonus_item_maximum),
                "rules": list(r.rules),
                "quote_required": r.quote_required,
                "items": [_item_dict(i) for i in r.items],
                "bonuses": [_item_dict(i) for i in r.bonuses],
                "deductions": None
                if r.deductions is None
                else {"text": r.deductions.text, "step": _num(r.deductions.step), "max": _num(r.deductions.maximum)},
                "written": [{"id": w.id, "text": w.text, "items": list(w.items)} for w in r.written],
            }
            for r in scenario.rubrics
        ],
        "counters": [
            {
                "id": c.id,
                "title": c.title,
                "kind": c.kind,
                "text": c.text,
                "values": list(c.values),
                "steps": list(c.steps),
                "disqualifying": c.disqualifying,
                "disqualify_on": c.disqualify_on,
                "detector": c.detector,
                "detector_params": dict(c.detector_params),
            }
            for c in scenario.counters
        ],
        "probes": [
            {
                "id": p.id,
                "kind": p.kind,
                "title": p.title,
                "text": p.text,
                "planted": list(p.planted),
                "asked": list(p.asked),
                "marks": list(p.marks),
                "expected": p.expected,
            }
            for p in scenario.probes
        ],
        # The briefs a model in the player's seat can be given (`sieve run --player ID`).
        "players": [{"id": p.id, "title": p.title, "brief": p.brief} for p in scenario.players],
    }
