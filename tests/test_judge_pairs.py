"""`sieve judge --pairs`: absolute cards first, each pair judged twice with the sides swapped, a position flip
counted as a tie and reported as position bias; two judges give per-evaluator means and unresolved directions."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest
from rich.console import Console

from sieve import scenarios
from sieve.engine.batch import RunSpec, run_batch
from sieve.engine.gateway import Endpoint, Gateway
from sieve.engine.judge import client as client
from sieve.engine.judge import runs as judging
from sieve.engine.judge.pairs import judge_queue, settle
from sieve.engine.session import resolve_settings
from sieve.store.record import judgings
from sieve.store.record import pairs as pairing
from sieve.store.scoring import leaderboard, pair_summary
from tests.support import fakejudge
from tests.support.tui_helpers import FAST_RETRY

KEYKEEPER = scenarios.load("keykeeper")
CRITERIA = [c for c, _ in pairing.criteria(KEYKEEPER)]


@pytest.fixture(scope="module", autouse=True)
def judge_on_the_server():
    fakejudge.install()


@pytest.fixture
async def queue(db, fake_server):
    """Two pairs, each a run with long replies against one with short replies; sides drawn at random."""
    gateway = Gateway(Endpoint(fake_server.base_url, name="fake"))
    models = ["engine-new/long;tokens=90", "engine-old/short;tokens=30"] * 2
    specs = [RunSpec(resolve_settings(m, KEYKEEPER, {}), gateway, repeat=n // 2) for n, m in enumerate(models)]
    rows = await run_batch(db, KEYKEEPER, specs, concurrency=4, retry=FAST_RETRY, console=Console(file=io.StringIO()))
    await gateway.aclose()
    runs = [r["run"] for r in rows]
    long_runs = {r["run"] for r in rows if "long" in r["model"]}
    queue_id = pairing.create_queue(db, [(runs[0], runs[1]), (runs[2], runs[3])], seed=3)
    return queue_id, long_runs


def judges_on(server, *names: str) -> list[client.Judge]:
    gateway = Gateway(Endpoint(server.base_url, name="fake"))
    return [
        client.Judge(gateway, client.judge_settings(f"{name};reply=judge;quotes=exact", False), name, 128_000)
        for name in names
    ]


def longer_side(pair: dict, long_runs: set[str]) -> str:
    return "A" if pair["run_a"] in long_runs else "B"


@pytest.mark.slow
async def test_two_judges_with_sides_swapped_give_means_ties_for_flips_and_position_bias(db, fake_server, queue):
    queue_id, long_runs = queue
    steady, fickle = judges_on(fake_server, "steady;pair=longer", "fickle;pair=first")
    result = await judge_queue(db, [steady, fickle], queue_id, judging.Options(), console=Console(file=io.StringIO()))
    pairs = pairing.queue_pairs(db, queue_id)
    # Each side was scored on its own first, by the same judge, before any head to head.
    cards = {
        (r["reviewer"], r["run_id"]) for r in db.query("SELECT reviewer, run_id FROM judgings WHERE kind = 'card'")
    }
    assert cards == {(j, r) for j in ("steady;pair=longer", "fickle;pair=first") for r in long_runs | _others(pairs)}
    first_pair_packet = db.execute("SELECT MIN(started) FROM judgings WHERE kind = 'pair'").fetchone()[0]
    assert db.execute("SELECT MAX(ended) FROM judgings WHERE kind = 'card'").fetchone()[0] < first_pair_packet
    assert len(result["cards"]) == 8 and all(r["status"] == "complete" for r in result["pairs"])
    for pair in pairs:
        # Both orders were shown: the second with run B as "A".
        orders = judgings.of_pair(db, pair["id"], "steady;pair=longer")
        assert [o["swapped"] for o in orders] == [0, 1]
        assert [o["covers"]["shown_as_a"] for o in orders] == [pair["run_a"], pair["run_b"]]
        # Blind: two transcripts called A and B, and neither engine named (their replies name them).
        for order in orders:
            assert "Transcript A" in order["packet"] and "Transcript B" in order["packet"]
            assert "engine-new" not in order["packet"] and "engine-old" not in order["packet"]
        verdicts = pairing.verdicts(db, pair["id"])
        for criterion in CRITERIA:
            assert verdicts[("steady;pair=longer", criterion)] == longer_side(pair, long_runs)
            assert verdicts[("fickle;pair=first", criterion)] == "tie"
        note = db.execute(
            "SELECT note FROM judgments WHERE pair_id = ? AND reviewer = 'fickle;pair=first' LIMIT 1", [pair["id"]]
        ).fetchone()[0]
        assert note == "flipped with position (chose the first shown both times)"
    bias = pair_summary.position_bias(db, queue_id)
    n = len(pairs) * len(CRITERIA)
    assert bias["fickle;pair=first"] == {
        "verdicts": n,
        "consistent": 0,
        "flipped": n,
        "first": n,
        "second": 0,
        "bias": 1.0,
    }
    assert bias["steady;pair=longer"]["flipped"] == 0 and bias["steady;pair=longer"]["consistent"] == n
    # Each judge's own mean first, then across the two; a tie is no direction, so nothing is unresolved.
    # Verdicts count for the model a slot showed (the queue's sides: its runs' two models), not for slot A.
    summary = pair_summary.head_to_head(db, queue_id)
    overall = summary[pairing.OVERALL]
    assert overall["side"] == "engine-new/long;tokens=90"
    assert overall["evaluators"] == {"steady;pair=longer": 1.0, "fickle;pair=first": 0.5}
    assert overall["share"] == pytest.approx((1.0 + 0.5) / 2) and overall["status"] == "within noise"
    # Judges under names of their own are still judges where people and judges are kept apart.
    votes = leaderboard.votes(db, "keykeeper", by="run")
    assert votes["humans"] == [] and {v.voter for v in votes["judges"]} == {"steady;pair=longer", "fickle;pair=first"}


@pytest.mark.slow
async def test_judges_that_disagree_on_direction_leave_the_criterion_unresolved(db, fake_server, queue):
    queue_id, long_runs = queue
    judges = judges_on(fake_server, "likes-long;pair=longer", "likes-short;pair=shorter")
    await judge_queue(db, judges, queue_id, judging.Options(), console=Console(file=io.StringIO()))
    summary = pair_summary.head_to_head(db, queue_id)
    pairs = pairing.queue_pairs(db, queue_id)
    for criterion in CRITERIA:
        assert summary[criterion]["status"] == "unresolved" and summary[criterion]["winner"] is None
        assert summary[criterion]["split_positions"] == [p["position"] for p in pairs]
    # Two judges on an ordinal B < tie < A: weighted kappa by hand. They always disagree, A against B.
    given = [(longer_side(p, long_runs), "B" if longer_side(p, long_runs) == "A" else "A") for p in pairs]
    positions = [(pair_summary.ORDER[a], pair_summary.ORDER[b]) for a, b in given]
    observed = sum(abs(i - j) / 2 for i, j in positions) / len(positions)
    rows = [i for i, _ in positions]
    cols = [j for _, j in positions]
    expected = sum(abs(i - j) / 2 for i in rows for j in cols) / len(positions) ** 2
    agreement = summary[pairing.OVERALL]["agreement"]
    assert agreement["measure"] == "weighted kappa" and agreement["pairs"] == len(pairs)
    assert agreement["value"] == pytest.approx(1 - observed / expected, abs=1e-3)


def test_pair_agreement_matches_a_textbook_table():
    # The SAS PROC FREQ agreement example (two raters, three ordered categories, 19 subjects):
    # simple kappa 0.4842, weighted kappa 0.4701 with Cicchetti-Allison (linear) weights.
    table = [[0, 4, 1], [0, 8, 0], [0, 1, 5]]
    names = ["B", "tie", "A"]
    given = [(names[i], names[j]) for i in range(3) for j in range(3) for _ in range(table[i][j])]
    by_pair = {n: {"one": a, "two": b} for n, (a, b) in enumerate(given)}
    assert pair_summary.verdict_agreement(by_pair) == {"measure": "weighted kappa", "value": 0.47, "pairs": 19}


def test_settle_keeps_what_holds_in_both_orders_and_ties_the_rest():
    assert settle("A", "A") == ("A", None) and settle("tie", "tie") == ("tie", None)
    assert settle("A", "B")[0] == "tie" and "first shown" in settle("A", "B")[1]
    assert "second shown" in settle("B", "A")[1]
    assert settle("A", "tie") == ("tie", "A as shown, tie with the sides swapped: counted as a tie")


@pytest.mark.slow
async def test_the_cli_judges_a_queue_and_reports_the_position_bias(db, fake_server, queue):
    queue_id, _ = queue
    path = db.conn.execute("PRAGMA database_list").fetchone()[2]
    args = ["-m", "fickle;reply=judge;quotes=exact;pair=first", "--reviewer", "fickle", "--db", path]
    proc = subprocess.run(
        [sys.executable, "-m", "sieve", "judge", "--pairs", queue_id, "--endpoint", fake_server.base_url, *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    n = 2 * len(CRITERIA)
    assert (
        f"fickle: {n} of {n} verdicts flipped with position ({n} for the first shown, 0 for the second)" in proc.stdout
    )
    assert "Absolute cards first" in proc.stdout
    listed = subprocess.run(
        [sys.executable, "-m", "sieve", "pair", "--queue", queue_id, "--summary", "--json", "--db", path],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert json.loads(listed.stdout)["position_bias"]["fickle"]["bias"] == 1.0


def _others(pairs: list[dict]) -> set[str]:
    return {r for p in pairs for r in (p["run_a"], p["run_b"])}


@pytest.mark.slow
async def test_a_pair_whose_verdicts_cannot_all_be_stored_keeps_none_and_is_judged_again(db, fake_server, queue):
    queue_id, _ = queue
    (judge,) = judges_on(fake_server, "steady;pair=longer")
    last = CRITERIA[-1]
    # A real fault in the real database: the last criterion's verdict is refused, as a full disk would refuse it.
    db.execute(
        "CREATE TEMP TRIGGER refuse BEFORE INSERT ON judgments WHEN NEW.criterion = ? "
        "BEGIN SELECT RAISE(ABORT, 'disk I/O error'); END".replace("?", f"'{last}'")
    )
    result = await judge_queue(db, [judge], queue_id, judging.Options(), console=Console(file=io.StringIO()))
    assert [r["status"] for r in result["pairs"]] == ["failed", "failed"]
    assert all(
        "the verdicts could not be stored" in r["error"] and "disk I/O error" in r["error"] for r in result["pairs"]
    )
    # All or nothing: not the criteria before the refused one either, so no pair passes for judged.
    assert db.execute("SELECT COUNT(*) FROM judgments").fetchone()[0] == 0
    db.execute("DROP TRIGGER refuse")
    again = await judge_queue(
        db, [judge], queue_id, judging.Options(), console=Console(file=io.StringIO()), skip_judged=True
    )
    assert [r["status"] for r in again["pairs"]] == ["complete", "complete"]
    for pair in pairing.queue_pairs(db, queue_id):
        assert {c for (_, c) in pairing.verdicts(db, pair["id"])} == set(CRITERIA)
