"""`sieve judge` against a judge played by the test server: every quote verified, one repair round, refusals,
malformed replies and wrong item ids handled, blind packets, precedents, long runs in parts, the record kept."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys

import pytest
from rich.console import Console

from sieve import scenarios, store
from sieve.engine.batch import RunSpec, run_batch
from sieve.engine.gateway import Endpoint, Gateway
from sieve.engine.judge import client as client
from sieve.engine.judge import runs as judging
from sieve.engine.session import resolve_settings
from sieve.store.record import judgings
from sieve.store.record.runs import owner_tag
from sieve.store.scoring.runview import RunView
from sieve.store.scoring.standing import has_evidence, unsupported
from tests.support import fakejudge
from tests.support.scores import score
from tests.support.tui_helpers import FAST_RETRY

KEYKEEPER = scenarios.load("keykeeper")
JUDGE = "judge;reply=judge"


@pytest.fixture(scope="module", autouse=True)
def judge_on_the_server():
    fakejudge.install()


def sieve(*args, timeout=120):
    return subprocess.run([sys.executable, "-m", "sieve", *args], capture_output=True, text=True, timeout=timeout)


async def play(db, server, *models: str, scenario=KEYKEEPER) -> list[str]:
    """Runs of the scenario played against the test server; their ids, in the order given."""
    gateway = Gateway(Endpoint(server.base_url, name="fake"))
    specs = [RunSpec(resolve_settings(m, scenario, {"max_tokens": 200}), gateway) for m in models]
    rows = await run_batch(db, scenario, specs, concurrency=8, retry=FAST_RETRY, console=Console(file=io.StringIO()))
    await gateway.aclose()
    return [r["run"] for r in rows]


async def judge(db, server, run_ids, model=JUDGE, reviewer="judge:test", context=128_000, max_tokens=None, **options):
    gateway = Gateway(Endpoint(server.base_url, name="fake"))
    settings = client.judge_settings(model, False, {"max_tokens": max_tokens})
    judge_ = client.Judge(gateway, settings, reviewer, context, retry=FAST_RETRY)
    rows = await judging.judge_runs(
        db, [(judge_, r) for r in run_ids], judging.Options(**options), console=Console(file=io.StringIO())
    )
    await gateway.aclose()
    return rows


def annotations(db, run_id, reviewer="judge:test") -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for a in RunView.open(db, run_id).annotations(reviewer):
        out.setdefault(a["item"], []).append(a)
    return out


def assert_nothing_unverified_is_evidence(db, run_id, reviewer="judge:test"):
    for a in RunView.open(db, run_id).annotations(reviewer):
        if a["verification"] in ("exact", "fuzzy"):
            assert a["confidence"] is None, a
        else:  # absent, the player's words, or no quote at all: marked, and never counted as evidence
            assert a["confidence"] == "low" and not has_evidence(a), a


@pytest.mark.slow
async def test_each_kind_of_quote_gets_its_verdict_and_one_repair_round_fixes_the_bad_ones(db, fake_server, tmp_path):
    (run,) = await play(db, fake_server, "vendor/model-a;tokens=60")
    path = db.conn.execute("PRAGMA database_list").fetchone()[2]
    proc = sieve("judge", run, "-m", JUDGE, "--endpoint", fake_server.base_url, "--db", path, "--json")
    assert proc.returncode == 0, proc.stderr
    (row,) = json.loads(proc.stdout)
    given = annotations(db, run, "judge:" + JUDGE)
    # The items' quotes cycle: exact, near, paraphrased, invented, the player's words, no evidence.
    assert given["T1"][0]["verification"] == "exact" and given["T1"][0]["confidence"] is None
    assert given["T2"][0]["verification"] == "fuzzy" and 0.88 <= given["T2"][0]["similarity"] < 1
    # Paraphrased, invented and the player's words were asked again, with the reason, and came back verbatim.
    for item in ("T3", "T4", "T5"):
        assert given[item][0]["verification"] == "exact", item
    assert given["T6"][0]["quote"] is None and given["T6"][0]["confidence"] == "low"
    (record,) = judgings.of_run(db, run)
    (repair,) = record["repairs"]
    assert repair["asked"][:3] == ["T3", "T4", "T5"] and "T1" not in repair["asked"] and "T6" not in repair["asked"]
    assert "T3: your quote" in repair["request"] and "is not in the transcript" in repair["request"]
    assert "T5: your quote" in repair["request"] and "the player's own words" in repair["request"]
    # What was asked the second time is exactly the conversation so far plus the repair request.
    follow_up = [r for r in fake_server.requests if len(r["body"]["messages"]) == 3][-1]["body"]
    assert follow_up["messages"][0]["content"] == record["packet"]
    assert set(follow_up["response_format"]["json_schema"]["schema"]["properties"]) == set(repair["asked"])
    assert row["status"] == "complete" and row["items"] == 22 and row["repairs"] == len(repair["asked"])
    assert row["exact"] > 0 and row["fuzzy"] >= 1 and row["no quote"] >= 1
    assert record["packet_sha256"] == judgings.packet_hash(record["packet"]) and record["status"] == "complete"
    assert record["prompt_tokens"] > 0 and record["cost"] > 0 and record["provider"] == "FakeProvider"
    assert_nothing_unverified_is_evidence(db, run, "judge:" + JUDGE)


async def test_quotes_still_wrong_after_the_repair_are_stored_absent_and_low_confidence(db, fake_server):
    (run,) = await play(db, fake_server, "vendor/model-b;tokens=60")
    (row,) = await judge(db, fake_server, [run], model=JUDGE + ";fix=0")
    given = annotations(db, run)
    assert given["T3"][0]["verification"] == "absent" and given["T4"][0]["verification"] == "absent"
    assert given["T5"][0]["verification"] in ("absent", "player")
    assert row["absent"] >= 2 and row["status"] == "complete"
    card = RunView.open(db, run).card("judge:test")
    assert {"T3", "T4", "T5", "T6"} <= set(card.rubrics[0].low_confidence)
    # Each counted event carries its own quote; the invented one is kept but marked.
    events = given["L3"]
    assert len(events) == 2 and sorted(e["verification"] for e in events) == ["absent", "exact"]
    assert_nothing_unverified_is_evidence(db, run)


async def test_a_malformed_reply_gets_one_retry_then_a_clear_failure(db, fake_server):
    runs = await play(db, fake_server, "vendor/model-c;tokens=40", "vendor/model-d;tokens=40")
    (once,) = await judge(db, fake_server, runs[:1], model=JUDGE + ";malformed=1")
    assert once["status"] == "complete" and annotations(db, runs[0])["T1"]
    (record,) = judgings.of_run(db, runs[0])
    assert record["repairs"][0]["asked"] == "the whole answer" and "not JSON" in record["repairs"][0]["because"]
    (twice,) = await judge(db, fake_server, runs[1:], model=JUDGE + ";malformed=2")
    assert twice["status"] == "failed" and "could not be read, twice" in twice["error"]
    assert annotations(db, runs[1]) == {} and len(twice["failed"]) == 22 + 8 + 1 + 12
    (record,) = judgings.of_run(db, runs[1])
    assert record["status"] == "failed" and record["reply"].startswith('{"T1"')


@pytest.mark.slow
async def test_a_refusal_is_recorded_as_a_refusal(db, fake_server, tmp_path):
    (run,) = await play(db, fake_server, "vendor/model-e;tokens=40")
    path = db.conn.execute("PRAGMA database_list").fetchone()[2]
    proc = sieve("judge", run, "-m", JUDGE + ";refuse=1", "--endpoint", fake_server.base_url, "--db", path)
    assert proc.returncode == 1
    assert " refused " in proc.stdout and "the judge declined" in proc.stdout
    assert "1 judgings, 0 items scored; quotes: 0 exact, 0 fuzzy, 0 absent" in proc.stdout
    (record,) = judgings.of_run(db, run)
    assert record["status"] == "refused" and "can't help" in record["reply"]
    assert annotations(db, run, "judge:" + JUDGE + ";refuse=1") == {}


async def test_a_refusal_in_delta_refusal_is_a_refusal_with_its_words_kept(db, fake_server):
    # OpenAI's structured outputs decline in `delta.refusal`: not a card to read, nor to repair.
    (run,) = await play(db, fake_server, "vendor/model-r;tokens=20")
    (row,) = await judge(db, fake_server, [run], model=JUDGE + ";refusal=1")
    (record,) = judgings.of_run(db, run)
    assert record["status"] == "refused" and row["status"] == "refused"
    assert record["reply"].startswith('{"T1"') and "the judge declined" in record["error"]
    assert annotations(db, run) == {}


async def test_a_wrong_item_id_is_set_aside_and_the_missing_item_asked_again(db, fake_server):
    (run,) = await play(db, fake_server, "vendor/model-f;tokens=40")
    (row,) = await judge(db, fake_server, [run], model=JUDGE + ";stray=1;quotes=exact")
    assert row["strays"] == ["T13"] and row["status"] == "complete"
    given = annotations(db, run)
    assert "T13" not in given and given["T2"][0]["verification"] == "exact"
    (record,) = judgings.of_run(db, run)
    assert record["repairs"][0]["asked"] == ["T2"] and "T2: missing from your answer" in record["repairs"][0]["request"]


async def test_a_score_off_its_scale_is_asked_again(db, fake_server):
    (run,) = await play(db, fake_server, "vendor/model-g;tokens=40")
    (row,) = await judge(db, fake_server, [run], model=JUDGE + ";badscore=1;quotes=exact")
    (record,) = judgings.of_run(db, run)
    assert "T1: the score 7 is not on its scale (0, 1, 2)" in record["repairs"][0]["request"]
    assert annotations(db, run)["T1"][0]["score"] in (0, 1, 2) and row["status"] == "complete"


@pytest.mark.parametrize("form,expected", [("prose", "json in prose"), ("table", "markdown table")])
async def test_a_card_in_prose_or_as_a_markdown_table_is_read(db, fake_server, form, expected):
    (run,) = await play(db, fake_server, f"vendor/model-{form};tokens=40")
    (row,) = await judge(db, fake_server, [run], model=JUDGE + f";form={form};quotes=exact")
    (record,) = judgings.of_run(db, run)
    assert record["outcome"]["form"] == expected and row["status"] == "complete"
    assert annotations(db, run)["T1"][0]["verification"] == "exact"


async def test_an_endpoint_that_refuses_structured_output_is_asked_in_prose(db, fake_server):
    (run,) = await play(db, fake_server, "vendor/model-h;tokens=40")
    (row,) = await judge(db, fake_server, [run], model=JUDGE + ";quotes=exact;status=400;times=1;only_at=1")
    assert row["status"] == "complete"
    asked = [
        r["body"] for r in fake_server.requests if r["model"] == JUDGE + ";quotes=exact;status=400;times=1;only_at=1"
    ]
    assert "response_format" in asked[0] and "response_format" not in asked[1]
    (record,) = judgings.of_run(db, run)
    assert record["settings"]["structured"] == "json_schema"  # what it was sent with first


@pytest.mark.slow
async def test_a_blind_packet_names_neither_the_model_nor_its_maker(db, fake_server):
    planted = "text=I+am+Claude+Opus+5,+made+by+Anthropic.+Anthropic's+Claude+keeps+the+keys+and+counts+coins"
    (run,) = await play(db, fake_server, f"anthropic/claude-opus-5;{planted};provider=Anthropic")
    reply = RunView.open(db, run).replies()[0]["text"]
    assert "Claude" in reply and "Anthropic" in reply
    (row,) = await judge(db, fake_server, [run], model="anthropic/claude-judge;reply=judge;quotes=exact")
    (record,) = judgings.of_run(db, run)
    sent = [r["body"]["messages"][0]["content"] for r in fake_server.requests if "claude-judge" in r["model"]]
    for packet in [record["packet"], *sent]:
        assert not re.search(r"claude|anthropic|opus", packet, re.I)
        assert "▒▒▒▒▒▒ ▒▒▒▒" in packet  # "Claude Opus", masked at its own length
    # The judge quoted masked text; the quote is found, and stored as the original words.
    quoted = annotations(db, run)["T1"][0]
    assert quoted["verification"] == "exact" and quoted["blind"] == 1
    # The same maker judging its own model: marked on the judging and in the results.
    assert row["conflict"] == "anthropic" and record["conflict"] == "anthropic"
    path = db.conn.execute("PRAGMA database_list").fetchone()[2]
    table = sieve("results", "--scenario", "keykeeper", "--format", "json", "--db", path)
    (result,) = [r for r in json.loads(table.stdout) if r["run"] == run]
    assert result["same maker"] == "judge:test (anthropic)"


async def test_not_blind_shows_the_model_its_name(db, fake_server):
    (run,) = await play(db, fake_server, "anthropic/claude-opus-5;tokens=30")
    await judge(db, fake_server, [run], model=JUDGE + ";quotes=exact", blind=False)
    (record,) = judgings.of_run(db, run)
    assert "The model that played: anthropic/claude-opus-5" in record["packet"] and record["blind"] == 0
    assert all(a["blind"] == 0 for a in RunView.open(db, run).annotations("judge:test"))


@pytest.mark.slow
async def test_precedents_add_other_runs_verified_cards_and_the_packet_lists_them(db, fake_server):
    first, second = await play(db, fake_server, "vendor/early;tokens=40", "vendor/late;tokens=40")
    await judge(db, fake_server, [first], model=JUDGE + ";fix=0")
    await judge(db, fake_server, [second], model=JUDGE + ";quotes=exact", precedents=True)
    (record,) = judgings.of_run(db, second)
    assert record["precedents"] == [first]
    code = RunView.open(db, first).code
    assert f"Runs included: {code} (1 of 1 runs with cards)" in record["packet"]
    # Only verified quotes are precedents: T1 (exact) is there, T3 (absent after its repair) is not.
    t1 = next(line for line in record["packet"].splitlines() if line.startswith("- T1: "))
    assert code in t1 and not any(line.startswith("- T3: ") for line in record["packet"].splitlines())
    assert "vendor/early" not in record["packet"]  # blind: the precedent run is named by its code


async def test_a_long_run_is_judged_in_parts_and_nothing_is_cut(db, fake_server):
    story = scenarios.load("story-5")
    (run,) = await play(db, fake_server, "vendor/story;tokens=120", scenario=story)
    (row,) = await judge(db, fake_server, [run], model=JUDGE + ";quotes=exact", context=2048 + 6000, max_tokens=2048)
    parts = judgings.of_run(db, run)
    assert row["parts"] == len(parts) > 1 and row["status"] == "complete"
    view = RunView.open(db, run, blind=True)
    shown: set[int] = set()
    for part in parts:
        covers = part["covers"]
        assert covers["steps"] != "all" and covers["tokens_estimate"] <= 6000 - client.MARGIN
        shown |= set(covers["turns"])
        for idx in covers["turns"]:  # every turn a part claims is in its packet, whole
            turn = next(t for t in view.turns if t["idx"] == idx)
            assert view.mask(turn["text"]) in part["packet"]
    assert shown == {t["idx"] for t in view.turns}
    # C3 needs the three steps of chapter 5 that ask; it was asked in a part that holds them.
    holder = next(p for p in parts if "C3" in p["covers"]["questions"])
    assert {"c5-secret", "c5-promise", "c5-recall"} <= set(holder["covers"]["steps"])
    # A whole-run item is asked in each part of the run (not again where a part is made for one item's
    # steps), and stored once, saying so.
    asking = [p for p in parts if "C1" in p["covers"]["questions"]]
    assert {s for p in asking for s in p["covers"]["steps"]} == {s.id for s in story.steps}
    assert sum(len(p["covers"]["steps"]) for p in asking) == len(story.steps)
    (c1,) = annotations(db, run)["C1"]
    assert c1["note"].startswith(f"judged in {len(asking)} parts, not as one")
    # A probe is marked from the reply to the step that asks it; a quote from elsewhere is kept, marked off its
    # step: no evidence, and the judge's mark is unsupported (left out of its card).
    off = 0
    for probe in story.probes:
        (mark,) = annotations(db, run)[probe.id]
        at = view.steps.get(mark["quote_turn_id"] or "")
        if at and at not in probe.asked:
            off += 1
            assert mark["off_step"] == 1 and mark["confidence"] == "low" and unsupported(mark), mark
        else:
            assert mark["off_step"] == 0 and (at or mark["confidence"] == "low"), mark
    assert off >= 1  # the fake judge quotes a probe from anywhere: some stand off their step
    assert sum("summary" in p["covers"]["questions"] for p in parts) == 1


@pytest.mark.slow
async def test_a_step_too_long_for_the_context_fails_clearly(db, fake_server):
    (run,) = await play(db, fake_server, "vendor/verbose;tokens=3000")
    (row,) = await judge(db, fake_server, [run], context=2048 + 3900, max_tokens=2048)
    assert row["status"] == "failed" and "alone needs about" in row["error"] and "--context" in row["error"]
    assert judgings.of_run(db, run) == []


@pytest.mark.slow
async def test_judging_again_replaces_the_judges_card_and_unjudged_skips_what_is_done(db, fake_server):
    runs = await play(db, fake_server, "vendor/x1;tokens=40", "vendor/x2;tokens=40")
    await judge(db, fake_server, runs[:1], model=JUDGE + ";quotes=exact")
    await judge(db, fake_server, runs[:1], model=JUDGE + ";quotes=exact")
    given = annotations(db, runs[0])
    assert len(given["L3"]) == 2 and len(given["T1"]) == 1 and len(given["L1"]) == 13
    path = db.conn.execute("PRAGMA database_list").fetchone()[2]
    base = ["--endpoint", fake_server.base_url, "--db", path, "--reviewer", "judge:test", "--json"]
    proc = sieve("judge", "--scenario", "keykeeper", "--unjudged", "-m", JUDGE + ";quotes=exact", *base)
    assert proc.returncode == 0, proc.stderr
    judged = {r["run"] for r in json.loads(proc.stdout)}
    assert runs[1] in judged and runs[0] not in judged
    again = sieve("judge", "--scenario", "keykeeper", "--unjudged", "-m", JUDGE, *base)
    assert again.returncode == 0 and "judged already" in again.stdout


@pytest.mark.slow
async def test_judgings_run_concurrently_with_a_bar_each(db, fake_server, tmp_path):
    runs = await play(db, fake_server, *(f"vendor/c{i};tokens=30" for i in range(3)))
    path = db.conn.execute("PRAGMA database_list").fetchone()[2]
    model = JUDGE + ";quotes=exact;delay=0.002"
    proc = sieve("judge", *runs, "-m", model, "--endpoint", fake_server.base_url, "--db", path, "--concurrency", "3")
    assert proc.returncode == 0, proc.stderr
    # stderr is a pipe here, where no bar can be redrawn: a line per judging as it ends instead.
    ended = [line for line in proc.stderr.splitlines() if line.startswith("judged ")]
    assert [line.split(":")[0] for line in ended] == ["judged 1 of 3", "judged 2 of 3", "judged 3 of 3"]
    assert {r[-8:] for r in runs} == {line.split(": ")[1].split(" ")[0] for line in ended}
    assert all(line.endswith(": complete") for line in ended) and "━" not in proc.stderr
    # All three were under way at once: each started before any ended.
    rows = [judgings.of_run(db, r)[0] for r in runs]
    assert max(r["started"] for r in rows) < min(r["ended"] for r in rows)
    assert "3 judgings, 66 items scored" in proc.stdout


@pytest.mark.slow
async def test_judging_into_a_file_reports_each_judging_as_it_ends_not_all_at_the_end(db, fake_server):
    runs = await play(db, fake_server, *(f"vendor/f{i};tokens=30" for i in range(3)))
    path = db.conn.execute("PRAGMA database_list").fetchone()[2]
    model = JUDGE + ";quotes=exact;delay=0.003"
    args = ["judge", *runs, "-m", model, "--endpoint", fake_server.base_url, "--db", path, "--concurrency", "1"]
    proc = subprocess.Popen([sys.executable, "-m", "sieve", *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    try:
        first = proc.stderr.readline().decode()
        while first and not first.startswith("judged "):
            first = proc.stderr.readline().decode()
        # One judging ended, two to go: the line came while the work went on, not in a heap at its end.
        assert first.startswith("judged 1 of 3: ") and first.rstrip().endswith(": complete")
        assert proc.poll() is None
        rest = proc.stderr.read().decode()
    finally:
        proc.wait(timeout=120)
    assert proc.returncode == 0
    assert "judged 2 of 3: " in rest and "judged 3 of 3: " in rest


@pytest.mark.slow
def test_bad_input_exits_2_and_stores_nothing(tmp_path):
    path = str(tmp_path / "empty.db")
    proc = sieve("judge", "--db", path, "--endpoint", "http://127.0.0.1:9/v1")
    assert proc.returncode == 2 and "-m" in proc.stderr
    proc = sieve("judge", "nope", "--db", path, "-m", "x", "--endpoint", "http://127.0.0.1:9/v1")
    assert proc.returncode == 2 and "no run with the id nope" in proc.stderr
    proc = sieve("judge", "--unjudged", "--db", path, "-m", "x", "--endpoint", "http://127.0.0.1:9/v1")
    assert proc.returncode == 2 and "--unjudged needs --scenario" in proc.stderr
    assert store.open_db(path).execute("SELECT COUNT(*) FROM judgings").fetchone()[0] == 0


@pytest.mark.slow
async def test_calibration_lists_where_the_judge_and_a_person_differ_most_with_both_quotes(db, fake_server):
    (run,) = await play(db, fake_server, "vendor/calibrated;tokens=40")
    # A judge under a name of its own: still a judge, because its judgings say so.
    await judge(db, fake_server, [run], model=JUDGE + ";quotes=exact", reviewer="opus-judge")
    given = annotations(db, run, "opus-judge")
    scores = {item: given[item][0]["score"] for item in ("T1", "T2", "TB1")}
    score(db, run, "T1", 2 - scores["T1"])
    score(db, run, "T2", scores["T2"])
    score(db, run, "TB1", 1 - scores["TB1"])
    path = db.conn.execute("PRAGMA database_list").fetchone()[2]
    proc = sieve("judge", "--calibration", "--scenario", "keykeeper", "--db", path, "--json")
    rows = json.loads(proc.stdout)
    # T2 agrees, so it is not listed; T1 and TB1 differ by the whole of their scales.
    expected = ["T1", "TB1"] if scores["T1"] != 1 else ["TB1"]
    assert [r["item"] for r in rows] == expected and all(r["difference"] == 1.0 for r in rows)
    first = rows[0]
    assert first["judge"] == "opus-judge" and first["person"] == "ada" and first["difference"] == 1.0
    assert first["judge_quote"] == given[first["item"]][0]["quote"] and first["judge_verdict"] == "exact"
    table = sieve("judge", "--calibration", "--scenario", "keykeeper", "--db", path)
    assert "settle them in Review" in table.stdout and table.returncode == 0
    (figure,) = [
        r
        for r in json.loads(
            sieve(*"results --scenario keykeeper --agreement --format json".split(), "--db", path).stdout
        )
        if r["item"] == "T1"
    ]
    assert figure["judge"] == "opus-judge" and figure["judge_runs"] == 1


def test_a_packet_left_running_by_a_process_that_is_gone_is_failed_when_the_database_opens(db, tmp_path):
    path = db.conn.execute("PRAGMA database_list").fetchone()[2]
    run_id = store.create_run(db, KEYKEEPER, model="vendor/m", endpoint="fake", settings={})
    rows = {}
    for who in ("gone", "alive"):
        rows[who] = judgings.start(
            db, judging=who, kind="card", reviewer="judge:x", model="x", endpoint="fake", packet="p", run_id=run_id
        )
    assert db.execute("SELECT owner FROM judgings WHERE id = ?", [rows["alive"]]).fetchone()[0] == owner_tag()
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    gone = f"{owner_tag().rpartition(':')[0]}:{ended.stdout.strip()}"  # a process that has exited
    db.execute("UPDATE judgings SET owner = ? WHERE id = ?", [gone, rows["gone"]])
    db.conn.commit()
    reopened = store.open_db(path)
    status = dict(reopened.execute("SELECT judging, status FROM judgings").fetchall())
    assert status == {"gone": "failed", "alive": "running"}  # this process still holds the second
    error = reopened.execute("SELECT error FROM judgings WHERE judging = 'gone'").fetchone()[0]
    assert error.startswith("interrupted")


@pytest.mark.slow
async def test_a_judging_whose_every_score_is_unsupported_is_partial_and_each_part_is_reported_as_it_ends(
    db, fake_server
):
    (run,) = await play(db, fake_server, "vendor/the;tokens=40")
    path = db.conn.execute("PRAGMA database_list").fetchone()[2]
    model = JUDGE + ";the=1"  # every quote the single word "the": no score it gives is backed
    done = sieve("judge", run, "-m", model, "--endpoint", fake_server.base_url, "--db", path, "--max-tokens", "1000")
    assert done.returncode == 1, done.stderr  # as for any other partial judging
    assert "every score unsupported: none of its 22 scores rests on a quote that backs it" in done.stdout
    assert db.execute("SELECT DISTINCT status FROM judgings").fetchall() == [("partial",)]
    # stderr is no terminal here: a line when the parts are known, one as each ends, one when the judging does.
    label = f"{run[-8:]} ← judge:{model}"
    (parts,) = re.findall(re.escape(label) + r": (\d+) parts", done.stderr)
    assert int(parts) > 1
    ended = re.findall(re.escape(label) + r": part (\d+) of " + parts + ": complete", done.stderr)
    assert ended == [str(n) for n in range(1, int(parts) + 1)]
    assert done.stderr.index(f"part {parts} of {parts}") < done.stderr.index(f"judged 1 of 1: {label}: partial")
