"""Reading a scenario's scoring: scales, rubrics and their items, counters and probes, detectors.

`RubricReader` adds these parts to `TableReader`; `loader._Builder` reads the rest of the file
(the scenario's head, chapters, steps, players, settings) and puts the whole together.
"""

from __future__ import annotations

from typing import Any

from sieve.scenarios.detectors import BY_NAME as DETECTORS
from sieve.scenarios.errors import KeyPath
from sieve.scenarios.model import (
    COUNTER_KINDS,
    EVIDENCE_FROM,
    PROBE_KINDS,
    STEP_KINDS,
    Counter,
    Deductions,
    Item,
    Probe,
    Rubric,
    Scale,
    Step,
    Written,
    format_value,
)
from sieve.scenarios.toml_reader import TableReader

# The marks of a probe when the file names none, by kind.
DEFAULT_MARKS = {
    "memory": ("correct", "omitted", "contradicted"),
    "control": ("mundane", "inflated"),
    "expected": ("as expected", "not as expected"),
}


class RubricReader(TableReader):
    """The scoring parts of a scenario file."""

    def detector(self, entry: dict[str, Any], kp: KeyPath, counter_kind: str | None) -> dict[str, Any]:
        """`detector` and `detector_params` of a counter (or, with no counter kind, a rubric item), checked."""
        name = entry.get("detector")
        params = entry.get("detector_params")
        if name is None:
            if params is not None:
                raise self.error([*kp, "detector_params"], "parameters need the 'detector' they are for")
            return {}
        spec = DETECTORS.get(name)
        if spec is None:
            raise self.error([*kp, "detector"], f"unknown detector '{name}' (one of: {', '.join(DETECTORS)})")
        if counter_kind is not None and counter_kind not in spec.feeds:
            raise self.error(
                [*kp, "detector"],
                f"the {name} detector cannot feed a {counter_kind} counter (it feeds: {', '.join(spec.feeds)})",
            )
        for key, value in (params or {}).items():
            param = spec.param(key)
            if param is None:
                known = ", ".join(p.name for p in spec.params) or "none"
                raise self.error([*kp, "detector_params", key], f"unknown parameter '{key}' of {name} (known: {known})")
            problem = param.problem(value)
            if problem:
                raise self.error([*kp, "detector_params", key], problem)
        return {"detector": name, "detector_params": dict(params or {})}

    def scales(self, raw: dict[str, Any]) -> dict[str, Scale]:
        out = {}
        for name, entry in raw.items():
            kp: KeyPath = ["scales", name]
            self.ident(name, kp)
            entry = self.table(entry, kp, {"values": "list:number"}, {"labels": "table", "undecided": "bool"})
            values = tuple(float(v) for v in entry["values"])
            if not values:
                raise self.error([*kp, "values"], "a scale needs at least one value")
            if len(set(values)) != len(values):
                raise self.error([*kp, "values"], "a value is listed twice")
            labels = {}
            for key, label in entry.get("labels", {}).items():
                value = self.scale_key(key, values, [*kp, "labels", key])
                self.check_type(label, [*kp, "labels", key], "str")
                labels[value] = label
            undecided = entry.get("undecided", False)
            if undecided and len(values) < 2:
                raise self.error([*kp, "undecided"], "an undecided pair needs at least two values")
            out[name] = Scale(name=name, values=values, labels=labels, undecided=undecided)
        return out

    def scale_key(self, key: str, values: tuple[float, ...], keypath: KeyPath) -> float:
        """A table key naming a scale value ("0.5", "½", "3"), checked against the scale."""
        try:
            value = 0.5 if key == "½" else float(key)
        except ValueError:
            raise self.error(keypath, f"'{key}' is not a number") from None
        if value not in values:
            shown = "/".join(format_value(v) for v in values)
            raise self.error(keypath, f"{format_value(value)} is outside the scale ({shown})")
        return value

    def step_refs(self, refs: list[str], keypath: KeyPath, steps: list[Step]) -> tuple[str, ...]:
        ids = {s.id for s in steps}
        for i, ref in enumerate(refs):
            if ref not in ids:
                raise self.error([*keypath, i], f"no step has the id '{ref}'")
        return tuple(refs)

    def rubrics(
        self, raw: list[Any], scales: dict[str, Scale], steps: list[Step], scored: dict[str, KeyPath]
    ) -> list[Rubric]:
        seen: dict[str, KeyPath] = {}
        out = []
        for i, entry in enumerate(raw):
            kp: KeyPath = ["rubrics", i]
            entry = self.table(
                entry,
                kp,
                {"id": "str", "title": "str", "items": "array"},
                {
                    "text": "str",
                    "scale": "str",
                    "max": "number",
                    "bonus_max": "number",
                    "rules": "list:str",
                    "bonuses": "array",
                    "bonus_scale": "str",
                    "deductions": "table",
                    "written": "array",
                    "quote_required": "bool",
                },
            )
            self.unique(seen, self.ident(entry["id"], [*kp, "id"]), [*kp, "id"], "rubric")
            default_scale = self.scale_ref(entry.get("scale"), [*kp, "scale"], scales)
            if not entry["items"]:
                raise self.error([*kp, "items"], "a rubric needs at least one item")
            items = tuple(
                self.item(e, [*kp, "items", j], default_scale, scales, steps, scored, bonus=False)
                for j, e in enumerate(entry["items"])
            )
            bonus_scale = self.scale_ref(entry.get("bonus_scale"), [*kp, "bonus_scale"], scales)
            bonuses = tuple(
                self.item(e, [*kp, "bonuses", j], bonus_scale, scales, steps, scored, bonus=True)
                for j, e in enumerate(entry.get("bonuses", []))
            )
            rubric = Rubric(
                id=entry["id"],
                title=self.text_value(entry["title"], [*kp, "title"]),
                text=entry.get("text", ""),
                items=items,
                bonuses=bonuses,
                maximum=entry.get("max"),
                bonus_maximum=entry.get("bonus_max"),
                rules=tuple(entry.get("rules", [])),
                deductions=self.deductions(entry.get("deductions"), [*kp, "deductions"]),
                written=self.written(entry.get("written", []), [*kp, "written"], {it.id for it in items + bonuses}),
                quote_required=entry.get("quote_required", True),
            )
            if rubric.maximum is not None and rubric.maximum != rubric.item_maximum:
                raise self.error(
                    [*kp, "max"],
                    f"max is {format_value(rubric.maximum)} but the items add up to {format_value(rubric.item_maximum)}",
                )
            if rubric.bonus_maximum is not None and rubric.bonus_maximum != rubric.bonus_item_maximum:
                raise self.error(
                    [*kp, "bonus_max"],
                    f"bonus_max is {format_value(rubric.bonus_maximum)} but the bonuses add up to "
                    f"{format_value(rubric.bonus_item_maximum)}",
                )
            out.append(rubric)
        return out

    def scale_ref(self, name: str | None, keypath: KeyPath, scales: dict[str, Scale]) -> Scale | None:
        if name is None:
            return None
        if name not in scales:
            known = ", ".join(sorted(scales)) or "none defined"
            raise self.error(keypath, f"no scale is named '{name}' (scales: {known})")
        return scales[name]

    def item(
        self,
        entry: Any,
        kp: KeyPath,
        default_scale: Scale | None,
        scales: dict[str, Scale],
        steps: list[Step],
        scored: dict[str, KeyPath],
        *,
        bonus: bool,
    ) -> Item:
        entry = self.table(
            entry,
            kp,
            {"id": "str", "text": "str"},
            {
                "title": "str",
                "scale": "str",
                "steps": "list:str",
                "anchors": "table",
                "rules": "list:str",
                "disqualifying": "bool",
                "exclude": "list:str",
                "evidence": "str",
                "detector": "str",
                "detector_params": "table",
            },
        )
        item_id = self.ident(entry["id"], [*kp, "id"])
        evidence = entry.get("evidence", "steps")
        if evidence not in EVIDENCE_FROM:
            raise self.error([*kp, "evidence"], f"unknown value '{evidence}' (one of: {', '.join(EVIDENCE_FROM)})")
        if evidence == "run" and not entry.get("steps"):
            raise self.error(
                [*kp, "evidence"], "'run' says the item takes evidence beyond its steps, but it lists no steps"
            )
        self.unique(scored, item_id, [*kp, "id"], "item")
        scale = self.scale_ref(entry.get("scale"), [*kp, "scale"], scales) or default_scale
        if scale is None:
            raise self.error(kp, "no scale: give the item a 'scale' or its rubric a default one")
        anchors = {}
        for key, text in entry.get("anchors", {}).items():
            value = self.scale_key(key, scale.values, [*kp, "anchors", key])
            self.check_type(text, [*kp, "anchors", key], "str")
            anchors[value] = self.text_value(text, [*kp, "anchors", key])
        for j, kind in enumerate(entry.get("exclude", [])):
            if kind not in STEP_KINDS:
                raise self.error([*kp, "exclude", j], f"unknown step kind '{kind}' (one of: {', '.join(STEP_KINDS)})")
        return Item(
            id=item_id,
            title=entry.get("title", ""),
            text=self.text_value(entry["text"], [*kp, "text"]),
            scale=scale,
            steps=self.step_refs(entry.get("steps", []), [*kp, "steps"], steps),
            anchors=dict(sorted(anchors.items())),
            rules=tuple(entry.get("rules", [])),
            disqualifying=entry.get("disqualifying", False),
            exclude=tuple(entry.get("exclude", [])),
            whole_run=evidence == "run",
            bonus=bonus,
            **self.detector(entry, kp, None),
        )

    def deductions(self, entry: Any, kp: KeyPath) -> Deductions | None:
        if entry is None:
            return None
        entry = self.table(entry, kp, {"text": "str", "step": "number", "max": "number"}, {})
        if entry["step"] <= 0:
            raise self.error([*kp, "step"], "must be more than 0")
        if entry["max"] < entry["step"]:
            raise self.error([*kp, "max"], "must be at least one step")
        return Deductions(text=entry["text"], step=float(entry["step"]), maximum=float(entry["max"]))

    def written(self, raw: list[Any], kp: KeyPath, item_ids: set[str]) -> tuple[Written, ...]:
        seen: dict[str, KeyPath] = {}
        out = []
        for i, entry in enumerate(raw):
            ekp: KeyPath = [*kp, i]
            entry = self.table(entry, ekp, {"id": "str", "text": "str", "items": "list:str"}, {})
            self.unique(seen, self.ident(entry["id"], [*ekp, "id"]), [*ekp, "id"], "written judgment")
            for j, ref in enumerate(entry["items"]):
                if ref not in item_ids:
                    raise self.error([*ekp, "items", j], f"no item of this rubric has the id '{ref}'")
            out.append(Written(entry["id"], self.text_value(entry["text"], [*ekp, "text"]), tuple(entry["items"])))
        return tuple(out)

    def counters(self, raw: list[Any], steps: list[Step], scored: dict[str, KeyPath]) -> list[Counter]:
        out = []
        for i, entry in enumerate(raw):
            kp: KeyPath = ["counters", i]
            entry = self.table(
                entry,
                kp,
                {"id": "str", "title": "str", "kind": "str"},
                {
                    "text": "str",
                    "values": "list:str",
                    "steps": "list:str",
                    "disqualifying": "bool",
                    "disqualify_on": "str",
                    "detector": "str",
                    "detector_params": "table",
                },
            )
            self.unique(scored, self.ident(entry["id"], [*kp, "id"]), [*kp, "id"], "item")
            kind = entry["kind"]
            if kind not in COUNTER_KINDS:
                raise self.error([*kp, "kind"], f"unknown counter kind '{kind}' (one of: {', '.join(COUNTER_KINDS)})")
            values = tuple(entry.get("values", ("yes", "no") if kind == "yesno" else ()))
            if kind in ("count", "chain") and values:
                raise self.error([*kp, "values"], f"a {kind} counter takes no values")
            if kind == "verdict" and len(values) < 2:
                raise self.error([*kp, "values"], "a verdict counter needs at least two values")
            if kind == "yesno" and len(values) != 2:
                raise self.error([*kp, "values"], "a yes/no counter has exactly two values")
            if len(set(values)) != len(values):
                raise self.error([*kp, "values"], "a value is listed twice")
            if entry.get("steps") and kind != "verdict":
                raise self.error([*kp, "steps"], "only a verdict counter is judged per step")
            counter_steps = self.step_refs(entry.get("steps", []), [*kp, "steps"], steps)
            if kind == "verdict" and not counter_steps:
                raise self.error(kp, "a verdict counter needs the 'steps' it judges")
            disqualify_on = entry.get("disqualify_on")
            if disqualify_on is not None:
                if kind not in ("verdict", "yesno"):
                    raise self.error([*kp, "disqualify_on"], f"a {kind} counter has no value to disqualify on")
                if disqualify_on not in values:
                    raise self.error(
                        [*kp, "disqualify_on"], f"'{disqualify_on}' is not one of the values ({', '.join(values)})"
                    )
            if entry.get("disqualifying") and kind in ("verdict", "yesno") and disqualify_on is None:
                raise self.error(kp, "a disqualifying counter needs 'disqualify_on': the value that disqualifies")
            out.append(
                Counter(
                    id=entry["id"],
                    title=self.text_value(entry["title"], [*kp, "title"]),
                    kind=kind,
                    text=entry.get("text", ""),
                    values=values,
                    steps=counter_steps,
                    disqualifying=entry.get("disqualifying", False),
                    disqualify_on=disqualify_on,
                    **self.detector(entry, kp, kind),
                )
            )
        return out

    def probes(self, raw: list[Any], steps: list[Step], scored: dict[str, KeyPath]) -> list[Probe]:
        out = []
        for i, entry in enumerate(raw):
            kp: KeyPath = ["probes", i]
            entry = self.table(
                entry,
                kp,
                {"id": "str", "kind": "str", "title": "str", "text": "str"},
                {"planted": "list:str", "asked": "list:str", "marks": "list:str", "expected": "str"},
            )
            self.unique(scored, self.ident(entry["id"], [*kp, "id"]), [*kp, "id"], "item")
            kind = entry["kind"]
            if kind not in PROBE_KINDS:
                raise self.error([*kp, "kind"], f"unknown probe kind '{kind}' (one of: {', '.join(PROBE_KINDS)})")
            marks = tuple(entry.get("marks", DEFAULT_MARKS[kind]))
            if len(marks) < 2 or len(set(marks)) != len(marks):
                raise self.error([*kp, "marks"], "a probe needs two or more different marks")
            expected = entry.get("expected")
            if kind == "expected" and expected is None:
                raise self.error(kp, "a probe of kind 'expected' needs the 'expected' outcome")
            if kind == "expected" and expected not in marks:
                raise self.error([*kp, "expected"], f"'{expected}' is not one of the marks ({', '.join(marks)})")
            if kind != "expected" and expected is not None:
                raise self.error([*kp, "expected"], "only a probe of kind 'expected' has an expected outcome")
            planted = self.step_refs(entry.get("planted", []), [*kp, "planted"], steps)
            asked = self.step_refs(entry.get("asked", []), [*kp, "asked"], steps)
            if not planted and not asked:
                raise self.error(kp, "a probe needs the step that plants it or the step that asks it")
            out.append(
                Probe(
                    id=entry["id"],
                    kind=kind,
                    title=self.text_value(entry["title"], [*kp, "title"]),
                    text=self.text_value(entry["text"], [*kp, "text"]),
                    planted=planted,
                    asked=asked,
                    marks=marks,
                    expected=expected,
                )
            )
        return out
