"""The `sieve` command line (click). Never imports Textual at module level."""

from __future__ import annotations

import getpass
import json
import sys
import textwrap
from typing import Any

import click

import scenarios
import store
from scenarios import Item, Scenario, ScenarioError, format_value, scenario_dict

from .config import ConfigError
from .run_command import run_command
from .safe_text import visible
from .table import render

EXIT_BAD_INPUT = 2

db_option = click.option(
    "--db",
    "db_path",
    envvar=store.db.ENV_VAR,
    type=click.Path(dir_okay=False),
    help="The SQLite file (default: $SIEVE_DB, else the user data directory).",
)
json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")


def fail(message: str, status: int = EXIT_BAD_INPUT) -> None:
    click.echo(visible(message), err=True)
    sys.exit(status)


def load_scenario(name_or_path: str) -> Scenario:
    try:
        return scenarios.load(name_or_path)
    except ScenarioError as exc:
        fail(str(exc))
        raise  # unreachable: fail() exits


def open_db(db_path: str | None):
    try:
        return store.open_db(db_path)
    except store.DatabaseError as exc:
        fail(str(exc), status=1)


def emit_json(data: Any) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False))


reviewer_option = click.option("--reviewer", help="Your name on the annotations (default: the config's reviewer, else your login).")


@click.group(invoke_without_command=True)
@click.version_option(package_name="sieve")
@reviewer_option
@db_option
@click.pass_context
def main(ctx: click.Context, reviewer: str | None, db_path: str | None) -> None:
    """sieve: play roleplay benchmarks against language models and score them.

    Without a command, opens the Home screen: the runs in the database.
    """
    if ctx.invoked_subcommand is None:
        run_tui(db_path, reviewer, None)


def run_tui(db_path: str | None, reviewer: str | None, first=None, pool=None, blind: bool = False) -> None:
    """Open the TUI on the database, with `first(app, db, pool)` (a screen factory) over Home."""
    # Textual is imported here, not at the top: the CLI's other commands stay light
    # and the non-visual core never loads it.
    from .app import SieveApp

    db = open_db(db_path)
    pool = pool or endpoint_pool()
    name = reviewer or pool.config.reviewer or getpass.getuser()
    try:
        app = SieveApp(db, pool, name, first=(lambda: first(app, db, pool)) if first else None, blind=blind)
        app.run()
    finally:
        pool.stop()


def endpoint_pool():
    from .endpoints import Endpoints

    try:
        return Endpoints(announce=lambda text: click.echo(text, err=True))
    except ConfigError as exc:
        fail(str(exc))


@main.command("play")
@click.argument("scenario")
@click.option("-m", "--model", help="The model (default: the embedded SmolLM2-135M).")
@click.option("--endpoint", help="A URL or an endpoint name from the config (default: the embedded local model).")
@click.option("--temperature", type=float)
@click.option("--max-tokens", type=click.IntRange(min=1), help="The output ceiling per reply.")
@click.option("--reasoning-effort", help="OpenRouter's reasoning effort (low, medium, high).")
@click.option("--timeout", type=click.FloatRange(min=1), help="Seconds per request (default 240).")
@click.option("--seed", type=int)
@reviewer_option
@db_option
def play_command(scenario, model, endpoint, temperature, max_tokens, reasoning_effort, timeout, seed, reviewer, db_path) -> None:
    """Open the Play screen on a new run of SCENARIO."""
    from .endpoints import is_local, settings_for
    from .local_model import LocalModelError

    loaded = load_scenario(scenario)
    if model is None and not is_local(endpoint):
        fail("name the model to play against with -m")
    cli = {"temperature": temperature, "max_tokens": max_tokens, "reasoning_effort": reasoning_effort, "timeout": timeout, "seed": seed}
    settings = settings_for(loaded, model, is_local(endpoint), cli)
    open_db(db_path)  # a bad path fails here, before a model server starts
    pool = endpoint_pool()
    try:
        gateway = pool.gateway(endpoint)  # starts the embedded model when there is no endpoint
    except (ConfigError, LocalModelError) as exc:
        pool.stop()
        fail(str(exc))

    def first(app, db, pool):
        from .screens.play import PlayScreen
        from .session import Session

        return PlayScreen(Session.start(db, loaded, gateway, settings, retry=app.retry))

    run_tui(db_path, reviewer, first, pool)


@main.command("review")
@click.argument("run_id", required=False)
@click.option("--blind", is_flag=True, help="Runs under neutral codes: no model, endpoint, provider or cost shown.")
@reviewer_option
@db_option
def review_command(run_id: str | None, blind: bool, reviewer: str | None, db_path: str | None) -> None:
    """Open the Review screen on RUN_ID (with --blind and no RUN_ID: the runs, blind)."""
    db = open_db(db_path)
    if run_id is None and not blind:
        fail("name a RUN_ID (or use --blind to pick runs under neutral codes)")
    if run_id is not None and not db.execute("SELECT 1 FROM runs WHERE id = ?", [run_id]).fetchone():
        fail(f"no run with the id {run_id} in {store.resolve_path(db_path)}")

    def first(app, db, pool):
        from .screens.review import ReviewScreen

        run = store.turns.get_run(db, run_id)
        scenario = scenarios.load_text(store.turns.scenario_text(db, run["scenario_sha256"]), f"<snapshot>/{run['scenario']}.toml")
        return ReviewScreen(db, scenario, run_id, app.reviewer, blind=blind)

    run_tui(db_path, reviewer, first if run_id else None, blind=blind)


@main.command("pair")
@click.argument("runs", nargs=-1)
@click.option("--a", "set_a", multiple=True, help="A run of the first set (repeatable): every run of it meets every run of --b.")
@click.option("--b", "set_b", multiple=True, help="A run of the second set (repeatable).")
@click.option("--scenario", "scenario_name", help="With two --model: their runs of this scenario, every one against every one.")
@click.option("--model", "models", multiple=True, help="A model whose runs make one set (give two).")
@click.option("--queue", "queue_id", help="Open (or, with --summary, report) an existing queue.")
@click.option("--seed", type=int, help="Seed for drawing the sides.")
@click.option("--summary", is_flag=True, help="Print the queue's head-to-head results instead of opening it.")
@reviewer_option
@json_option
@db_option
def pair_command(runs, set_a, set_b, scenario_name, models, queue_id, seed, summary, reviewer, as_json, db_path) -> None:
    """Blind A/B pairs: RUN RUN, or every pair of two sets (--a/--b, or two --model of a --scenario)."""
    from store import pairs as pairing

    db = open_db(db_path)
    if queue_id is None:
        if len(runs) == 2:
            chosen = [tuple(runs)]
        elif set_a and set_b:
            chosen = pairing.every_pair(set_a, set_b)
        elif scenario_name and len(models) == 2:
            listed = store.list_runs(db, scenario_name)
            sets = [[r["id"] for r in listed if r["model"] == m and r["status"] == "complete"] for m in models]
            if not all(sets):
                fail(f"each --model needs complete runs of {scenario_name}")
            chosen = pairing.every_pair(*sets)
        else:
            fail("give two runs, or --a and --b sets, or --scenario with two --model")
        known = {r["id"]: r for r in store.list_runs(db)}
        for a, b in chosen:
            for run_id in (a, b):
                if run_id not in known:
                    fail(f"no run with the id {run_id} in {store.resolve_path(db_path)}")
            if known[a]["scenario"] != known[b]["scenario"]:
                fail(f"{a} and {b} are runs of different scenarios")
        queue_id = pairing.create_queue(db, chosen, seed)
        click.echo(f"queue {queue_id}: {len(chosen)} pairs", err=True)
    if not pairing.queue_pairs(db, queue_id):
        fail(f"no pair queue {queue_id}")
    if summary:
        result = pairing.head_to_head(db, queue_id)
        if as_json:
            emit_json({"queue": queue_id, "criteria": result})
        else:
            click.echo(render(
                ["criterion", "A's share", "status", "unresolved pairs", "reviewers"],
                [(c, f"{r['a_share']:.2f}", r["status"], " ".join(str(p + 1) for p in r["unresolved_pairs"]), len(r["reviewers"])) for c, r in sorted(result.items())],
            ))  # fmt: skip
        return

    def first(app, db, pool):
        from .screens.pairs import PairScreen

        return PairScreen(db, queue_id, app.reviewer)

    run_tui(db_path, reviewer, first, blind=True)


# -- scenarios ----------------------------------------------------------------


@main.group("scenarios")
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
    """One scenario whole: steps with their notes, rubrics, counters, probes."""
    scenario = load_scenario(name)
    if as_json:
        emit_json(scenario_dict(scenario))
        return
    click.echo(visible(describe(scenario)))


@scenarios_group.command("validate")
@click.argument("paths", nargs=-1, required=True)
def scenarios_validate(paths: tuple[str, ...]) -> None:
    """Check scenario files; exit status 2 if any is bad."""
    bad = 0
    for path in paths:
        try:
            s = scenarios.load(path)
        except ScenarioError as exc:
            bad += 1
            click.echo(visible(str(exc)), err=True)
            continue
        items = sum(len(r.all_items()) for r in s.rubrics)
        click.echo(visible(f"{path}: ok ({len(s.steps)} steps, {items} items, {len(s.counters)} counters, {len(s.probes)} probes)"))
    if bad:
        sys.exit(EXIT_BAD_INPUT)


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
    return "\n".join(lines)


def describe(s: Scenario) -> str:
    """A scenario as a person reads it in a terminal."""
    out = [f"{s.name}: {s.title} (version {s.version}, {len(s.script())} messages)"]
    if s.description:
        out += [_wrap(s.description, 0)]
    if s.settings:
        out += ["", "settings: " + ", ".join(f"{k} {v}" for k, v in s.settings.items())]
    if s.system:
        out += ["", "system prompt:", _wrap(s.system, 4)]
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
            out += [_wrap(f"deductions (steps of {format_value(d.step)}, at most {format_value(d.maximum)}): {d.text}", 2)]
        for written in rubric.written:
            out += [_wrap(f"written judgment '{written.id}' on {', '.join(written.items)}: {written.text}", 2)]
    if s.counters:
        out += ["", "COUNTERS"]
        for c in s.counters:
            kind = c.kind + (f" ({' / '.join(c.values)})" if c.values else "")
            flag = f", disqualifying on '{c.disqualify_on}'" if c.disqualify_on else (", disqualifying" if c.disqualifying else "")
            out += [f"  {c.id:<5} {kind}{flag}: {c.title}"]
            if c.text:
                out += [_wrap(c.text, 8)]
    if s.probes:
        out += ["", "PROBES"]
        for p in s.probes:
            where = ", ".join(filter(None, [f"planted {' '.join(p.planted)}" if p.planted else "", f"asked {' '.join(p.asked)}" if p.asked else ""]))
            out += [f"  {p.id:<9} {p.kind} ({where}), marks {' / '.join(p.marks)}: {p.title}"]
            if p.expected:
                out += [f"            expected: {p.expected}"]
    return "\n".join(out)


# -- runs ---------------------------------------------------------------------


@main.command("runs")
@click.option("--scenario", help="Only runs of this scenario.")
@json_option
@db_option
def runs_command(scenario: str | None, as_json: bool, db_path: str | None) -> None:
    """The runs in the database."""
    db = open_db(db_path)
    rows = store.list_runs(db, scenario)
    if as_json:
        emit_json(rows)
        return
    if not rows:
        click.echo(f"No runs yet in {store.resolve_path(db_path)}.")
        return
    click.echo(
        render(
            ["id", "scenario", "model", "status", "started", "replies", "cost"],
            [
                (r["id"], r["scenario"], r["model"], r["status"], r["started"][:19].replace("T", " "), r["replies"],
                 "" if r["cost"] is None else f"${r['cost']:.4f}")
                for r in rows
            ],
        )
    )


# -- export -------------------------------------------------------------------


@main.command("export")
@click.argument("run_ids", nargs=-1)
@click.option("--all", "everything", is_flag=True, help="Every run in the database.")
@click.option("--format", "fmt", type=click.Choice(["json", "md"]), default="json", show_default=True,
              help="json: a bundle with every row and id (sieve import reads it); md: the transcript with the score cards.")  # fmt: skip
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), help="Write to a file instead of stdout.")
@db_option
def export_command(run_ids: tuple[str, ...], everything: bool, fmt: str, output: str | None, db_path: str | None) -> None:
    """Write runs as a JSON bundle, or as a readable Markdown document."""
    from store import bundles, markdown

    db = open_db(db_path)
    ids = [r["id"] for r in store.list_runs(db)] if everything else list(run_ids)
    if not ids:
        fail("name a RUN_ID (or --all)")
    try:
        if fmt == "json":
            text = bundles.dumps(bundles.export_bundle(db, ids))
        else:
            text = "\n\n".join(markdown.run_document(db, run_id) for run_id in ids)
    except KeyError as exc:
        fail(f"no run with the id {exc.args[0]} in {store.resolve_path(db_path)}")
    if output:
        with open(output, "w", encoding="utf-8") as handle:
            handle.write(text)
    else:
        click.echo(text, nl=False)


@main.command("import")
@click.argument("path", type=click.Path(dir_okay=False))
@click.option("--scenario", help="For a SillyTavern chat: the scenario whose rubrics score it.")
@click.option("-m", "--model", help="For a SillyTavern chat: the model that played (default: from the chat, if it says).")
@json_option
@db_option
def import_command(path: str, scenario: str | None, model: str | None, as_json: bool, db_path: str | None) -> None:
    """Import a bundle (from sieve export) or a SillyTavern chat (.jsonl) as a run."""
    from store import bundles, sillytavern

    db = open_db(db_path)
    try:
        if path.endswith(".jsonl"):
            if not scenario:
                fail("a chat needs --scenario NAME: the scenario whose rubrics will score it")
            run_id = sillytavern.import_chat(db, path, load_scenario(scenario), model)
            result = {"run": run_id}
            message = f"{path}: imported as run {run_id}"
        else:
            added = bundles.import_bundle(db, path, bundles.read_bundle(path))
            result = {"added": added}
            message = f"{path}: added " + ", ".join(f"{n} {t.replace('_', ' ')}" for t, n in added.items())
    except ScenarioError as exc:
        fail(str(exc))
    if as_json:
        emit_json(result)
    else:
        click.echo(visible(message))


@main.command("results")
@click.option("--scenario", "scenario_name", required=True, help="The scenario whose runs to list.")
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json", "md"]), default="table", show_default=True)
@click.option("--reviewer", help="Only this reviewer's scores (default: every reviewer's mean, each reviewer's own first).")
@click.option("--agreement", is_flag=True, help="Instead: how far reviewers agree per item (Cohen's kappa for two, Krippendorff's alpha for more).")
@db_option
def results_command(scenario_name: str, fmt: str, reviewer: str | None, agreement: bool, db_path: str | None) -> None:
    """One row per run: model, provider, date, status, cost, each rubric's total, each L count."""
    from store import results

    db = open_db(db_path)
    if agreement:
        rows = results.agreement(db, scenario_name)
        headers = ["item", "measure", "value", "units", "reviewers"]
    else:
        headers, rows = results.table(db, scenario_name, reviewer)
    click.echo(results.render(headers, rows, fmt), nl=False)


@main.command("verify")
@click.argument("card", type=click.Path(dir_okay=False), required=False)
@click.option("--run", "run_id", required=True, help="The run the card scores.")
@click.option("--import", "do_import", is_flag=True, help="Store the card's scores as annotations (with --reviewer).")
@reviewer_option
@json_option
@db_option
def verify_command(card: str, run_id: str, do_import: bool, reviewer: str | None, as_json: bool, db_path: str | None) -> None:
    """Check every quote of a score card (JSON, or a Markdown table | item | score | quote |) against a run.

    Without CARD, verify the quotes of the run's stored annotations again.
    Exit status 1 when any quote is absent, 2 when the card is malformed.
    """
    from store import annotations, cards

    db = open_db(db_path)
    if not db.execute("SELECT 1 FROM runs WHERE id = ?", [run_id]).fetchone():
        fail(f"no run with the id {run_id} in {store.resolve_path(db_path)}")
    if card is None:
        counts = annotations.reverify(db, run_id)
        if as_json:
            emit_json({"run": run_id, "summary": counts})
        else:
            click.echo(f"{run_id}: " + (", ".join(f"{n} {v}" for v, n in sorted(counts.items())) or "no quotes to verify"))
        sys.exit(1 if counts.get("absent") else 0)
    if do_import and not reviewer:
        fail("--import needs --reviewer NAME: whose scores these are")
    try:
        items = cards.read_card(card)
        scenario, turns = cards.run_scenario(db, run_id)
        checked = cards.check_card(card, items, scenario, turns)
    except ScenarioError as exc:
        fail(str(exc))
    rows = [
        {
            "item": c.item.id,
            "score": c.item.score,
            "score_high": c.item.score_high,
            "quote": c.item.quote,
            "verdict": c.found.verdict if c.found else "no quote",
            "turn": c.found.turn_idx if c.found else None,
            "similarity": c.found.similarity if c.found else None,
        }
        for c in checked
    ]
    summary = {v: sum(1 for r in rows if r["verdict"] == v) for v in ("exact", "fuzzy", "absent", "player", "no quote")}
    if do_import:
        cards.import_card(db, run_id, scenario, checked, reviewer)
    if as_json:
        emit_json({"run": run_id, "items": rows, "summary": summary, "imported": len(rows) if do_import else 0})
    else:
        click.echo(
            render(
                ["item", "score", "verdict", "turn", "similarity", "quote"],
                [
                    (
                        r["item"],
                        "" if r["score"] is None else format_value(r["score"]) + (f"–{format_value(r['score_high'])}" if r["score_high"] is not None else ""),
                        r["verdict"],
                        "" if r["turn"] is None else r["turn"],
                        "" if r["similarity"] is None else f"{r['similarity'] * 100:.0f}%",
                        (r["quote"] or "")[:60],
                    )
                    for r in rows
                ],
            )
        )
        click.echo(", ".join(f"{n} {v}" for v, n in summary.items() if n) + (f"; imported {len(rows)} as {reviewer}" if do_import else ""))
    sys.exit(1 if summary["absent"] else 0)


main.add_command(run_command)


if __name__ == "__main__":
    main()
