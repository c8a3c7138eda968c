"""Reading scenario files: TOML syntax first, then every rule of the format.

Every problem becomes a ScenarioError naming the file, the line and column
where it can be found, and the key (`rubrics[T].items[T3].steps[0]`).
"""

from __future__ import annotations

import hashlib
import math
import re
import tomllib
from pathlib import Path
from typing import Any

from sieve.files import read_text
from sieve.scenarios.detectors import BY_NAME as DETECTORS
from sieve.scenarios.detectors import LANGUAGES
from sieve.scenarios.errors import KeyPath, ScenarioError, kind_of, locate, render_key
from sieve.scenarios.model import (
    COUNTER_KINDS,
    EVIDENCE_FROM,
    PROBE_KINDS,
    STEP_KINDS,
    Chapter,
    Counter,
    Deductions,
    Item,
    Player,
    Probe,
    Rubric,
    Scale,
    Scenario,
    Step,
    Written,
    format_value,
)
from sieve.scenarios.settings import BY_NAME as SETTINGS

MAX_SCENARIO_BYTES = 16 * 1024 * 1024
INT64 = 2**63 - 1  # the largest integer SQLite (and so the record) holds
# Scores, maxima and deductions: a scale of a million points is already absurd;
# past this, sums stop being exact and a typo (1e300) would pass for a value.
NUMBER_LIMIT = 1_000_000
# Messages one run sends: repeats of filler steps included (each is a paid request).
MAX_SENDS = 10_000
MAX_NESTING = 64  # where a RecursionError is blamed: nesting far beyond any real scenario
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_SYNTAX_POSITION = re.compile(r"\s*\(at line (\d+), column (\d+)\)\s*$")

# The marks of a probe when the file names none, by kind.
DEFAULT_MARKS = {
    "memory": ("correct", "omitted", "contradicted"),
    "control": ("mundane", "inflated"),
    "expected": ("as expected", "not as expected"),
}


def parse_toml(path: str, text: str) -> dict[str, Any]:
    """tomllib with its error moved into `path:line:col: message` form."""
    try:
        return tomllib.loads(text)
    except RecursionError:  # tomllib recurses once per level of nesting
        line, col = _too_deep(text) or (1, 1)
        raise ScenarioError(path, "arrays or tables nested too deeply to read", line=line, col=col) from None
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        found = _SYNTAX_POSITION.search(message)
        if found:
            raise ScenarioError(
                path,
                message[: found.start()],
                line=int(found.group(1)),
                col=int(found.group(2)),
            ) from None
        # "(at end of document)": point past the last line.
        message = message.replace(" (at end of document)", "")
        raise ScenarioError(path, f"{message} at end of file", line=text.count("\n") + 1, col=1) from None


def _too_deep(text: str) -> tuple[int, int] | None:
    """Where arrays and inline tables first nest past MAX_NESTING (strings and comments skipped), if they do."""
    depth, i, line, line_start = 0, 0, 1, 0
    while i < len(text):
        char = text[i]
        if char == "\n":
            line, line_start = line + 1, i + 1
        elif char == "#":
            i = text.find("\n", i)
            if i < 0:
                return None
            continue
        elif text.startswith(('"""', "'''"), i):
            end = text.find(text[i : i + 3], i + 3)
            if end < 0:
                return None  # an unclosed string: tomllib names it
            line += text.count("\n", i, end)
            line_start = text.rfind("\n", 0, end) + 1 if "\n" in text[i:end] else line_start
            i = end + 3
            continue
        elif char in "\"'":
            i += 1
            while i < len(text) and text[i] not in (char, "\n"):
                i += 2 if char == '"' and text[i] == "\\" else 1
            if i < len(text) and text[i] == "\n":
                continue  # an unclosed string ends with its line
        elif char in "[{":
            depth += 1
            if depth > MAX_NESTING:
                return line, i - line_start + 1
        elif char in "]}":
            depth = max(0, depth - 1)
        i += 1
    return None


def load_text(text: str, path: str) -> Scenario:
    """Build and validate a scenario from TOML text; `path` is only for messages."""
    doc = parse_toml(path, text)
    return _Builder(path, text, doc).build()


def load_file(path: str | Path) -> Scenario:
    text = read_text(path, MAX_SCENARIO_BYTES, "scenario", ScenarioError)
    return load_text(text, str(path))


class _Builder:
    """Walks the parsed document, checking each table against the format."""

    def __init__(self, path: str, text: str, doc: dict[str, Any]):
        self.path = path
        self.text = text
        self.doc = doc

    # -- errors and typed access ---------------------------------------------

    def error(self, keypath: KeyPath, message: str) -> ScenarioError:
        # A key the file does not place (the top-level table, that has no header) is where the file begins.
        line, col = locate(self.text, keypath) or (1, 1)
        return ScenarioError(self.path, message, line=line, col=col, key=render_key(self.doc, keypath) or None)

    def table(self, value: Any, keypath: KeyPath, required: dict[str, str], optional: dict[str, str]) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.error(keypath, f"expected a table, found {kind_of(value)}")
        for key in value:
            if key not in required and key not in optional:
                known = ", ".join(sorted({*required, *optional}))
                raise self.error([*keypath, key], f"unknown key '{key}' (known keys: {known})")
        for key in required:
            if key not in value:
                # A nested table is named before the message (its key); the top level has none to name.
                where = "" if keypath else " (at the top level)"
                raise self.error(keypath, f"missing required key '{key}'{where}")
        for key, expected in {**required, **optional}.items():
            if key in value:
                self.check_type(value[key], [*keypath, key], expected)
        return value

    def check_type(self, value: Any, keypath: KeyPath, expected: str) -> None:
        checks = {
            "str": lambda v: isinstance(v, str),
            "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
            "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
            "bool": lambda v: isinstance(v, bool),
            "table": lambda v: isinstance(v, dict),
            "array": lambda v: isinstance(v, list),
        }
        if expected.startswith("list:"):
            element = expected[5:]
            if not isinstance(value, list):
                raise self.error(keypath, f"expected a list of {_plural(element)}, found {kind_of(value)}")
            for i, v in enumerate(value):
                if not checks[element](v):
                    raise self.error([*keypath, i], f"expected {_article(element)}, found {kind_of(v)}")
                self.check_range(v, [*keypath, i], element)
        elif not checks[expected](value):
            raise self.error(keypath, f"expected {_article(expected)}, found {kind_of(value)}")
        else:
            self.check_range(value, keypath, expected)

    def check_range(self, value: Any, keypath: KeyPath, kind: str) -> None:
        """Integers fit the record's 64 bits; numbers are finite and of a sane size."""
        if kind == "int" and not -INT64 - 1 <= value <= INT64:
            raise self.error(keypath, "is too large (integers are at most 64 bits)")
        if kind == "number":
            if isinstance(value, float) and not math.isfinite(value):
                raise self.error(keypath, "must be a finite number")
            if abs(value) > NUMBER_LIMIT:
                raise self.error(keypath, f"must be between -{NUMBER_LIMIT:,} and {NUMBER_LIMIT:,}")

    def text_value(self, value: str, keypath: KeyPath) -> str:
        if not value.strip():
            raise self.error(keypath, "must not be empty")
        return value

    def ident(self, value: str, keypath: KeyPath) -> str:
        if not _ID.match(value):
            raise self.error(keypath, f"'{value}' is not a valid id (letters, digits, '_', '-', '.')")
        return value

    def unique(self, seen: dict[str, KeyPath], ident: str, keypath: KeyPath, what: str) -> None:
        if ident in seen:
            first = render_key(self.doc, seen[ident])
            where = locate(self.text, seen[ident])
            if where:
                first += f", line {where[0]}"
            raise self.error(keypath, f"duplicate {what} id '{ident}' (first used at {first})")
        seen[ident] = keypath

    # -- the document ---------------------------------------------------------

    def build(self) -> Scenario:
        doc = self.table(
            self.doc,
            [],
            {"scenario": "table", "steps": "array"},
            {
                "settings": "table",
                "chapters": "array",
                "scales": "table",
                "rubrics": "array",
                "counters": "array",
                "probes": "array",
                "players": "array",
            },
        )
        head = self.table(
            doc["scenario"],
            ["scenario"],
            {"name": "str", "title": "str", "version": "int"},
            {
                "description": "str",
                "system": "str",
                "player_character": "str",
                "player_aliases": "list:str",
                "language": "str",
                "counters_title": "str",
                "counters_name": "str",
            },
        )
        name = self.ident(head["name"], ["scenario", "name"])
        if head["version"] < 1:
            raise self.error(["scenario", "version"], "must be 1 or more")
        settings = self.settings(doc.get("settings", {}))
        chapters = self.chapters(doc.get("chapters", []))
        steps = self.steps(doc["steps"], {c.id for c in chapters})
        scales = self.scales(doc.get("scales", {}))
        scored_ids: dict[str, KeyPath] = {}
        rubrics = self.rubrics(doc.get("rubrics", []), scales, steps, scored_ids)
        counters = self.counters(doc.get("counters", []), steps, scored_ids)
        probes = self.probes(doc.get("probes", []), steps, scored_ids)
        players = self.players(doc.get("players", []))
        player, aliases, language = self.player(head)
        return Scenario(
            name=name,
            title=self.text_value(head["title"], ["scenario", "title"]),
            version=head["version"],
            description=head.get("description", ""),
            system=head.get("system") or None,
            steps=tuple(steps),
            chapters=tuple(chapters),
            scales=scales,
            rubrics=tuple(rubrics),
            counters=tuple(counters),
            probes=tuple(probes),
            players=players,
            settings=dict(settings),
            source=self.text,
            path=self.path,
            sha256=hashlib.sha256(self.text.encode("utf-8")).hexdigest(),
            player_character=player,
            player_aliases=aliases,
            language=language,
            **self.counters_names(head, counters),
        )

    def counters_names(self, head: dict[str, Any], counters: list[Counter]) -> dict[str, str]:
        """What the scenario calls its counters (`counters_title`, `counters_name`): text, and only with counters."""
        out: dict[str, str] = {}
        for key in ("counters_title", "counters_name"):
            if key in head:
                if not counters:
                    raise self.error(["scenario", key], "names the counters, but the scenario has none")
                out[key] = self.text_value(head[key], ["scenario", key])
        return out

    def player(self, head: dict[str, Any]) -> tuple[str | None, tuple[str, ...], str | None]:
        """Who the player plays (for the plays-player detector) and the scenario's language."""
        kp: KeyPath = ["scenario"]
        name = head.get("player_character")
        if name is not None:
            self.text_value(name, [*kp, "player_character"])
        aliases = head.get("player_aliases", [])
        if aliases and name is None:
            raise self.error([*kp, "player_aliases"], "aliases need the 'player_character' they are names for")
        seen = {name.casefold()} if name else set()
        for i, alias in enumerate(aliases):
            self.text_value(alias, [*kp, "player_aliases", i])
            if alias.casefold() in seen:
                raise self.error([*kp, "player_aliases", i], f"'{alias}' is listed twice")
            seen.add(alias.casefold())
        language = head.get("language")
        if language is not None and language not in LANGUAGES:
            raise self.error([*kp, "language"], f"unknown language '{language}' (one of: {', '.join(LANGUAGES)})")
        return name, tuple(aliases), language

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

    def settings(self, raw: Any) -> dict[str, Any]:
        if not isinstance(raw, dict):
            raise self.error(["settings"], f"expected a table, found {kind_of(raw)}")
        for key, value in raw.items():
            setting = SETTINGS.get(key)
            if setting is None:
                raise self.error(["settings", key], f"unknown setting '{key}' (known: {', '.join(SETTINGS)})")
            problem = setting.problem(value)
            if problem:
                raise self.error(["settings", key], problem)
        return dict(raw)

    def chapters(self, raw: list[Any]) -> list[Chapter]:
        seen: dict[str, KeyPath] = {}
        out = []
        for i, entry in enumerate(raw):
            kp: KeyPath = ["chapters", i]
            entry = self.table(entry, kp, {"id": "str", "title": "str"}, {})
            self.unique(seen, self.ident(entry["id"], [*kp, "id"]), [*kp, "id"], "chapter")
            out.append(Chapter(entry["id"], self.text_value(entry["title"], [*kp, "title"])))
        return out

    def steps(self, raw: list[Any], chapter_ids: set[str]) -> list[Step]:
        if not raw:
            raise self.error(["steps"], "a scenario needs at least one step")
        seen: dict[str, KeyPath] = {}
        out: list[Step] = []
        for i, entry in enumerate(raw):
            kp: KeyPath = ["steps", i]
            entry = self.table(
                entry,
                kp,
                {"id": "str", "text": "str"},
                {"kind": "str", "note": "str", "chapter": "str", "repeat": "int"},
            )
            self.unique(seen, self.ident(entry["id"], [*kp, "id"]), [*kp, "id"], "step")
            kind = entry.get("kind", "player")
            if kind not in STEP_KINDS:
                raise self.error([*kp, "kind"], f"unknown step kind '{kind}' (one of: {', '.join(STEP_KINDS)})")
            if kind == "setup" and i != 0:
                raise self.error([*kp, "kind"], "only the first step can be the setup message")
            repeat = entry.get("repeat", 1)
            if repeat < 1:
                raise self.error([*kp, "repeat"], "must be 1 or more")
            sends = sum(s.repeat for s in out) + repeat
            if sends > MAX_SENDS:
                raise self.error(
                    [*kp, "repeat"], f"the script would send {sends:,} messages in one run; at most {MAX_SENDS:,}"
                )
            if repeat > 1 and kind != "filler":
                raise self.error([*kp, "repeat"], "only a filler step can be repeated")
            chapter = entry.get("chapter")
            if chapter is not None and chapter not in chapter_ids:
                raise self.error([*kp, "chapter"], f"no chapter has the id '{chapter}'")
            if chapter_ids and chapter is None and kind != "setup":
                raise self.error(kp, "the scenario has chapters, so this step needs a 'chapter'")
            if chapter is not None and out and out[-1].chapter != chapter and any(s.chapter == chapter for s in out):
                raise self.error([*kp, "chapter"], f"the steps of chapter '{chapter}' must stand together")
            out.append(
                Step(
                    id=entry["id"],
                    kind=kind,
                    text=self.text_value(entry["text"], [*kp, "text"]),
                    note=entry.get("note", ""),
                    chapter=chapter,
                    repeat=repeat,
                )
            )
        return out

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

    def players(self, raw: list[Any]) -> tuple[Player, ...]:
        """Briefs for a model in the player's seat (`sieve run --player`, Play's m)."""
        seen: dict[str, KeyPath] = {}
        out = []
        for i, entry in enumerate(raw):
            kp: KeyPath = ["players", i]
            entry = self.table(entry, kp, {"id": "str", "title": "str", "brief": "str"}, {})
            self.unique(seen, self.ident(entry["id"], [*kp, "id"]), [*kp, "id"], "player")
            out.append(
                Player(
                    id=entry["id"],
                    title=self.text_value(entry["title"], [*kp, "title"]),
                    brief=self.text_value(entry["brief"], [*kp, "brief"]),
                )
            )
        return tuple(out)

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


def _article(kind: str) -> str:
    return {
        "str": "a string",
        "int": "an integer",
        "number": "a number",
        "bool": "a boolean",
        "table": "a table",
        "array": "an array",
    }[kind]


def _plural(kind: str) -> str:
    return {"str": "strings", "int": "integers", "number": "numbers", "bool": "booleans"}[kind]
