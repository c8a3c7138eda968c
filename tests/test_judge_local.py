"""`sieve judge` with the embedded model as the judge, offline: a poor card, but every quote on it verified."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from sieve import scenarios
from sieve.engine.gateway import Endpoint, Gateway
from sieve.engine.local_model import MODEL_NAME
from sieve.engine.session import Session, resolve_settings
from sieve.store.record import judgings
from sieve.store.record.migrations import QUOTE_VERDICTS
from sieve.store.scoring.runview import RunView
from sieve.store.scoring.standing import has_evidence


@pytest.mark.slow
@pytest.mark.embedded
async def test_the_embedded_model_judges_a_keykeeper_run_and_every_quote_has_a_verdict(db, fake_server):
    keykeeper = scenarios.load("keykeeper")
    gateway = Gateway(Endpoint(fake_server.base_url, name="fake"))
    # Message 0 and two steps: the packet still holds the whole rubric, word for word, but a
    # short transcript keeps the 135M judge's reading of it to a minute on two cores.
    session = Session.start(db, keykeeper, gateway, resolve_settings("anthropic/claude-opus-5;tokens=25", keykeeper))
    for _ in range(3):
        await session.send_next()
    await gateway.aclose()
    run = session.run_id
    path = db.conn.execute("PRAGMA database_list").fetchone()[2]
    # No --endpoint: the judge is SmolLM2 on llama.cpp's server, started and stopped by sieve.
    proc = subprocess.run(
        [sys.executable, "-m", "sieve", "judge", run, "--db", path], capture_output=True, text=True, timeout=1500
    )
    assert proc.returncode in (0, 1), proc.stderr  # 1: some item had no usable answer, said so
    assert "Starting the embedded model" in proc.stderr
    summary = proc.stdout.strip().splitlines()[-1]
    assert re.match(
        r"1 judgings, \d+ items scored; quotes: \d+ exact, \d+ fuzzy, \d+ absent, \d+ altered, \d+ short, \d+ player",
        summary,
    )
    parts = judgings.of_run(db, run)
    assert any(p["status"] in ("complete", "partial") for p in parts)
    for part in parts:
        # Structured output the llama.cpp way, and a blind packet; a part that failed says why.
        assert part["settings"]["structured"] == "json_object" and part["model"] == MODEL_NAME
        assert not re.search(r"claude|anthropic|opus", part["packet"], re.I)
        assert part["status"] != "failed" or part["error"]
    given = RunView.open(db, run).annotations(f"judge:{MODEL_NAME}")
    # Every rubric score the judge gave is stored (with evidence or unsupported), or set aside, saying why, when the
    # scenario cannot hold it (a 135M judge may answer off the scale): none vanishes unnamed.
    set_aside = {label for p in parts for label in ((p["outcome"] or {}).get("set_aside") or {})}
    assert any(a["kind"] == "score" for a in given) or any(re.fullmatch(r"[TR]\d+", label) for label in set_aside)
    for a in given:
        if a["quote"] is not None:
            assert a["verification"] in QUOTE_VERDICTS
        if not has_evidence(a) and a["kind"] in ("score", "count", "verdict", "probe"):
            assert a["confidence"] == "low"
