"""Files handed to sieve that never end, or that JSON allows but text does not: one clear line, exit 2, nothing written."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time

import pytest
from click.testing import CliRunner

from sieve import store
from sieve.cli import main
from sieve.files import read_text


def cli(*args, env=None):
    return CliRunner().invoke(main, [str(a) for a in args], env=env)


def sieve(*args, env=None, timeout=60):
    return subprocess.run(
        [sys.executable, "-m", "sieve", *map(str, args)], capture_output=True, text=True, timeout=timeout, env=env
    )


@pytest.mark.parametrize(
    "args,noun",
    [
        (["scenarios", "validate", "/dev/zero"], "a scenario is at most"),
        (["run", "--plan", "/dev/zero"], "a plan is at most"),
    ],
    ids=["scenario", "plan"],
)
@pytest.mark.slow
def test_an_endless_device_is_refused_once_the_limit_is_read(args, noun, tmp_path):
    started = time.monotonic()
    result = sieve(*args, *(["--db", tmp_path / "d.db"] if args[0] == "run" else []))
    assert result.returncode == 2, result.stderr
    assert "/dev/zero" in result.stderr and noun in result.stderr and "Traceback" not in result.stderr
    assert time.monotonic() - started < 30


@pytest.mark.slow
def test_an_endless_chat_or_config_is_refused(tmp_path):
    db_path = tmp_path / "sieve.db"
    store.open_db(db_path).conn.close()
    chat_link = tmp_path / "endless.jsonl"
    chat_link.symlink_to("/dev/zero")
    chat = sieve("import", chat_link, "--scenario", "keykeeper", "--db", db_path)
    assert chat.returncode == 2 and "a chat is at most" in chat.stderr
    assert store.list_runs(store.open_db(db_path)) == []
    env = {**os.environ, "SIEVE_CONFIG": "/dev/zero"}
    play = sieve("run", "train", "-m", "x", "--endpoint", "somewhere", "--db", db_path, env=env)
    assert play.returncode == 2 and "/dev/zero" in play.stderr and "a config file is at most" in play.stderr
    assert "Traceback" not in play.stderr


def test_a_card_from_an_endless_device_is_refused(tmp_path):
    from sieve.store.scoring.cards import CardError, read_card

    with pytest.raises(CardError, match="a card is at most"):
        read_card("/dev/zero")


def test_a_fifo_that_never_ends_is_read_no_further_than_the_limit(tmp_path):
    fifo = tmp_path / "pipe.toml"
    os.mkfifo(fifo)
    stop = threading.Event()

    def endless() -> None:
        try:
            with open(fifo, "wb") as pipe:
                while not stop.is_set():
                    pipe.write(b"# a comment that never ends\n" * 1024)
        except (BrokenPipeError, OSError):
            pass

    writer = threading.Thread(target=endless, daemon=True)
    writer.start()
    try:
        with pytest.raises(Exception, match="a scenario is at most 100,000"):
            read_text(fifo, 100_000, "scenario")
    finally:
        stop.set()
        writer.join(5)


# -- lone surrogates and deep nesting: JSON allows them, text and Python's stack do not ------


def bundle_text(tmp_path) -> dict:
    from tests.test_bundles import populate

    source = tmp_path / "src.db"
    populate(store.open_db(source))
    out = tmp_path / "b.json"
    assert cli("export", "--all", "--db", source, "-o", out).exit_code == 0
    return json.loads(out.read_text())


@pytest.mark.parametrize("damage", ["surrogate", "deep"])
def test_a_bundle_with_a_lone_surrogate_or_deep_nesting_is_refused(tmp_path, damage):
    data = bundle_text(tmp_path)
    bad = tmp_path / "bad.json"
    if damage == "surrogate":
        data["annotations"][0]["note"] = "half \ud800"
        text = json.dumps(data, indent=1)  # ASCII JSON: the surrogate as \ud800
        bad.write_text(text)
        line = text[: text.index("\\ud800")].count("\n") + 1
        col = text.index("\\ud800") - text.rfind("\n", 0, text.index("\\ud800"))
        expected = f"bad.json:{line}:{col}: \\ud800: a lone surrogate"
    else:
        bad.write_text("[" * 100_000 + "]" * 100_000)
        expected = "nested too deeply"
    result = cli("import", bad, "--db", tmp_path / "t.db")
    assert result.exit_code == 2 and expected in result.output, result.output
    assert store.list_runs(store.open_db(tmp_path / "t.db")) == []


@pytest.mark.parametrize("damage", ["surrogate", "deep"])
def test_a_card_with_a_lone_surrogate_or_deep_nesting_is_refused(tmp_path, db, damage):
    from sieve import scenarios

    run_id = store.create_run(db, scenarios.load("keykeeper"), model="m", endpoint="e", settings={})
    card = tmp_path / "card.json"
    if damage == "surrogate":
        card.write_text(json.dumps([{"id": "T1", "score": 1, "quote": "a \udfff b"}]))
        expected = "items[0]: the quote holds a lone surrogate"
    else:
        card.write_text("[" * 100_000 + "]" * 100_000)
        expected = "nested too deeply"
    db_path = tmp_path / "sieve.db"
    db.conn.close()
    result = cli("verify", card, "--run", run_id, "--db", db_path)
    assert result.exit_code == 2 and expected in result.output, result.output


@pytest.mark.parametrize("damage", ["surrogate", "deep"])
def test_a_chat_line_with_a_lone_surrogate_or_deep_nesting_is_named_and_refused_with_strict(tmp_path, damage):
    lines = ['{"user_name": "Ada", "character_name": "Havel"}', '{"name": "Havel", "is_user": false, "mes": "Eat."}']
    lines.append('{"name": "Ada", "is_user": true, "mes": "half \\ud800"}' if damage == "surrogate" else "[" * 100_000)
    chat = tmp_path / "chat.jsonl"
    chat.write_text("\n".join(lines) + "\n")
    result = cli("import", chat, "--scenario", "keykeeper", "--db", tmp_path / "t.db", "--strict")
    expected = "a lone surrogate" if damage == "surrogate" else "arrays or objects nested too deeply"
    assert result.exit_code == 2 and f"chat.jsonl:3:1: {expected}" in result.output, result.output
    assert store.list_runs(store.open_db(tmp_path / "t.db")) == []
    # Without --strict the line is skipped, named, and the good ones kept.
    result = cli("import", chat, "--scenario", "keykeeper", "--db", tmp_path / "t.db")
    assert result.exit_code == 0 and f"chat.jsonl:3: {expected}" in result.stderr, result.output
    (run,) = store.list_runs(store.open_db(tmp_path / "t.db"))
    assert run["replies"] == 1


@pytest.mark.parametrize(
    ("json_text", "refused_at"),
    [
        ('{"a": "\\ud83d\\ude00"}', None),  # a pair escaped: one character, fine
        ('{"a": "\\\\ud800"}', None),  # an escaped backslash, then the letters ud800
        ('{"a":\n  {"\\udfff": 1}}', (2, 5)),  # in a key, where no column check looks
        ('{"x": ["ok", "\\ud800\\u0041"]}', (1, 15)),  # a high half followed by a letter
    ],
)
def test_a_bundle_is_refused_at_the_line_and_column_of_a_lone_surrogate_anywhere(tmp_path, json_text, refused_at):
    from sieve.store.record import bundles

    path = tmp_path / "b.json"
    path.write_text(json_text)
    if refused_at is None:
        assert bundles.read_bundle(path) == json.loads(json_text)
        return
    with pytest.raises(bundles.BundleError) as caught:
        bundles.read_bundle(path)
    line, col = refused_at
    assert f"b.json:{line}:{col}: " in str(caught.value) and "a lone surrogate" in str(caught.value), str(caught.value)
