"""`sieve results`: a scenario's runs as rows, and the views beside them (by model, ratings, agreement, judges)."""

from __future__ import annotations

import click

from sieve.cli.common import (
    db_option,
    emit_json,
    fail,
    json_option,
    open_db,
    or_the_groups,
    who,
)
from sieve.safe_text import visible


@click.command("results")
@click.option("--scenario", "scenario_name", help="The scenario whose runs to list.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "csv", "json", "md"]),
    default="table",
    show_default=True,
    help="json: as --json.",
)
@json_option
@click.option(
    "--reviewer",
    callback=or_the_groups,
    help="Only this reviewer's scores (default: every reviewer's mean, each reviewer's own first).",
)
@click.option(
    "--agreement",
    is_flag=True,
    help="Instead: per item, each model judge against the people, and the people among themselves "
    "(weighted kappa for two, Krippendorff's alpha for more), with 95% intervals and the runs they rest on.",
)
@click.option(
    "--exclude-adopted",
    is_flag=True,
    help="With --agreement: leave out the people's scores adopted from a judge's draft (they agree with it by "
    "construction).",
)
@click.option(
    "--detectors",
    is_flag=True,
    help="Instead: per detector and reviewer, how many suggestions were accepted and rejected (any scenario).",
)
@click.option(
    "--kind",
    type=click.Choice(["scripted", "explored", "live"]),
    help="Only scripted runs, runs a model explored in the player's seat, or runs a person played live.",
)
@click.option(
    "--ratings",
    is_flag=True,
    help="Instead: Bradley-Terry ratings with ties from the head-to-head judgments (a weak normal prior on log "
    "strengths, sd 2), with 95% intervals (the wider of a bootstrap over pairs and the posterior's normal "
    "approximation, so a side that never lost is not certain) and stability.",
)
@click.option(
    "--judge-report",
    is_flag=True,
    help="Instead: the model judges judged: per judge, the flip rate per item across repeats (sieve judge --again) "
    "and the items that flipped; per rubric, each judge's rank correlation with the people's ranking of the models "
    "(Spearman, Kendall, bootstrap 95% over runs), the judges' mean beside each judge, and each judge's bias toward "
    "its own maker's models, with its interval.",
)
@click.option(
    "--reviewers",
    "per_reviewer",
    is_flag=True,
    help="Instead: per reviewer, runs and items scored, median seconds per item, self-consistency on catch trials, "
    "agreement with the others (--scenario optional).",
)
@click.option("--sort", "sort_by", help="Sort the rows by this column (progress: by how much is scored, least first).")
@click.option("--reverse", is_flag=True, help="With --sort: the other way round.")
@click.option("--criterion", default="overall", show_default=True, help="With --ratings: the criterion judged.")
@click.option(
    "--control",
    "controls",
    multiple=True,
    type=click.Choice(["length", "markdown"]),
    help="With --ratings (repeatable): Bradley-Terry with the difference in the replies' length (characters) or "
    "markdown (headers, list items, bold) as covariates, as LMArena does: the controlled rating beside the raw one, "
    "and with length, each voter's length bias (Elo a reply gains against one half as long) with its interval.",
)
@click.option(
    "--by",
    type=click.Choice(["model", "run"]),
    help="model: one row per model and rubric, its runs as a distribution (n, mean, sd, a 95% bootstrap interval, "
    "min-max; --items for every item); run: one row per run (the default). With --ratings: what a side is "
    "(default model).",
)
@click.option("--items", is_flag=True, help="With --by model: a row for each item too.")
@click.option("--humans", "group", flag_value="humans", help="People's cards only (the default for the table).")
@click.option("--judges", "group", flag_value="judges", help="The model judges' cards only.")
@click.option("--all", "group", flag_value="all", help="People's and judges' cards, each as rows of their own.")
@click.option(
    "--voters",
    type=click.Choice(["humans", "judges", "all"]),
    default="all",
    show_default=True,
    help="With --ratings: people, judges, or both side by side (fitted apart, never pooled).",
)
@db_option
def results_command(
    scenario_name: str | None,
    fmt: str,
    reviewer: str | None,
    agreement: bool,
    exclude_adopted: bool,
    detectors: bool,
    kind: str | None,
    ratings: bool,
    judge_report: bool,
    per_reviewer: bool,
    sort_by: str | None,
    reverse: bool,
    criterion: str,
    controls: tuple[str, ...],
    by: str | None,
    items: bool,
    group: str | None,
    voters: str,
    as_json: bool,
    db_path: str | None,
) -> None:
    """One row per run: model, provider, date, status, cost, progress, each rubric's total, each L count and probe.

    A reviewer who reviews blind only (the config's [reviewer] blind = true) sees the runs under their own codes, in
    their own order, with their own cards only: no model, provider, date, cost, status, kind, replies or flags."""
    from sieve.store.scoring import results, suggestions

    fmt = "json" if as_json else fmt
    db = open_db(db_path, reads_only=True)
    name, blind_only, config = who(None)
    if per_reviewer:
        from sieve.store.scoring import reviewers

        if scenario_name and not db.execute("SELECT 1 FROM runs WHERE scenario = ?", [scenario_name]).fetchone():
            fail(f"no run of the scenario {scenario_name}")
        rows = reviewers.reviewers(db, scenario_name)
        if fmt == "json":
            emit_json(rows)
            return
        click.echo(results.render(reviewers.HEADERS, reviewers.table_rows(rows), fmt), nl=False)
        return
    if detectors:
        rows = suggestions.detector_table(db, scenario_name)
        headers = ["detector", "version", "reviewer", "accepted", "rejected", "precision"]
        click.echo(results.render(headers, rows, fmt), nl=False)
        return
    if not scenario_name:
        fail("name the scenario: --scenario NAME")
    if judge_report:
        if blind_only:
            fail(f"{name} reviews blind only (blind = true under [reviewer] in {config.path}): the report names models")
        _judge_report(db, scenario_name, fmt)
        return
    if ratings:
        from sieve.store.scoring import comparison, leaderboard

        if blind_only:
            fail(f"{name} reviews blind only (blind = true under [reviewer] in {config.path}): ratings name the models")

        controls = tuple(dict.fromkeys(controls))
        board = leaderboard.leaderboard(db, scenario_name, criterion, by or "model", group or voters, controls=controls)
        if fmt == "json":
            emit_json(board)
            return
        headers = ["voters", "rank", "side", "rating", "95% low", "95% high", "votes", "wins", "ties", "losses"]
        headers += ["controlled", "c. 95% low", "c. 95% high"] if controls else []
        headers += ["stability", *board["rubrics"]]
        rows = [
            {
                "voters": group,
                "rank": n,
                **row,
                "95% low": row["low"],
                "95% high": row["high"],
                "c. 95% low": row.get("controlled_low"),
                "c. 95% high": row.get("controlled_high"),
            }
            for group, group_rows in board["groups"].items()
            for n, row in enumerate(group_rows, start=1)
        ]
        if not rows and fmt in ("table", "md"):  # no empty table without a reason
            whose = " or ".join(comparison.whose(g) for g in board["groups"])
            click.echo(
                f"no head-to-head judgments ({whose}) of {scenario_name}'s runs on {criterion} yet: "
                f"sieve pair --scenario {scenario_name}, then judge the pairs"
            )
            return
        click.echo(results.render(headers, rows, fmt), nl=False)
        if controls and fmt != "csv":
            _style_figures(board, fmt)
        return
    if controls:
        fail("--control goes with --ratings")
    if agreement:
        figures = results.agreement(db, scenario_name, exclude_adopted)
        if fmt == "json":
            emit_json(figures)
            return
        click.echo(results.render(results.AGREEMENT_HEADERS, results.agreement_table(figures), fmt), nl=False)
        _adopted(db, scenario_name, fmt, exclude_adopted)
        _self_consistency(db, scenario_name, fmt)
        return
    if exclude_adopted:
        fail("--exclude-adopted goes with --agreement")
    if by == "model":
        _by_model(db, scenario_name, reviewer or group or "humans", items, fmt, blind_only, name)
        return
    if blind_only:
        # Their own cards, and nothing else that tells one run from another: another's scores, or a kind to pick.
        refused = {"--judges": group == "judges", "--all": group == "all", "--kind": kind is not None}
        refused["--reviewer"] = reviewer is not None and reviewer != name
        for option in (o for o, given in refused.items() if given):
            fail(
                f"{name} reviews blind only (blind = true under [reviewer] in {config.path}): the table shows your "
                f"own cards and nothing else that tells one run from another, so not {option}"
            )
        reviewer = name
    headers, rows = results.table(db, scenario_name, reviewer, kind=kind, voters=group or "humans")
    if blind_only:
        headers, rows = results.blind_rows(db, headers, rows, name)
        click.echo(
            f"{name} reviews blind only: runs under your codes, your own cards, nothing else that tells them apart",
            err=True,
        )
    if sort_by is not None:
        if sort_by not in headers:
            fail(f"no column {sort_by!r} to sort by (the columns: {', '.join(headers)})")
        rows = results.sort_rows(rows, sort_by, reverse)
    click.echo(results.render(headers, rows, fmt), nl=False)
    if fmt == "table" and not blind_only and reviewer is None:
        # On stderr, so that the table piped on stays a table; csv and json rows say it in `cards`.
        click.echo(_whose(db, scenario_name, group or "humans"), err=True)


def _interval(low, high, digits: int = 2) -> str:
    return "" if low is None else f"{low:.{digits}f} to {high:.{digits}f}"


def _judge_report(db, scenario_name: str, fmt: str) -> None:
    """`results --judge-report`: stability, field-level agreement, ensembles and same-maker bias, each a table."""
    from sieve.store.scoring import judge_report, results

    found = judge_report.report(db, scenario_name)
    if fmt == "json":
        emit_json(found)
        return
    click.echo("stability: each judge's verdicts when it judged a run again (sieve judge --again), per item\n")
    rows = [
        {
            "judge": judge,
            "item": row["item"],
            "repeats": row["repeats"],
            "flipped": row["flipped"],
            "flip rate (95%)": f"{row['rate']:.2f} ({_interval(row['low'], row['high'])})",
        }
        for judge, entry in found["stability"].items()
        for row in entry["items"] + [{"item": "all", "repeats": entry["compared"], **entry}]
    ]
    if rows:
        click.echo(results.render(["judge", "item", "repeats", "flipped", "flip rate (95%)"], rows, fmt), nl=False)
        flips = [{"judge": j, **f} for j, e in found["stability"].items() for f in e["flipped_items"]]
        if flips:
            click.echo("\nthe items that flipped, to read:\n")
            headers = ["judge", "run", "model", "item", "first", "again", "first_quote", "again_quote"]
            click.echo(results.render(headers, flips, fmt), nl=False)
    else:
        click.echo("no run judged twice by the same judge: sieve judge RUN --again\n")
    click.echo("\nthe field: each judge's ranking of the models against the people's, per rubric (95% bootstrap)\n")
    rows = []
    for rubric, entry in found["field"].items():
        named = list(entry["judges"].items()) + ([("judges' mean", entry["ensemble"])] if "ensemble" in entry else [])
        for judge, c in named:
            rows.append(
                {
                    "rubric": rubric,
                    "judge": judge,
                    "models": c["models"],
                    "runs": c["runs"],
                    "spearman": "" if c["spearman"] is None else f"{c['spearman']:.2f}",
                    "95%": _interval(c["spearman_low"], c["spearman_high"]),
                    "kendall": "" if c["kendall"] is None else f"{c['kendall']:.2f}",
                    "95% ": _interval(c["kendall_low"], c["kendall_high"]),
                    "note": c.get("undefined") or "",
                }
            )
    headers = ["rubric", "judge", "models", "runs", "spearman", "95%", "kendall", "95% ", "note"]
    click.echo(results.render(headers, rows, fmt) if rows else "no rubric scored by judges and people\n", nl=False)
    for rubric, entry in found["field"].items():
        if "means" in entry:
            judges = list(entry["judges"]) + ["judges' mean"]
            click.echo(f"\n{rubric}: each judge's mean total per model, and the mean across judges\n")
            table = [
                {"model": m, **{j: "" if v.get(j) is None else f"{v[j]:.2f}" for j in judges}}
                for m, v in entry["means"].items()
            ]
            click.echo(results.render(["model", *judges], table, fmt), nl=False)
    if found["same_maker"]:
        click.echo("\nsame maker: each judge's total minus the other judges' mean, on its maker's runs and elsewhere\n")
        rows = [
            {
                "judge": r["judge"],
                "maker": r["maker"],
                "rubric": r["rubric"],
                "own runs": r["own_runs"],
                "own gap (95%)": f"{r['own_gap']:+.2f} ({_interval(r['own_low'], r['own_high'])})",
                "elsewhere": "" if r["other_gap"] is None else f"{r['other_gap']:+.2f} over {r['other_runs']}",
                "bias (95%)": "" if r["bias"] is None else f"{r['bias']:+.2f} ({_interval(r['low'], r['high'])})",
                "status": r["status"],
            }
            for r in found["same_maker"]
        ]
        headers = ["judge", "maker", "rubric", "own runs", "own gap (95%)", "elsewhere", "bias (95%)", "status"]
        click.echo(results.render(headers, rows, fmt), nl=False)


def _style_figures(board: dict, fmt: str) -> None:
    """Under controlled ratings: each covariate's coefficient, and each voter's length bias, with intervals."""
    from sieve.store.scoring import results

    for group, found in board.get("coefficients", {}).items():
        said = ", ".join(
            f"{name} {c['value']:+.2f} ({c['low']:+.2f} to {c['high']:+.2f})"
            if c["value"] is not None
            else f"{name}: {c['note']}"
            for name, c in found.items()
        )
        click.echo(visible(f"\n{group}: coefficients on the normalised differences (log odds): {said}"))
    if board["length_bias"]:
        click.echo("\nlength bias: the Elo a reply gains against one half as long, the models' strengths held (95%);")
        click.echo("and the share of decisive verdicts for the longer reply (Wilson 95%)\n")
        headers = ["voters", "voter", "votes", "length bias", "95% interval", "longer won", "share (95%)"]
        rows = [
            {
                "voters": b["group"],
                "voter": b["voter"],
                "votes": b["votes"],
                "length bias": "" if b["length_bias_elo"] is None else f"{b['length_bias_elo']:+.0f}",
                "95% interval": "" if b["low"] is None else f"{b['low']:+.0f} to {b['high']:+.0f}",
                "longer won": f"{b['longer_won']} of {b['decisive']}",
                "share (95%)": ""
                if b["longer_share"] is None
                else f"{b['longer_share']:.2f} ({b['share_low']:.2f} to {b['share_high']:.2f})",
            }
            for b in board["length_bias"]
        ]
        click.echo(results.render(headers, rows, fmt), nl=False)


def _whose(db, scenario_name: str, group: str) -> str:
    """Which cards the table shows, and what it leaves out: people and judges are never pooled."""
    from sieve.store.scoring import comparison

    reviewers = {
        r
        for (r,) in db.execute(
            "SELECT DISTINCT a.reviewer FROM annotations a JOIN runs r ON r.id = a.run_id "
            "WHERE r.scenario = ? AND a.removed IS NULL",
            [scenario_name],
        ).fetchall()
    }
    judges = {r for r in reviewers if comparison.chooses(db, "judges")(r)}
    if group == "all":
        return "cards: people's and judges' rows apart (cards column)"
    if group == "judges":
        return f"cards: judges' ({len(judges)}); --humans for the people's"
    left = f"; {len(judges)} judges' cards left out: --judges, --all" if judges else ""
    return f"cards: people's ({len(reviewers - judges)}){left}"


def _by_model(db, scenario_name: str, voters: str, items: bool, fmt: str, blind_only: bool, name: str) -> None:
    from sieve.store.scoring import comparison, results

    if blind_only:
        fail(f"{name} reviews blind only: a table by model names the models")
    groups = ["humans", "judges"] if voters == "all" else [voters]  # --all: each group's rows, never pooled
    rows = [
        {**r, "cards": comparison.whose(group)}
        for group in groups
        for r in comparison.by_model(db, scenario_name, group, items)
    ]
    notes = [note for group in groups for note in comparison.by_model_left_out(db, scenario_name, group)]
    if fmt == "json":
        emit_json(rows)
        return
    headers = ["model", "figure", "runs", "mean", "sd", "95% interval", "min-max", "each evaluator", "note"]
    headers[1:1] = ["cards"] if len(groups) > 1 else []
    shown = [
        {
            **r,
            "95% interval": f"{r['low']:.2f} to {r['high']:.2f}",
            "min-max": f"{r['min']:g}-{r['max']:g}",
            "sd": "" if r["sd"] is None else f"{r['sd']:.2f}",
            "mean": f"{r['mean']:.2f}",
            "each evaluator": " ".join(f"{e} {v:g}" for e, v in r["evaluators"].items())
            if len(r["evaluators"]) > 1
            else "",
        }
        for r in rows
    ]
    click.echo(results.render(headers, shown, fmt), nl=False)
    if fmt != "table":
        return
    if not rows:
        click.echo(
            f"no figure: no complete run of {scenario_name} has a card ({', '.join(map(comparison.whose, groups))})"
        )
    for note in notes:  # what the rows leave out, and why
        click.echo(visible(note))
    click.echo(f"cards: {', '.join(comparison.whose(g) for g in groups)}", err=True)


def _adopted(db, scenario_name: str, fmt: str, excluded: bool) -> None:
    """Under the agreement table: how many of each person's scores were adopted from a judge's draft."""
    from sieve.store.scoring import draft

    counts = {r: c for r, c in draft.adopted_by_reviewer(db, scenario_name).items() if c[0]}
    if not counts or fmt == "csv":
        return
    said = "left out above" if excluded else "counted above; --exclude-adopted leaves them out"
    click.echo(f"\nadopted from a judge's draft ({said}):")
    for reviewer, (adopted, total) in counts.items():
        click.echo(visible(f"  {reviewer}: {adopted} of {total} scores"))


def _self_consistency(db, scenario_name: str, fmt: str) -> None:
    """Under the agreement table: each reviewer's catch trials against their first showing (not in CSV: one table)."""
    from sieve.store.scoring import consistency, results

    rows = consistency.rows([consistency.of_runs(db, scenario_name), consistency.of_pairs(db, scenario=scenario_name)])
    if not rows or fmt == "csv":
        return
    headers = ["reviewer", "kind", "trials", "compared", "same", "share", "measure", "value"]
    click.echo("\nself-consistency: each reviewer's catch trials against their first showing\n")
    click.echo(results.render(headers, rows, fmt), nl=False)
