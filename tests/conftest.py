"""Fixtures shared by the whole suite, and the order its tests are handed to pytest-xdist's workers."""

from __future__ import annotations

import importlib.util
import os
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


@pytest.fixture(scope="session")
def local_model():
    """The embedded model on its default server (xllamacpp), started once per process (once per xdist worker).

    A server starts in about a second and, with one thread, serves one worker's requests at the
    speed of a core, so one per worker costs less than sharing one across workers would, and it
    dies with its worker: nothing outlives the run.
    """
    from sieve.engine.local_model import LocalModel

    model = LocalModel(server="xllamacpp")
    model.start()
    yield model
    model.stop()


@pytest.fixture(scope="session")
def fallback_model():
    """The embedded model on the fallback server, llama-cpp-python, where it is installed (it compiles)."""
    from sieve.engine.local_model import LocalModel

    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama-cpp-python is not installed (the fallback extra: pip install -e '.[local-llama-cpp]')")
    model = LocalModel(server="llama-cpp-python")
    model.start()
    yield model
    model.stop()


def pytest_configure(config):
    # Under xdist a worker is handed a quarter of its share at once by default: some 90 tests would
    # wait behind the embedded judge's minutes. One at a time, the others take them meanwhile.
    if config.pluginmanager.hasplugin("xdist") and config.getoption("maxschedchunk") is None:
        config.option.maxschedchunk = 1


def pytest_collection_modifyitems(config, items):
    """Under xdist, the tests that start the embedded model first (the judge's, the longest, leads),
    then the other slow ones: the long tests start early instead of being left to run alone at the end.

    Every worker collects and sorts alike (the sort is stable), as xdist requires."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        items.sort(key=lambda item: (not item.get_closest_marker("embedded"), not item.get_closest_marker("slow")))


# The quick run (`-m "not slow"`) stays under 40 s only while every test of seconds is marked slow: a test not
# marked that takes longer than this is named at the end of the session, for its author to mark.
QUICK_LIMIT = 1.0
_UNMARKED: list[tuple[str, float]] = []


def pytest_runtest_logreport(report):
    if report.when == "call" and report.duration > QUICK_LIMIT and "slow" not in report.keywords:
        _UNMARKED.append((report.nodeid, report.duration))


def pytest_terminal_summary(terminalreporter):
    if _UNMARKED:
        terminalreporter.write_sep("-", f"not marked slow, yet over {QUICK_LIMIT:g} s: mark them @pytest.mark.slow")
        for nodeid, seconds in sorted(_UNMARKED, key=lambda u: -u[1]):
            terminalreporter.write_line(f"{seconds:6.2f} s  {nodeid}")


@pytest.fixture
def db(tmp_path):
    from sieve import store

    return store.open_db(tmp_path / "sieve.db")
