"""Fixtures shared by the whole suite."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
VENDORED_SEEDS = ROOT / "tests" / "seeds"
SHARED_SEEDS = ROOT.parent / "shared" / "seeds"


@pytest.fixture(autouse=True)
def isolated_user_dirs(tmp_path_factory, monkeypatch):
    """Keep a developer's own database and config out of every test."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("XDG_DATA_HOME", str(home / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    monkeypatch.delenv("SIEVE_DB", raising=False)
    return home


@pytest.fixture(scope="session")
def seeds_dir() -> Path:
    """The seeds the scenario files must match: ../shared/seeds where it is, else the copy in tests/seeds."""
    return SHARED_SEEDS if SHARED_SEEDS.is_dir() else VENDORED_SEEDS


@pytest.fixture(scope="session")
def fake_server():
    """The misbehaving streaming server on 127.0.0.1, shared by the whole run."""
    from tests.support.fakeserver import FakeServer

    server = FakeServer().start()
    yield server
    server.stop()


@pytest.fixture
def db(tmp_path):
    from sieve import store

    return store.open_db(tmp_path / "sieve.db")
