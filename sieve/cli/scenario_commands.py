"""`sieve scenarios list|show|validate`: what sieve can play and how it is scored."""

from __future__ import annotations

import textwrap

import click

from sieve import scenarios
from sieve.cli.common import emit_json, json_option, load_scenario
from sieve.errors import SieveInputError
from sieve.safe_text import visible
from sieve.scenarios import Item, Scenario, format_value, scenario_dict
from sieve.tables import counted, render


@click.group("scenarios")
def scenarios_group() -> None:
    """The scenarios sieve can play: list, show, validate."""


@scenarios_group.command("list")
@json_option
def scenarios_list(as_json: bool) -> None:
    """The built-in scenarios."""
    loaded = [load_scenario(name) for name in scenarios.builtin_names()]
    if as_json:
        emit_json(
            [
                {
                    "name": s.name,
                    "title": s.title,
                    "version": s.version,
                    "steps": len(s.steps),
                    "messages": len(s.script()),
                    "rubrics": [r.id for r in s.rubrics],
                    "counters": [c.id for c in s.counters],
                    "probes": [p.id for p in s.probes],
                }
                for s in loaded
            ]
        )
        return
    rows = [
        (
            s.name,
            s.title,
            len(s.script()),
            " ".join(r.id for r in s.rubrics) or "-",
            f"{s.counters[0].id}-{s.counters[-1].id}" if s.counters else "-",
            len(s.probes) or "-",
        )
        for s in loaded
    ]
    click.echo(render(["name", "title", "messages", "rubrics", "counters", "probes"], rows))


@scenarios_group.command("show")
@click.argument("name")
@json_option
def scenarios_show(name: str, as_json: bool) -> None:
    """One scenario whole: steps with their notes, rubrics, counters, probes, the player briefs."""
    scenario = load_scenario(name)
    if as_json:
        emit_json(scenario_dict(scenario))
        return
    click.echo(visible(describe(scenario)))


@scenarios_group.command("validate")
@click.argument("paths", nargs=-1, required=True)
@json_option
def scenarios_validate(paths: tuple[str, ...], as_json: bool) -> None:
    """Check scenario files; exit status 2 if any is bad. With --json, one object per file: its path, ok, and
    what it holds or where it is wrong (line, col, key, message)."""
    bad = 0
    found = []
    for path in paths:
        try:
            s = scenarios.load(path)
        except SieveInputError as exc:
            bad += 1
            found.append({"path": path, "ok": False, "line": exc.line, "col": exc.col, "key": exc.key})
            found[-1]["message"] = exc.message
            if not as_json:
                click.echo(visible(str(exc)), err=True)
            continue
        items = sum(len(r.all_items()) for r in s.rubrics)
        sizes = {"steps": len(s.steps), "items": items, "counters": len(s.counters), "probes": len(s.probes)}
        found.append({"path": path, "ok": True, "name": s.name, **sizes})
        if not as_json:
            parts = [counted(len(s.steps), "step"), counted(items, "item")]
            parts += [counted(len(s.counters), "counter"), counted(len(s.probes), "probe")]
            click.echo(visible(f"{path}: ok ({', '.join(parts)})"))
    if as_json:
        emit_json(found)
    if bad:
        raise SystemExit(SieveInputError.exit_status)


def _wrap(text: str, indent: int) -> str:
    pad = " " * indent
    return "\n".join(
        textwrap.fill(line, width=100, initial_indent=pad, subsequent_indent=pad) if line.strip() else ""
        for line in text.splitlines()
    )


def _item_line(item: Item) -> str:
    scale = "/".join(item.scale.label(v) for v in item.scale.values)
    if item.scale.undecided:
        scale += ", undecided pairs"
    where = f"steps {' '.join(item.steps)}" if item.steps else "whole run"
    head = f"  {item.id:<5} [{scale}] ({where})"
    if item.title:
        head += f" {item.title}:"
    lines = [head, _wrap(item.text, 8)]
    for value, text in sorted(item.anchors.items(), reverse=True):
        lines.append(_wrap(f"{format_value(value)} = {text}", 8))
    for rule in item.rules:
        lines.append(_wrap(f"rule: {rule}", 8))
    if item.disqualifying:
        lines.append("        disqualifying")
    if item.exclude:
        lines.append(f"        not scored on: {', '.join(item.exclude)} steps")
    if item.detector:
        lines.append(f"        notes suggested by the {item.detector} detector{_params(item.detector_params)}")
    return "\n".join(lines)


def _params(params: dict) -> str:
    return " (" + ", ".join(f"{k} {v}" for k, v in params.items()) + ")" if params else ""


def describe(s: Scenario) -> str:
    """A scenario as a person reads it in a terminal."""
    out = [f"{s.name}: {s.title} (version {s.version}, {len(s.script())} messages)"]
    if s.description:
        out += [_wrap(s.description, 0)]
    if s.settings:
        out += ["", "settings: " + ", ".join(f"{k} {v}" for k, v in s.settings.items())]
    if s.system:
        out += ["", "system prompt:", _wrap(s.system, 4)]
    if s.player_character:
        aliases = f" (also: {', '.join(s.player_aliases)})" if s.player_aliases else ""
        out += ["", f"the player plays: {s.player_character}{aliases}"]
    chapters = {c.id: c.title for c in s.chapters}
    out += ["", "STEPS"]
    current = None
    for step in s.steps:
        if step.chapter and step.chapter != current:
            current = step.chapter
            out += [f"  -- {step.chapter}: {chapters[step.chapter]}"]
        tag = "" if step.kind == "player" else f" [{step.kind}{f' x{step.repeat}' if step.repeat > 1 else ''}]"
        out += [f"  {step.id}{tag}", _wrap(step.text, 6)]
        if step.note:
            out += [_wrap(f"note: {step.note}", 6)]
    for rubric in s.rubrics:
        maximum = format_value(rubric.item_maximum)
        if rubric.bonuses:
            maximum += f" + {format_value(rubric.bonus_item_maximum)} bonus"
        out += ["", f"RUBRIC {rubric.id}: {rubric.title} (max {maximum})"]
        if rubric.text:
            out += [_wrap(rubric.text, 2)]
        for rule in rubric.rules:
            out += [_wrap(f"rule: {rule}", 2)]
        out += [_item_line(item) for item in rubric.items]
        if rubric.bonuses:
            out += ["  bonuses:"] + [_item_line(item) for item in rubric.bonuses]
        if rubric.deductions:
            d = rubric.deductions
            out += [
                _wrap(f"deductions (steps of {format_value(d.step)}, at most {format_value(d.maximum)}): {d.text}", 2)
            ]
        for written in rubric.written:
            out += [_wrap(f"written judgment '{written.id}' on {', '.join(written.items)}: {written.text}", 2)]
    if s.counters:
        out += ["", "COUNTERS" + ("" if s.counters_title == "Counters" else f" ({s.counters_title})")]
        for c in s.counters:
            kind = c.kind + (f" ({' / '.join(c.values)})" if c.values else "")
            flag = (
                f", disqualifying on '{c.disqualify_on}'"
                if c.disqualify_on
                else (", disqualifying" if c.disqualifying else "")
            )
            out += [f"  {c.id:<5} {kind}{flag}: {c.title}"]
            if c.text:
                out += [_wrap(c.text, 8)]
            if c.detector:
                out += [f"        events suggested by the {c.detector} detector{_params(c.detector_params)}"]
    if s.probes:
        out += ["", "PROBES"]
        for p in s.probes:
            where = ", ".join(
                filter(
                    None,
                    [
                        f"planted {' '.join(p.planted)}" if p.planted else "",
                        f"asked {' '.join(p.asked)}" if p.asked else "",
                    ],
                )
            )
            out += [f"  {p.id:<9} {p.kind} ({where}), marks {' / '.join(p.marks)}: {p.title}"]
            if p.expected:
                out += [f"            expected: {p.expected}"]
    if s.players:
        out += ["", "PLAYER BRIEFS (sieve run --player ID: a model plays the player after the script)"]
        for player in s.players:
            out += [f"  {player.id}: {player.title}", _wrap(player.brief, 6)]
    return "\n".join(out)
