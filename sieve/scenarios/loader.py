"""Reading scenario files: TOML syntax first, then every rule of the format.

Every problem becomes a ScenarioError naming the file, the line and column
where it can be found, and the key (`rubrics[T].items[T3].steps[0]`). The checks
every table goes through are in `toml_reader`, the scoring parts (scales, rubrics,
counters, probes) in `rubric_reader`; this module reads the rest and the whole.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from sieve.files import read_text
from sieve.scenarios.detectors import LANGUAGES
from sieve.scenarios.errors import KeyPath, ScenarioError, kind_of
from sieve.scenarios.model import (
    STEP_KINDS,
    Chapter,
    Counter,
    Player,
    Scenario,
    Step,
)
from sieve.scenarios.rubric_reader import RubricReader
from sieve.scenarios.settings import BY_NAME as SETTINGS
from sieve.scenarios.toml_reader import parse_toml

MAX_SCENARIO_BYTES = 16 * 1024 * 1024
# Messages one run sends: repeats of filler steps included (each is a paid request).
MAX_SENDS = 10_000


def load_text(text: str, path: str) -> Scenario:
    """Build and validate a scenario from TOML text; `path` is only for messages."""
    doc = parse_toml(path, text)
    return _Builder(path, text, doc).build()


def load_file(path: str | Path) -> Scenario:
    text = read_text(path, MAX_SCENARIO_BYTES, "scenario", ScenarioError)
    return load_text(text, str(path))


class _Builder(RubricReader):
    """Walks the parsed document, checking each table against the format."""

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
