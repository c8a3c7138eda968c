"""One view of a run: every screen and command that shows a run's totals and verdict counts shows the same.

Three runs of the keykeeper test, played against the test server by the session
runner as Play plays them: one taken over live, a branch of it, and one whose
reply was regenerated (a verdict on each alternative). One reviewer scores them.
Home, the Review card, the Results screen, `sieve results` (CSV, JSON, table),
the Markdown export and the pair summary must all say what the scores add up to,
each in its own format, and the figures are written out here by hand.
"""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass

import pytest
from click.testing import CliRunner
from textual.widgets import DataTable

from sieve import scenarios
from sieve.cli import main
from sieve.engine.endpoints import Endpoints
from sieve.engine.gateway import Endpoint, Gateway
from sieve.engine.session import Session, resolve_settings
from sieve.store.record import pairs as pairing
from sieve.store.record import turns as record
from sieve.store.record.annotations import Quote
from sieve.store.scoring import evidence
from sieve.tables import counted
from sieve.tui.app import SieveApp
from sieve.tui.screens.home import HomeScreen
from sieve.tui.screens.results import ResultsScreen
from sieve.tui.screens.review import ReviewScreen
from sieve.tui.widgets.line_table import LineTable
from tests.support.scores import score
from tests.support.tui_helpers import FAST_RETRY, on_screen, screen_is, screen_text, wait_until

REVIEWER = "ada"


@dataclass(frozen=True)
class Expected:
    """What one run's scores add up to, as a reviewer would count them by hand."""

    t: str  # rubric T: items+bonuses
    r: str
    played_out: int  # L1 verdicts
    annulled: int
    unjudged: int  # of L1's 13 scripted steps
    l3: int  # L3 events
    disqualified: bool


def span(turn, start=0, end=12) -> Quote:
    """A quote of the turn's text, [start, end), as Review selects one."""
    return Quote(turn["id"], start, end, turn["text"][start:end])


def verdict(db, run_id, value, turn, quoted: bool = False) -> None:
    """An L1 verdict given while the turn is shown (no quote selected; `quoted`: the whole reply selected)."""
    quote = span(turn, 0, len(turn["text"])) if quoted else None
    evidence.annotate(
        db, run_id, reviewer=REVIEWER, item="L1", kind="verdict", value=value, turn_id=turn["id"], quote=quote
    )


def event(db, run_id, turn) -> None:
    evidence.annotate(db, run_id, reviewer=REVIEWER, item="L3", kind="count", turn_id=turn["id"])


def replies(db, run_id) -> list[dict]:
    return [t for t in record.chosen_turns(db, run_id) if t["role"] == "assistant"]


@pytest.fixture
async def three_runs(tmp_path, fake_server):
    """A live run, its branch, a run with a regenerated reply; scored. Returns the db path, the ids, the sums."""
    from sieve import store

    db_path = tmp_path / "views.db"
    db = store.open_db(db_path)
    keykeeper = scenarios.load("keykeeper")
    gateway = Gateway(Endpoint(fake_server.base_url, name="fake"))

    def start(model: str) -> Session:
        return Session.start(db, keykeeper, gateway, resolve_settings(model, keykeeper), retry=FAST_RETRY)

    # Taken over live after the first scripted message: m0, m1, then two messages of the reviewer's own.
    live = start("live-model;tokens=12")
    await live.send_next()
    await live.send_next()
    await live.send_live("Havel, who holds the key to the gate?")
    await live.send_live("I sit on the plank bed and wait.")
    # A branch from the reply to m1 (turn 3), which goes on with the script: m2.
    branch = live.branch(3)
    await branch.send_next()
    # Regenerated: the reply to m1 asked for twice, the second one chosen.
    regen = start("regen-model;tokens=12")
    await regen.send_next()
    await regen.send_next()
    await regen.regenerate()
    await gateway.aclose()

    a = replies(db, live.run_id)  # to m0, m1, live@4, live@6
    assert [t["idx"] for t in a] == [1, 3, 5, 7]
    assert [t["origin"] for t in record.chosen_turns(db, live.run_id) if t["role"] == "user"] == [
        "setup",
        "script",
        "live",
        "live",
    ]
    score(db, live.run_id, "T1", 2, span(a[2]), reviewer=REVIEWER)  # quoted from a live reply
    score(db, live.run_id, "T2", 1, span(a[1]), reviewer=REVIEWER)
    score(db, live.run_id, "TB1", 1, span(a[3], 5, 20), reviewer=REVIEWER)
    score(db, live.run_id, "R1", 2, span(a[3]), reviewer=REVIEWER)
    verdict(db, live.run_id, "played out", a[1])  # m1
    for turn in (a[2], a[3]):  # live@4, live@6: steps of their own, which L1 does not list: refused
        with pytest.raises(evidence.EvidenceRefused, match="L1 is judged only on the steps it lists"):
            verdict(db, live.run_id, "annulled", turn)
    event(db, live.run_id, a[2])
    event(db, live.run_id, a[3])

    b = replies(db, branch.run_id)  # to m0, m1 (copied from the live run), m2
    assert [t["idx"] for t in b] == [1, 3, 5]
    score(db, branch.run_id, "T1", 1, span(b[1]), reviewer=REVIEWER)
    score(db, branch.run_id, "TB2", 1, span(b[2]), reviewer=REVIEWER)
    verdict(db, branch.run_id, "played out", b[1])  # m1
    verdict(db, branch.run_id, "played out", b[2])  # m2
    # m2 judged again: the later verdict counts, and disqualifies on its quote
    verdict(db, branch.run_id, "annulled", b[2], quoted=True)
    event(db, branch.run_id, b[2])

    first, second = record.alternatives(db, regen.run_id, 3)
    assert (first["chosen"], second["chosen"]) == (0, 1)
    score(db, regen.run_id, "T1", 2, span(second), reviewer=REVIEWER)
    score(db, regen.run_id, "R3", 1, span(second), reviewer=REVIEWER)
    verdict(db, regen.run_id, "annulled", first)  # on the first reply to m1, before it was regenerated
    verdict(db, regen.run_id, "played out", second)  # m1 again, on the reply that stands: it counts

    expected = {
        live.run_id: Expected("3+1", "2", 1, 0, 12, 2, False),
        branch.run_id: Expected("1+1", "0", 1, 1, 11, 1, True),
        regen.run_id: Expected("2+0", "1", 1, 0, 12, 0, False),
    }
    return db_path, db, expected


def cli(*args) -> str:
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result.stdout  # what a pipe would read (notes for the person go to stderr)


def aligned_table(text: str) -> list[dict[str, str]]:
    """Rows of a table printed by sieve.tables: the dashes under the headers give each column's span."""
    lines = text.rstrip("\n").splitlines()
    spans, at = [], 0
    for dashes in lines[1].split("  "):
        spans.append((at, at + len(dashes)))
        at += len(dashes) + 2
    headers = [lines[0][s:e].strip() for s, e in spans]
    return [{h: line[s:e].strip() for h, (s, e) in zip(headers, spans)} for line in lines[2:]]


def check_results_row(row: dict[str, str], want: Expected) -> None:
    """A row of `sieve results` (or the Results screen): totals in data's notation, verdicts as counts."""
    assert row["T"] == f"{want.t} (partial)"
    assert row["R"] == f"{want.r} (partial)"
    assert (row["L1 played out"], row["L1 annulled"], row["L3"]) == (
        str(want.played_out),
        str(want.annulled),
        str(want.l3),
    )
    assert row.get("disqualified by", "") == ("L1" if want.disqualified else "")
    assert f"{counted(want.unjudged, 'step')} unjudged" in row["progress"]


def card_line(want: Expected) -> str:
    """How the Review card and the Markdown export write the L1 verdicts."""
    return f"{want.played_out} played out / {want.annulled} annulled ({counted(want.unjudged, 'step')} not judged)"


def totals_line(want: Expected) -> str:
    """How Home and the pair summary write a run's totals, and what disqualifies it."""
    out = "  DISQUALIFIED by L1" if want.disqualified else ""
    return f"T {want.t} / 24+4 (partial)  R {want.r} / 12 (partial){out}"


@pytest.mark.slow
async def test_home_review_results_export_and_pairs_give_the_same_totals_and_verdicts(three_runs):
    db_path, db, expected = three_runs
    ids = list(expected)

    # sieve results, in each format.
    csv_rows = list(
        csv.DictReader(io.StringIO(cli("results", "--scenario", "keykeeper", "--format", "csv", "--db", db_path)))
    )
    json_rows = json.loads(cli("results", "--scenario", "keykeeper", "--format", "json", "--db", db_path))
    table_rows = aligned_table(cli("results", "--scenario", "keykeeper", "--db", db_path))
    for rows in (csv_rows, json_rows, table_rows):
        assert [r["run"] for r in rows] == ids
        for row in rows:
            check_results_row({k: "" if v is None else str(v) for k, v in row.items()}, expected[row["run"]])

    # The Markdown export.
    for run_id, want in expected.items():
        text = cli("export", run_id, "--format", "md", "--db", db_path).replace("\\", "")  # Markdown escapes
        assert f"- T the sieve: {want.t} / 24+4 (partial)" in text
        assert f"- R is there someone inside: {want.r} / 12 (partial)" in text
        assert f"- L1 played out against annulled: {card_line(want)}" in text
        assert f"- L3 events the world produced on its own: {want.l3}" in text
        assert ("**disqualified by L1**" in text) == want.disqualified

    # The pair summary: the live run against its branch, each side's totals.
    queue = pairing.create_queue(db, [(ids[0], ids[1])], seed=1)
    summary = json.loads(cli("pair", "--queue", queue, "--summary", "--json", "--db", db_path))
    (pair,) = summary["pairs"]
    sides = [pair["run_a"], pair["run_b"]]
    assert sorted(sides) == sorted(ids[:2])
    assert pair["totals"][REVIEWER] == [totals_line(expected[r]) for r in sides]
    printed = cli("pair", "--queue", queue, "--summary", "--db", db_path)
    (row,) = aligned_table(printed.split("\n\n")[-1])
    assert (row["reviewer"], row["A"], row["B"]) == (REVIEWER, *[totals_line(expected[r]) for r in sides])

    # The screens: Home, then the Results screen, then each run's Review card.
    app = SieveApp(db, Endpoints(), REVIEWER)
    async with app.run_test(size=(170, 50)) as pilot:
        await wait_until(pilot, screen_is(app, HomeScreen))
        home = app.screen.query_one("#runs", LineTable)
        for run_id, want in expected.items():
            row = home.cell_texts(app.screen.run_ids.index(run_id))
            # Each cell holds two lines: the short id over the scenario, the totals over the progress.
            assert (row[0].split("\n")[0], row[-1].split("\n")[0]) == (run_id[-8:], totals_line(want))

        await pilot.press("r")
        await wait_until(pilot, screen_is(app, ResultsScreen))
        results = app.screen
        table = results.query_one(DataTable)
        assert table.row_count == 3
        for i, run_id in enumerate(ids):
            cells = [str(c.plain if hasattr(c, "plain") else c) for c in table.get_row_at(i)]
            row = dict(zip(results.headers, cells))
            assert row["run"] == run_id
            check_results_row(row, expected[run_id])

        for i, run_id in enumerate(ids):
            table.move_cursor(row=i, column=0)
            await pilot.press("enter")
            await wait_until(pilot, lambda r=run_id: isinstance(app.screen, ReviewScreen) and app.screen.run_id == r)
            want = expected[run_id]
            await wait_until(pilot, on_screen(app, f"T {want.t} / 24+4 (partial)   R {want.r} / 12 (partial)"))
            shown = screen_text(app)
            # L1's tally on a line of its own, under its title; L3's count in the column of values.
            assert re.search(r"L1 ⚠ +(disqualifies +)?played out against annulled", shown) and card_line(want) in shown
            assert re.search(rf"L3 +{want.l3} +events the world produced", shown)
            assert ("DISQUALIFIED by L1" in shown) == want.disqualified
            await pilot.press("escape")
            await wait_until(pilot, screen_is(app, ResultsScreen))
