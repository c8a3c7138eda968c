"""Write a scenario's field as a static site: index.html (the field) and one page per run (or one file).

Blind, the runs go under codes drawn for the report (blind.codes with the context "report"), in
an order drawn the same way; every outside string passes through a masker of the field's model,
endpoint and provider names; no run id, annotation id, date or cost is written; the key to the
codes goes to a file outside the site folder. With private notes, no note (a reviewer's note on a
score, a note or flag annotation, a judge's summary sentence) is written anywhere.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from sqlite_utils import Database

from sieve.errors import NotFound, SieveUsageError
from sieve.report import charts, excerpts_page, field_page, run_page
from sieve.report.markup import esc, page, slug
from sieve.safe_text import dumps_json
from sieve.store.record import judgings
from sieve.store.record import turns as record
from sieve.store.record.annotations import EXCERPT
from sieve.store.record.rows import Annotation
from sieve.store.record.runs import not_archived
from sieve.store.scoring import blind as blinding
from sieve.store.scoring import comparison, leaderboard, neighbours, results
from sieve.store.scoring.runview import RunView
from sieve.store.scoring.scorecard import Card

CONTEXT = "report"  # what blind codes are drawn for: a report's codes match no reviewer's screen
VOTERS = ("all", "humans", "judges")


@dataclass(frozen=True)
class Options:
    blind: bool = False
    voters: str = "all"  # all (people and judges, never pooled), humans, judges
    reviewer: str | None = None  # one reviewer's cards alone
    private_notes: bool = False
    single_file: bool = False


@dataclass
class Written:
    folder: Path
    files: list[Path] = field(default_factory=list)
    key: Path | None = None
    runs: int = 0


def _identity(text: str) -> str:
    return text


def _chooser(db: Database, options: Options) -> Callable[[str], bool]:
    if options.reviewer:
        return lambda r: r == options.reviewer
    if options.voters == "all":
        return lambda r: True
    chosen: Callable[[str], bool] = comparison.chooses(db, options.voters)
    return chosen


def key_path_for(folder: Path) -> Path:
    """Where a blind report's key goes by default: beside the site folder, never in it."""
    return folder.parent / f"{folder.name}.key.json"


MANIFEST = ".sieve-report.json"  # in the site folder: the files this report wrote, the only ones a later one removes
_OURS = re.compile(r"(index|excerpts)\.html|runs/[\w-]+\.html")  # what a manifest may name: nothing outside the folder


def _written_before(folder: Path) -> set[str]:
    """The files (relative, /-separated) an earlier report wrote into the folder, as its manifest lists them."""
    try:
        listed = json.loads((folder / MANIFEST).read_text(encoding="utf-8")).get("files")
    except (OSError, ValueError, AttributeError):
        return set()
    return (
        {name for name in listed if isinstance(name, str) and _OURS.fullmatch(name)}
        if isinstance(listed, list)
        else set()
    )


def _make_room(folder: Path, targets: list[str]) -> None:
    """Before anything is written: refuse to overwrite a file sieve did not write (a user's own index.html), then
    remove what an earlier report wrote (a blind report must not sit beside named pages). Other files stay."""
    before = _written_before(folder)
    theirs = [name for name in targets if (folder / name).exists() and name not in before]
    if theirs:
        shown = ", ".join(theirs[:3]) + (f" and {len(theirs) - 3} more" if len(theirs) > 3 else "")
        raise SieveUsageError(
            f"{folder}: {shown} would be overwritten, and no earlier sieve report wrote it (its list, {MANIFEST}, "
            "does not name it); nothing was written: choose another folder (-o), or move those files away"
        )
    for name in before:
        (folder / name).unlink(missing_ok=True)


def _write_manifest(folder: Path, files: list[Path]) -> None:
    names = sorted(path.relative_to(folder).as_posix() for path in files)
    (folder / MANIFEST).write_text(dumps_json({"written_by": "sieve report", "files": names}) + "\n", encoding="utf-8")


def write(
    db: Database, scenario_name: str, folder: Path, options: Options | None = None, key: Path | None = None
) -> Written:
    """Write the site into `folder` (made if missing); returns what was written."""
    options = options or Options()
    if options.voters not in VOTERS:
        raise SieveUsageError(f"voters: one of {', '.join(VOTERS)}")
    views = RunView.of_scenario(db, scenario_name)
    if not views:
        raise NotFound(f"no run of the scenario {scenario_name}")
    folder = Path(folder)
    key = key or (key_path_for(folder) if options.blind else None)
    if key is not None and folder.resolve() in key.resolve().parents:
        raise SieveUsageError(f"{key}: the key to the codes must be written outside the site folder {folder}")
    ids = [v.id for v in views]
    by_id = {v.id: v for v in views}
    judges = judgings.judges(db)

    def group_of(reviewer: str) -> str:
        return "judges" if leaderboard.is_judge(reviewer) or reviewer in judges else "people"

    if options.blind:
        names = blinding.codes(db, ids, "", CONTEXT)
        order = blinding.shuffled(db, ids, CONTEXT)
        secret = blinding.salt(db)
        identifiers: list[str | None] = []
        for v in views:
            identifiers += [v.run["model"], v.run["endpoint"], *v.providers]
            identifiers += [t["played_by"] for t in v.turns if t.get("played_by")]
        mask = blinding.masker(identifiers)

        def anchor(annotation_id: str) -> str:
            return "q-" + hashlib.sha256(f"{secret}\x00{CONTEXT}\x00{annotation_id}".encode()).hexdigest()[:12]
    else:
        # Home's short id (the id's last characters, which `sieve review` takes): the full id is on the run's page.
        names = {v.id: v.id[-8:] for v in views}
        order = ids
        mask = _identity

        def anchor(annotation_id: str) -> str:
            return "q-" + slug(annotation_id)

    files = {run: slug(names[run] if options.blind else run) for run in ids}

    def href(run_id: str) -> str:
        return f"#run-{files[run_id]}" if options.single_file else f"runs/{files[run_id]}.html"

    def card_link(run_id: str, reviewer: str) -> str:
        """From the index to a reviewer's card on a run's page (not blind: the field's comparisons are not)."""
        anchor = run_page.card_anchor(f"{files[run_id]}-" if options.single_file else "", reviewer)
        return f"#{anchor}" if options.single_file else f"{href(run_id)}#{anchor}"

    def mark_link(run_id: str, annotation_id: str) -> str:
        """From the index (or excerpts.html) to an annotation's mark on its run's page."""
        return f"#{anchor(annotation_id)}" if options.single_file else f"{href(run_id)}#{anchor(annotation_id)}"

    chosen = _chooser(db, options)
    cards: dict[str, dict[str, Card]] = {v.id: {r: c for r, c in v.cards().items() if chosen(r)} for v in views}
    excerpts: dict[str, list[Annotation]] = {
        v.id: [a for a in v.annotations() if a["kind"] == EXCERPT and chosen(a["reviewer"])] for v in views
    }
    shown = run_page.Shown(mask, anchor, options.blind, options.private_notes)
    excerpts_href = "#excerpts" if options.single_file else "excerpts.html"

    # -- the field ---------------------------------------------------------------------------------
    voters = options.voters
    headers, rows = results.table(db, scenario_name, reviewer=options.reviewer, views=views, voters=voters)
    if options.blind:
        place = {run: n for n, run in enumerate(order)}
        rows = sorted(rows, key=lambda r: place[r["run"]])
    parts = [
        f"<h1>{esc(scenario_name)}: the field</h1>",
        _about(views, options, mask),
    ]
    parts.append(
        field_page.results_section(
            headers, rows, by_id, blind=options.blind, name=names.__getitem__, href=href, mask=mask
        )
    )
    if not options.private_notes:
        parts.append(field_page.summaries_section([by_id[r] for r in order], cards, names, href, mark_link, shown))
    parts.append(
        field_page.filter_section([by_id[r] for r in order], lambda v: names[v.id] if options.blind else v.run["model"])
    )
    groups = ["humans", "judges"] if voters == "all" and not options.reviewer else [options.reviewer or voters]
    if options.blind:
        parts.append(
            '<h2 id="models">Models</h2><p>Blind: the runs are not grouped by model, and no rating names one.</p>'
        )
    else:
        parts.append(
            field_page.distribution_section({g: comparison.by_model(db, scenario_name, g, items=False) for g in groups})
        )
        if db.execute(
            f"SELECT 1 FROM judgments j JOIN runs r ON r.id = j.run_a WHERE r.scenario = ? AND {not_archived('r.id')} "
            "LIMIT 1",
            [scenario_name],
        ).fetchone():
            parts.append(
                field_page.ratings_section(
                    leaderboard.leaderboard(db, scenario_name, "overall", "model", voters if voters != "all" else "all")
                )
            )
        parts.append(
            field_page.neighbours_section(
                {g: neighbours.neighbours(db, scenario_name, g) for g in groups},
                card_link,
                names.__getitem__,
                comparison.too_few_runs,
            )
        )
    parts.append(
        field_page.agreement_section(
            results.AGREEMENT_HEADERS, results.agreement_table(results.agreement(db, scenario_name)), mask
        )
    )
    parts.append(_charts(views, cards, order, names, href, group_of))
    # The contents after the sections: a link to each the page holds, none to one it left out.
    parts.insert(2, field_page.contents("\n".join(parts), excerpts_href))
    field_html = "\n".join(p for p in parts if p)

    # -- the runs ---------------------------------------------------------------------------------
    written_files: list[Path] = []
    targets = ["index.html"] + (
        [] if options.single_file else ["excerpts.html", *(f"runs/{files[r]}.html" for r in order)]
    )
    _make_room(folder, targets)
    folder.mkdir(parents=True, exist_ok=True)
    run_bodies = []
    for run_id in order:
        view = by_id[run_id]
        facts = _facts(view, options.blind)
        body = run_page.body(
            view,
            cards[run_id],
            shown,
            names[run_id],
            facts,
            prefix=f"{files[run_id]}-" if options.single_file else "",
            excerpts=excerpts[run_id],
        )
        if options.single_file:
            run_bodies.append(
                f'<article id="run-{files[run_id]}">{body}<p><a href="#results">back to the results</a></p></article>'
            )
        else:
            path = folder / "runs" / f"{files[run_id]}.html"
            path.parent.mkdir(exist_ok=True)
            nav = [("../index.html", "the field"), ("../excerpts.html", "excerpts")]
            path.write_text(page(f"{names[run_id]} · {scenario_name}", body, nav), encoding="utf-8")
            written_files.append(path)
    excerpt_runs = [
        excerpts_page.RunExcerpts(
            names[r],
            href(r),
            {t["id"]: t for t in record.all_turns(db, r)} if excerpts[r] else {},
            by_id[r].steps,
            excerpts[r],
            partial(mark_link, r),
        )
        for r in order
    ]
    excerpts_body = excerpts_page.body(excerpt_runs, mask, f"{scenario_name}: excerpts")
    index = folder / "index.html"
    if options.single_file:
        run_bodies.append(f'<article class="excerpts-page">{excerpts_body}</article>')
    else:
        excerpts_file = folder / "excerpts.html"
        excerpts_file.write_text(
            page(f"{scenario_name}: excerpts", excerpts_body, [("index.html", "the field")]), encoding="utf-8"
        )
        written_files.insert(0, excerpts_file)
    index.write_text(page(f"{scenario_name}: the field", "\n".join([field_html, *run_bodies])), encoding="utf-8")
    written_files.insert(0, index)
    _write_manifest(folder, written_files)
    if key is not None:
        rows_key = [
            {
                "code": names[v.id],
                "run": v.id,
                "model": v.run["model"],
                "provider": v.provider,
                "started": v.run["started"],
            }
            for v in (by_id[r] for r in order)
        ]
        key.parent.mkdir(parents=True, exist_ok=True)
        key.write_text(dumps_json({"scenario": scenario_name, "codes": rows_key}) + "\n", encoding="utf-8")
    return Written(folder, written_files, key, len(views))


def _about(views: list[RunView], options: Options, mask: Callable[[str], str]) -> str:
    scenario = views[-1].scenario
    whose = (
        options.reviewer
        or {"all": "people's and judges' (never pooled)", "humans": "people's", "judges": "the judges'"}[options.voters]
    )
    lines = [
        f"{scenario.title} (version {scenario.version}): {len(views)} runs.",
        f"Cards: {whose}.",
        "Every score on a run's page links to the quote it rests on, highlighted in the transcript.",
    ]
    if options.blind:
        lines.append("Blind: runs under codes; model and maker names masked.")
    if options.private_notes:
        lines.append("Reviewers' notes are left out.")
    return "<p>" + " ".join(esc(mask(line)) for line in lines) + "</p>"


def _facts(view: RunView, blind: bool) -> list[tuple[str, str]]:
    run = view.run
    out = [
        ("scenario", f"{run['scenario']} (version {view.scenario.version})"),
        ("status", run["status"]),
        ("kind", view.kind),
        ("replies", str(len(view.replies()))),
        ("filtered", str(view.count_replies("filtered"))),
        ("ceiling hits", str(view.count_replies("length"))),
    ]
    tokens = field_page._tokens(view)
    if tokens is not None:
        out.append(("tokens", str(tokens)))
    if not blind:
        out[:0] = [
            ("run", view.id),
            ("model", run["model"]),
            ("provider", view.provider or ""),
            ("endpoint", run["endpoint"]),
        ]
        out += [("started", run["started"]), ("ended", run["ended"] or "")]
        if run["cost"] is not None:
            out.append(("cost", f"${run['cost']:.6f}"))
    return out


def _charts(
    views: list[RunView],
    cards: dict[str, dict[str, Card]],
    order: list[str],
    names: dict[str, str],
    href: Callable[[str], str],
    group_of: Callable[[str], str],
) -> str:
    scenario = views[-1].scenario
    points: list[charts.Point] = []
    rubrics = scenario.rubrics
    if len(rubrics) >= 2:
        for run in order:
            by_group: dict[str, list[Card]] = {}
            for reviewer, card in cards[run].items():
                by_group.setdefault(group_of(reviewer), []).append(card)
            for group, given in sorted(by_group.items()):
                if len(given[0].rubrics) < 2:
                    continue
                x = sum(c.rubrics[0].low for c in given) / len(given)
                y = sum(c.rubrics[1].low for c in given) / len(given)
                points.append(charts.Point(f"{names[run]} ({group})", href(run), x, y))
    heat = charts.Heat("run", "item")
    items = [i for r in rubrics for i in r.items + r.bonuses]
    heat.rows = [(i.id, (i.scale.minimum, max(i.scale.values))) for i in items]
    heat.columns = [(names[run], href(run)) for run in order]
    has_people = any(group_of(r) == "people" for c in cards.values() for r in c)
    for c, run in enumerate(order):
        given = [card for r, card in cards[run].items() if (group_of(r) == "people") == has_people]
        for n, item in enumerate(items):
            scores = [card.item(item.id).low for card in given if _has(card, item.id)]
            if scores:
                heat.values[(n, c)] = sum(scores) / len(scores)
    scatter = charts.scatter(points, rubrics[0].id, rubrics[1].id, _bounds(rubrics[0], rubrics[1])) if points else ""
    heat_html = charts.heat_map(heat) if heat.values else ""
    if not scatter and not heat_html:
        return ""
    who = "people's" if has_people else "the judges'"
    return f'<h2 id="charts">Charts</h2>{scatter}<p class="muted">The heat map shows {who} cards.</p>{heat_html}'


def _has(card: Card, item_id: str) -> bool:
    try:
        return card.item(item_id).counted
    except KeyError:
        return False


def _bounds(a: Any, b: Any) -> tuple[float, float, float, float]:
    def span(rubric: Any) -> tuple[float, float]:
        low = sum(i.scale.minimum for i in rubric.items) - (rubric.deductions.maximum if rubric.deductions else 0.0)
        return low, rubric.item_maximum

    return (*span(a), *span(b))
