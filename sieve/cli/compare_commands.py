"""`sieve compare`: two sides of one scenario, and how the comparisons of the head to head are printed."""

from __future__ import annotations

import csv
import io
from typing import Any

import click

from sieve.cli.common import db_option, emit_json, fail, json_option, open_db, or_the_groups, viewer
from sieve.safe_text import md_cell, md_inline, one_line
from sieve.tables import counted, render


def voters_options(command):
    """--humans (the default), --judges, or --reviewer R: whose cards count. People and judges are never pooled."""
    command = click.option("--reviewer", "reviewer", callback=or_the_groups, help="Only this reviewer's cards.")(
        command
    )
    command = click.option(
        "--judges", "voters", flag_value="judges", help="The model judges' cards instead of the people's."
    )(command)
    command = click.option(
        "--humans", "voters", flag_value="humans", default=True, help="The people's cards (the default)."
    )(command)
    return command


@click.command("compare")
@click.option("--scenario", "scenario_name", required=True, help="The scenario both sides played.")
@click.option("--a", "side_a", required=True, help="Side a: a model, or runs (comma-separated ids).")
@click.option("--b", "side_b", required=True, help="Side b: a model, or runs (comma-separated ids).")
@voters_options
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "csv", "md"]),
    default="text",
    show_default=True,
    help="text and md hold the sides, whose cards and the notes around the table; csv the table alone (the rest "
    "on stderr); json everything (as --json).",
)
@json_option
@db_option
def compare_command(
    scenario_name: str,
    side_a: str,
    side_b: str,
    voters: str,
    reviewer: str | None,
    fmt: str,
    as_json: bool,
    db_path: str | None,
) -> None:
    """Is the difference real? Side a against side b on each rubric total and item, over their runs.

    Per row: each side's mean (each evaluator's own mean first, then across evaluators), the difference a - b
    with a 95% interval (a bootstrap over runs, its percentiles widened for small samples, never narrower than a
    one-step spread: Hesterberg's expanded percentile), a permutation p-value, and the status: a ahead, b ahead,
    within noise (the interval includes 0), or unresolved (evaluators' differences point opposite ways). Each
    side's run-to-run sd is the noise floor; "runs for 1 point" is how many runs a side needs to detect a
    one-point difference at 80% power (two-sided 5%, from the variance observed). With a pair queue between the
    sides, its head-to-head result stands beside each item (a's share of pairs won, Wilson 95%).
    """
    from sieve.store.scoring import comparison
    from sieve.store.scoring.comparison import COMPARE_HEADERS, compare_cells, head_to_head_text

    db = open_db(db_path, reads_only=True)
    viewer(db).refuse("compare tells its figures by side, and a side is a model or its runs")
    if not db.execute("SELECT 1 FROM runs WHERE scenario = ?", [scenario_name]).fetchone():
        fail(f"no run of the scenario {scenario_name}")
    result = comparison.compare(db, scenario_name, side_a, side_b, reviewer or voters)
    if fmt == "json" or as_json:
        emit_json(result)
        return
    rows = [compare_cells(r) for r in result["rows"]]
    sides = f"a: {side_a} ({len(result['a_runs'])} runs)   b: {side_b} ({len(result['b_runs'])} runs)"
    cards = f"cards: {reviewer or _group(voters)}"
    overall = result["head_to_head"].get("overall")
    after = ([f"head to head overall: {head_to_head_text(overall)}"] if overall else []) + result["notes"]
    if not rows:
        after.insert(0, "no figure both sides have: nothing to compare (the notes say what is left out)")
    if fmt == "csv":  # the table alone on stdout, so that it stays CSV; what stands around it, on stderr
        click.echo(_table(COMPARE_HEADERS, rows, fmt))
        for line in [sides, cards, *after]:
            click.echo(one_line(line), err=True)
        return
    if fmt == "md":
        click.echo(md_inline(sides) + "  \n" + md_inline(cards) + "\n")
        click.echo(_table(COMPARE_HEADERS, rows, fmt))
        if after:
            click.echo("\n" + "\n".join(f"- {md_inline(line)}" for line in after))
        return
    click.echo(one_line(sides))
    click.echo(one_line(cards))
    click.echo(render(COMPARE_HEADERS, rows))
    for line in after:
        click.echo(one_line(line))


def _group(voters: str) -> str:
    return {"humans": "people's (--judges for the judges')", "judges": "judges' (--humans for the people's)"}[voters]


HEAD_TO_HEAD_HEADERS = [
    "criterion",
    "result",
    "share of pairs won (95%, Wilson)",
    "pairs",
    "each evaluator",
    "split",
    "agreement",
]


def render_head_to_head(criteria: dict[str, Any], fmt: str = "text") -> str:
    """Per criterion of a pair queue: the result naming the side ahead, its share of pairs won with a Wilson 95%
    interval, each evaluator's own share, the pairs they split on, and how far they agree (text, csv or md)."""
    from sieve.store.scoring.pair_summary import criterion_rows

    rows = [
        [
            r["criterion"],
            r["result"],
            r["share"],
            str(r["pairs"]),
            r["evaluators"],
            r["split"],
            _agreement_text(criteria[r["criterion"]]["agreement"]),
        ]
        for r in criterion_rows(criteria)
    ]
    return _table(HEAD_TO_HEAD_HEADERS, rows, fmt)


def _table(headers: list[str], rows: list[list[str]], fmt: str) -> str:
    if fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(headers)
        writer.writerows([[one_line(c) for c in row] for row in rows])
        return out.getvalue().rstrip("\n")
    if fmt == "md":
        lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
        return "\n".join(lines + ["| " + " | ".join(md_cell(c) for c in row) + " |" for row in rows])
    return render(headers, rows)


def _agreement_text(agreement: dict[str, Any] | None) -> str:
    if not agreement or agreement["value"] is None:
        return ""
    return f"{agreement['value']:.2f} ({agreement['measure']}, {counted(agreement['pairs'], 'pair')})"
