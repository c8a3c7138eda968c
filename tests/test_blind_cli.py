"""A reviewer who reviews blind only (`[reviewer] blind = true`) at the command line (issue 25 §4): every command
and every error speaks in codes. Each command is run as that reviewer, and what it prints (and writes) is searched
for the models, makers, providers, endpoints, dates, costs and ids the database holds."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from sieve.cli import main
from sieve.engine.config import config_path
from sieve.store.record import annotations as notes
from sieve.store.record import pairs as pairing
from sieve.store.scoring import blind as blinding
from sieve.store.scoring.labels import money
from tests.support import fakejudge
from tests.support.field_helpers import TRAIN_ITEMS, played_run, score_all, unlike_runs
from tests.support.scores import score

CHAT = Path(__file__).parent / "data" / "chats" / "tavernai-2023.jsonl"
ENDPOINT = "https://sekrit-gateway.example/api/v1"
MODELS = ("acme/sekrit-falcon-7", "acme/sekrit-heron-2", "umbra/nightjar-9")
JUDGE = "judge;reply=judge;quotes=exact"


def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def write_config(text: str) -> None:
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.fixture(scope="module", autouse=True)
def judge_on_the_server():
    fakejudge.install()


@pytest.fixture
def field(db, tmp_path):
    """Runs whose models, endpoint, provider, dates and cost are all their own, with cards, a judge's card, a
    pair queue, a bundle of one run (exported before the reviewer goes blind) and a chat imported."""
    runs = []
    for n, model in enumerate(MODELS):
        maker, name = model.split("/")
        reply = f"I am {name.split('-')[0].title()}, made by {maker.title()}. Viktor nods and takes the parcel {n}."
        runs.append(
            played_run(
                db,
                model=model,
                endpoint=ENDPOINT,
                provider="SekritCloud",
                started=f"2031-05-1{n}T09:12:3{n}Z",
                cost=0.0173 + n,
                reply=reply,
            )
        )
    for run in runs:
        score_all(db, run, "ada")
        for item in TRAIN_ITEMS[:3]:
            score(db, run, item, 0.5, reviewer="judge:other/wise-owl")
    notes.add(db, runs[0], reviewer="bob", item="T3", kind="score", rubric="key", score=1)
    queue = pairing.create_queue(db, [(runs[0], runs[1])], 1, 0, {})
    path = db.conn.execute("PRAGMA database_list").fetchone()[2]
    bundle = tmp_path / "one.json"
    assert cli("export", runs[2], "-o", bundle, "--db", path).exit_code == 0
    card = tmp_path / "card.json"
    card.write_text(json.dumps([{"item": "T3", "score": 1, "quote": "Viktor nods and takes the parcel", "turn": 1}]))
    imported = cli("import", CHAT, "--scenario", "keykeeper", "-m", "acme/sekrit-owl", "--db", path, "--json")
    assert imported.exit_code == 0, imported.output
    runs.append(json.loads(imported.output)["run"])
    return {"db": db, "path": path, "runs": runs, "queue": queue, "bundle": bundle, "card": card}


def identities(db) -> list[str]:
    """Everything that says which run is which, as it stands in the database."""
    found = {"SekritCloud", "sekrit", "falcon", "heron", "nightjar", "umbra", "acme", "Acme", "sekrit-gateway"}
    for model, endpoint, started, ended, cost in db.execute("SELECT model, endpoint, started, ended, cost FROM runs"):
        found |= {model, endpoint, started[:10], (ended or started)[:10], money(cost)}
    for (created,) in db.execute("SELECT DISTINCT substr(created, 1, 10) FROM turns"):
        found.add(created)
    for (run_id,) in db.execute("SELECT id FROM runs"):
        found |= {run_id, run_id[-8:]}
    for (turn_id,) in db.execute("SELECT id FROM turns"):
        found.add(turn_id)
    return sorted(f for f in found if f and f != "-")


def leaks(output: str, forbidden: list[str]) -> list[str]:
    low = output.lower()
    return [f for f in forbidden if f.lower() in low]


def commands(f, fake_url: str, tmp_path: Path) -> list[tuple[str, list, int | None]]:
    """(what, the arguments, the exit status expected or None for any) of every command, as the reviewer runs it."""
    db, runs = f["db"], f["runs"]
    code = blinding.code(db, runs[0], "ada")
    other = blinding.code(db, runs[1], "ada")
    ambiguous = runs[0][:6]  # the ids of runs made in the same hour share their start
    return [
        ("runs", ["runs"], 0),
        ("runs --json", ["runs", "--json"], 0),
        ("scenarios", ["scenarios", "list"], 0),
        ("search", ["search", "Viktor"], 0),
        ("search json", ["search", "Viktor", "--json"], 0),
        ("search a masked name", ["search", "sekrit", "--json"], 0),
        ("search a run", ["search", "parcel", "--run", code, "--json"], 0),
        ("results", ["results", "--scenario", "train"], 0),
        ("results json", ["results", "--scenario", "train", "--format", "json"], 0),
        ("results csv", ["results", "--scenario", "train", "--format", "csv"], 0),
        ("results md", ["results", "--scenario", "train", "--format", "md"], 0),
        ("results all cards", ["results", "--scenario", "train", "--format", "csv", "--all"], 2),
        ("results judges", ["results", "--scenario", "train", "--format", "md", "--judges"], 2),
        ("results agreement", ["results", "--scenario", "train", "--agreement"], 0),
        ("results reviewers", ["results", "--scenario", "train", "--reviewers"], 0),
        ("results detectors", ["results", "--detectors"], 0),
        ("results ratings", ["results", "--scenario", "train", "--ratings"], 2),
        ("results by model", ["results", "--scenario", "train", "--by", "model"], 2),
        ("export md", ["export", code, "--format", "md"], 0),
        ("export all md", ["export", "--all", "--format", "md"], 0),
        ("export md to a file", ["export", code, "--format", "md", "-o", tmp_path / "out.md"], 0),
        ("export json", ["export", code], 2),
        ("export all json", ["export", "--all"], 2),
        ("import bundle", ["import", f["bundle"]], 0),
        ("import bundle json", ["import", f["bundle"], "--json"], 0),
        ("verify", ["verify", "--run", code], None),
        ("verify json", ["verify", "--run", code, "--json"], None),
        ("verify a card", ["verify", f["card"], "--run", code, "--json"], None),
        ("suggest", ["suggest", code], 0),
        ("suggest json", ["suggest", code, other, "--json"], 0),
        ("suggest scenario", ["suggest", "--scenario", "train"], 0),
        ("suggest scenario json", ["suggest", "--scenario", "keykeeper", "--json"], 0),
        ("judge", ["judge", code, "-m", JUDGE, "--endpoint", fake_url, "--retry-base", "0.01"], None),
        ("judge json", ["judge", other, "-m", JUDGE, "--endpoint", fake_url, "--json", "--retry-base", "0.01"], None),
        ("judge pairs", ["judge", "--pairs", f["queue"], "-m", JUDGE, "--endpoint", fake_url, "--json"], None),
        ("judge again", ["judge", code, "--again", "-m", JUDGE, "--endpoint", fake_url, "--retry-base", "0.01"], None),
        ("judge dry run", ["judge", code, "-m", JUDGE, "--endpoint", fake_url, "--dry-run"], 0),
        ("judge dry run json", ["judge", other, "-m", JUDGE, "--endpoint", fake_url, "--dry-run", "--json"], None),
        ("results judge report", ["results", "--scenario", "train", "--judge-report"], 2),
        ("results judge report json", ["results", "--scenario", "train", "--judge-report", "--format", "json"], None),
        ("judge calibration", ["judge", "--calibration", "--scenario", "train"], 0),
        ("judge calibration json", ["judge", "--calibration", "--scenario", "train", "--json"], 0),
        ("judge not blind", ["judge", code, "-m", JUDGE, "--endpoint", fake_url, "--not-blind"], 2),
        ("compare", ["compare", "--scenario", "train", "--a", MODELS[0], "--b", MODELS[1]], 2),
        ("pair summary", ["pair", "--queue", f["queue"], "--summary"], 2),
        ("pair by model", ["pair", "--scenario", "train", "--model", MODELS[0], "--model", MODELS[1]], 2),
        ("report", ["report", "--scenario", "train", "-o", tmp_path / "site"], 2),
        ("run", ["run", "train", "-m", "acme/sekrit-falcon-7", "--endpoint", fake_url], 2),
        ("play", ["play", "train", "-m", "acme/sekrit-falcon-7"], 2),
        ("review without --blind", ["review", code], 2),
        # Unknown and ambiguous runs are answered in codes, never with a list of runs.
        ("review unknown", ["review", "run-F4B9C0", "--blind"], 2),
        ("export unknown", ["export", "run-F4B9C0", "--format", "md"], 2),
        ("export ambiguous", ["export", ambiguous, "--format", "md"], 2),
        ("suggest unknown", ["suggest", "01ZZZZZZ"], 2),
        ("verify unknown", ["verify", "--run", "run-000000"], 2),
        ("judge unknown", ["judge", "run-F4B9C0", "-m", JUDGE, "--endpoint", fake_url], 2),
        ("pair unknown", ["pair", code, "run-F4B9C0"], 2),
    ]


@pytest.mark.slow
def test_every_command_speaks_to_a_blind_reviewer_in_codes(field, fake_server, tmp_path):
    forbidden = identities(field["db"])
    write_config('[reviewer]\nname = "ada"\nblind = true\n')
    found = {}
    for what, args, status in commands(field, fake_server.base_url, tmp_path):
        result = cli("--db", field["path"], *args)
        shown = result.output
        if isinstance(result.exception, Exception) and not isinstance(result.exception, SystemExit):
            raise AssertionError(f"{what}: {result.exception!r}") from result.exception
        if status is not None:
            assert result.exit_code == status, f"{what}: exit {result.exit_code}: {shown}"
        if status == 2:
            said = ("reviews blind only", "names no one run", "none of your runs has the code")
            assert any(words in shown for words in said), f"{what}: {shown}"
        found[what] = leaks(shown, forbidden)
    written = (tmp_path / "out.md").read_text(encoding="utf-8")
    found["export md to a file (the file)"] = leaks(written, forbidden)
    assert not (tmp_path / "site").exists()
    assert {what: leaked for what, leaked in found.items() if leaked} == {}


def test_a_blind_reviewer_names_runs_by_their_codes_and_sees_them_masked(field):
    db, runs = field["db"], field["runs"]
    write_config('[reviewer]\nname = "ada"\nblind = true\n')
    code = blinding.code(db, runs[0], "ada")
    shown = cli("export", code.lower().removeprefix("run-"), "--format", "md", "--db", field["path"])
    assert shown.exit_code == 0 and f"- run: {code} (blind" in shown.output
    assert "I am ▒▒▒▒▒▒, made by ▒▒▒▒. Viktor nods" in shown.output
    # The runs of --all come in the reviewer's own order, not the order they were played in.
    every = cli("export", "--all", "--format", "md", "--db", field["path"]).output
    listed = re.findall(r"^- run: (run-[0-9A-F]{6})", every, re.M)
    assert listed == [blinding.code(db, r, "ada") for r in blinding.shuffled(db, runs, "ada")]
    unknown = cli("export", "run-F4B9C0", "--format", "md", "--db", field["path"])
    assert "none of your runs has the code run-F4B9C0 (`sieve runs` lists your codes)" in unknown.output


def test_a_reviewer_who_is_not_blind_still_sees_ids_and_models(field):
    runs = field["runs"]
    write_config('[reviewer]\nname = "ada"\n')
    unknown = cli("export", "run-F4B9C0", "--format", "md", "--db", field["path"])
    assert unknown.exit_code == 2 and "the latest runs" in unknown.output and "sekrit" in unknown.output
    shown = cli("suggest", runs[0][-8:], "--json", "--db", field["path"])
    assert json.loads(shown.output)[0]["model"] == MODELS[0]


def test_search_speaks_to_a_blind_reviewer_in_codes(field):
    forbidden = identities(field["db"])
    write_config('[reviewer]\nname = "ada"\nblind = true\n')
    found = {}
    for args in (["search", "Viktor"], ["search", "Viktor", "--json"], ["search", "sekrit"], ["search", "Acme"]):
        result = cli(*args, "--db", field["path"])
        found[" ".join(args)] = leaks(result.output, forbidden)
    assert {what: leaked for what, leaked in found.items() if leaked} == {}
    assert cli("search", "sekrit", "--json", "--db", field["path"]).output.strip() == "[]"  # masked as shown


def test_blind_lists_tell_runs_apart_by_nothing_but_the_code_and_show_only_the_reviewers_own_cards(db):
    """QA: `sieve runs` and `sieve results` still showed a blind reviewer each run's status, kind, replies and
    extreme flag, and other reviewers' scores. Three runs as unlike as they get, scored alike by ada: every row
    of every list is the same once its code is taken out."""
    runs = unlike_runs(db)
    path = db.conn.execute("PRAGMA database_list").fetchone()[2]
    codes = [blinding.code(db, r, "ada") for r in runs]
    write_config('[reviewer]\nname = "ada"\nblind = true\n')

    def uncoded(text: str) -> str:
        for code in codes:
            text = text.replace(code, "CODE")
        return text

    listings = {
        "runs": ["runs"],
        "runs json": ["runs", "--json"],
        **{f"results {fmt}": ["results", "--scenario", "train", "--format", fmt] for fmt in ("table", "csv", "md")},
        "results json": ["results", "--scenario", "train", "--format", "json"],
    }
    for what, args in listings.items():
        result = cli(*args, "--db", path)
        assert result.exit_code == 0, f"{what}: {result.output}"
        shown = result.stdout
        assert all(code in shown for code in codes), f"{what}: {shown}"
        if "json" in what:
            rows = [json.dumps(row, sort_keys=True) for row in json.loads(uncoded(shown))]
        else:
            rows = [line for line in uncoded(shown).splitlines() if "CODE" in line]
        assert len(rows) == 3 and len(set(rows)) == 1, f"{what} tells the runs apart:\n{shown}"
        for told in ("interrupted", "complete", "live", "scripted", "filtered", "extreme", "bob", "judge", "0.5"):
            assert told not in shown.replace("vendor", ""), f"{what}: {told!r} in\n{shown}"
    # ada's own totals and progress are there, the same for each: T3–T5 = 1 of eight traps.
    assert "key 3 / 8 (partial)" in cli("runs", "--db", path).stdout
    table = cli("results", "--scenario", "train", "--format", "json", "--db", path)
    assert {row["key"] for row in json.loads(table.stdout)} == {"3 (partial)"}
    # Another's cards, or a kind of run to pick out, are refused, saying why.
    for option in (["--judges"], ["--all"], ["--kind", "live"], ["--reviewer", "bob"]):
        refused = cli("results", "--scenario", "train", *option, "--db", path)
        assert refused.exit_code == 2 and "reviews blind only" in refused.output, (option, refused.output)


def test_a_blind_reviewer_names_a_run_by_its_code_and_never_by_its_id(field, fake_server):
    """QA: `sieve export <full id> --format md` answered `run: run-24C841`, mapping an id to its code. Every way a
    run is named refuses an id, whole or in part, in the same words whether or not a run has it."""
    db, runs, path = field["db"], field["runs"], field["path"]
    write_config('[reviewer]\nname = "ada"\nblind = true\n')
    code = blinding.code(db, runs[0], "ada")
    named = {"whole id": runs[0], "short id": runs[0][-8:], "prefix": runs[0][:10], "unknown id": "01" + "Z" * 24}
    said = set()
    for what, given in named.items():
        for args in (
            ["export", given, "--format", "md"],
            ["review", given, "--blind"],
            ["suggest", given],
            ["verify", "--run", given],
            ["search", "Viktor", "--run", given],
            ["judge", given, "-m", JUDGE, "--endpoint", fake_server.base_url],
        ):
            result = cli(*args, "--db", path)
            assert result.exit_code == 2, f"{what} {args[0]}: {result.output}"
            assert code not in result.output and given not in result.output
            said.add(result.output)
    assert len(said) == 1 and "reviews blind only, so name a run by your code" in said.pop()
    # A code-shaped text that is no code of theirs is not looked up as an id either.
    unknown = cli("export", "0123AB", "--format", "md", "--db", path)
    assert unknown.exit_code == 2 and "none of your runs has the code" in unknown.output
    shown = cli("export", code, "--format", "md", "--db", path)
    assert shown.exit_code == 0 and f"- run: {code} (blind" in shown.output
