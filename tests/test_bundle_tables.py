"""Bundles carry what the later features record: model-played turns, suggestions and their decisions, judgings."""

from __future__ import annotations

import io
import json

import pytest
from rich.console import Console

from sieve import store
from sieve.engine.gateway import Endpoint, Gateway
from sieve.engine.judge import client as client
from sieve.engine.judge import runs as judging
from sieve.engine.session import Session
from sieve.store.record import bundles
from sieve.store.record import suggestions as stored_suggestions
from sieve.store.scoring import suggestions
from sieve.store.scoring.runview import RunView
from tests.support import fakejudge
from tests.support.tui_helpers import FAST_RETRY
from tests.test_judge import play
from tests.test_player import seat


@pytest.fixture(scope="module", autouse=True)
def judge_on_the_server():
    fakejudge.install()


async def test_a_bundle_with_played_turns_suggestions_decisions_and_judgings_round_trips(tmp_path, fake_server):
    db = store.open_db(tmp_path / "a.db")
    (run,) = await play(db, fake_server, "vendor/bundled;tokens=40")
    session = Session.open(db, run, Gateway(Endpoint(fake_server.base_url, name="fake")))
    await session.send_played(seat(fake_server, "bundle-player;tokens=5"))
    view = RunView.open(db, run)
    ids = suggestions.store(db, view)
    assert ids, "the detectors found nothing to suggest in the run"
    suggestions.accept(db, ids[0], "ada", view=view)
    if len(ids) > 1:
        suggestions.reject(db, ids[1], "ada")
    judge = client.Judge(
        Gateway(Endpoint(fake_server.base_url, name="fake")),
        client.judge_settings("judge;reply=judge;quotes=exact", False, {}),
        "judge:bundle",
        128_000,
        retry=FAST_RETRY,
    )
    await judging.judge_runs(db, [(judge, run)], judging.Options(), console=Console(file=io.StringIO()))

    first = bundles.dumps(bundles.export_bundle(db, [run]))
    data = json.loads(first)
    assert any(t["origin"] == "player" for t in data["turns"])
    assert data["suggestions"] and data["suggestion_decisions"] and data["judgings"]

    other = store.open_db(tmp_path / "b.db")
    path = tmp_path / "bundle.json"
    path.write_text(first, encoding="utf-8")
    added = bundles.import_bundle(other, str(path), bundles.read_bundle(path))["added"]
    assert added["suggestions"] == len(data["suggestions"]) and added["judgings"] == len(data["judgings"])
    assert bundles.dumps(bundles.export_bundle(other, [run])) == first  # byte for byte
    again = bundles.import_bundle(other, str(path), bundles.read_bundle(path))["added"]
    assert sum(again.values()) == 0  # twice adds nothing
    # What the decisions mean survives the trip: the accepted one is no longer pending for ada.
    pending = {s["id"] for s in stored_suggestions.pending(other, run, "ada")}
    assert ids[0] not in pending
    assert RunView.open(other, run).card("ada") is not None


async def test_a_decision_about_a_suggestion_that_is_nowhere_is_refused(tmp_path, fake_server):
    db = store.open_db(tmp_path / "a.db")
    (run,) = await play(db, fake_server, "vendor/orphan;tokens=40")
    suggestions.store(db, RunView.open(db, run))
    data = bundles.export_bundle(db, [run])
    data["suggestion_decisions"] = [
        {
            "id": "01K0000000000000000000000Z",
            "suggestion_id": "01K0000000000000000000000Y",
            "reviewer": "ada",
            "decision": "rejected",
            "annotation_id": None,
            "note": None,
            "at": "2026-11-30T12:00:00.000+00:00",
        }
    ]
    path = tmp_path / "bad.json"
    path.write_text(bundles.dumps(data), encoding="utf-8")
    with pytest.raises(bundles.BundleError, match=r"suggestion_decisions\[0\]\.suggestion_id"):
        bundles.import_bundle(store.open_db(tmp_path / "b.db"), str(path), bundles.read_bundle(path))
