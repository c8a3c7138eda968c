"""An API key reaches the server's Authorization header and nothing else: not the database, an export, the output."""

from __future__ import annotations

import subprocess
import sys

import pytest

from sieve import store

KEY = "sk-or-v1-SIEVE-FAKE-KEY-0123456789abcdef"


@pytest.mark.slow
def test_the_api_key_is_sent_but_never_stored_exported_or_printed(
    fake_server, tmp_path, monkeypatch, isolated_user_dirs
):
    config = isolated_user_dirs / "config" / "sieve" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(
        f'[endpoints.fake]\nbase_url = "{fake_server.base_url}"\napi_key_env = "SIEVE_TEST_KEY"\n', encoding="utf-8"
    )
    monkeypatch.setenv("SIEVE_TEST_KEY", KEY)
    db_path = tmp_path / "secret.db"
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "sieve",
            "run",
            "train",
            "-m",
            "keyed;tokens=5",
            "-m",
            "careless;echo_auth=1",
            "--endpoint",
            "fake",
            "--db",
            str(db_path),
            "--retry-base",
            "0.01",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 1  # the careless server refuses with a 401
    # The key was really used...
    sent = [r["headers"].get("authorization") for r in fake_server.requests if r["model"] == "keyed;tokens=5"]
    assert sent and set(sent) == {f"Bearer {KEY}"}
    # ...and the careless server's echo of it was scrubbed from the error.
    assert "[api key]" in run.stdout
    assert KEY not in run.stdout and KEY not in run.stderr
    db = store.open_db(db_path)
    runs = store.list_runs(db)
    assert {r["endpoint"] for r in runs} == {"fake"}
    export = subprocess.run(
        [sys.executable, "-m", "sieve", "export", "--all", "--db", str(db_path)], capture_output=True, text=True
    )
    assert export.returncode == 0 and KEY not in export.stdout and "SIEVE_TEST_KEY" in export.stdout
    db.conn.close()
    for path in tmp_path.iterdir():
        if path.name.startswith("secret.db"):
            assert KEY.encode() not in path.read_bytes(), path.name
    assert KEY not in config.read_text()
