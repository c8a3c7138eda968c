"""`--db` and `--reviewer` work wherever they are written: `sieve --db F CMD` and `sieve CMD --db F` do the same."""

from __future__ import annotations

import json

import click
import pytest
from click.testing import CliRunner

from sieve import scenarios, store
from sieve.cli import main
from sieve.store.record import turns as record

# The arguments each command needs to parse (nothing is run): every command with a --db is here.
ARGS = {
    "play": ["keykeeper"],
    "review": ["RUN"],
    "pair": ["RUN1", "RUN2"],
    "run": ["keykeeper"],
    "runs": [],
    "search": ["coin"],
    "export": ["RUN"],
    "import": ["IMPORT"],
    "results": [],
    "compare": ["--scenario", "keykeeper", "--a", "x", "--b", "y"],
    "verify": ["--run", "RUN"],
    "suggest": ["RUN"],
    "judge": ["RUN"],
    "report": ["--scenario", "keykeeper"],
}


def commands(group: click.Group = main, prefix: tuple[str, ...] = ()):
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            yield from commands(command, (*prefix, name))
        else:
            yield " ".join((*prefix, name)), command


def parsed(args: list[str], tmp_path) -> dict:
    """The parameters a command gets from `sieve ARGS` (parsed, callbacks run, nothing invoked)."""
    args = [str(tmp_path / "chat.json") if a == "IMPORT" else a for a in args]
    with main.make_context("sieve", list(args)) as root:
        # click 8.2 keeps the command name apart (protected), click 9 will not.
        name, command, rest = main.resolve_command(root, [*getattr(root, "_protected_args", []), *root.args])
        with command.make_context(name, rest, parent=root) as ctx:
            return ctx.params


def test_every_command_with_a_db_is_listed_here():
    with_db = {name for name, command in commands() if any(p.name == "db_path" for p in command.params)}
    assert with_db == set(ARGS)


@pytest.mark.parametrize("name", sorted(ARGS))
def test_db_and_reviewer_before_the_command_are_the_commands_own(name, tmp_path, monkeypatch):
    monkeypatch.setenv("SIEVE_DB", str(tmp_path / "from-env.db"))  # the group's --db wins over the environment
    (tmp_path / "chat.json").write_text("{}")
    db = str(tmp_path / "f.db")
    command = dict(commands())[name]
    takes_reviewer = any(p.name == "reviewer" for p in command.params)
    reviewer = ["--reviewer", "ada"] if takes_reviewer else []
    before = parsed(["--db", db, *reviewer, name, *ARGS[name]], tmp_path)
    after = parsed([name, *ARGS[name], "--db", db, *reviewer], tmp_path)
    assert before == after and before["db_path"] == db
    assert before.get("reviewer") == ("ada" if takes_reviewer else None)
    # Both, the same: fine; different: refused, naming both.
    assert parsed(["--db", db, name, *ARGS[name], "--db", db], tmp_path)["db_path"] == db
    result = CliRunner().invoke(main, ["--db", db, name, *ARGS[name], "--db", str(tmp_path / "other.db")])
    assert result.exit_code == 2 and "--db given twice" in result.output and "other.db" in result.output
    if takes_reviewer:
        result = CliRunner().invoke(main, ["--reviewer", "ada", name, *ARGS[name], "--reviewer", "bob"])
        assert result.exit_code == 2 and "--reviewer given twice" in result.output


def test_import_runs_results_search_and_export_use_the_file_named_before_or_after(tmp_path, monkeypatch):
    monkeypatch.setenv("SIEVE_DB", str(tmp_path / "default.db"))
    source = tmp_path / "source.db"
    db = store.open_db(source)
    keykeeper = scenarios.load("keykeeper")
    run_id = store.create_run(db, keykeeper, model="vendor/m", endpoint="e", settings={})
    record.add_turn(db, run_id, idx=0, role="user", origin="setup", text=keykeeper.steps[0].text, step_id="m0")
    record.add_turn(db, run_id, idx=1, role="assistant", origin="reply", text="Havel keeps the minci in his hand.")
    record.set_run_status(db, run_id, "complete")
    bundle = tmp_path / "bundle.json"
    assert CliRunner().invoke(main, ["export", run_id, "--db", str(source), "-o", str(bundle)]).exit_code == 0
    outputs = []
    for where in ("before", "after"):
        target = str(tmp_path / f"{where}.db")

        def sieve(*args: str, target: str = target, where: str = where):
            line = ["--db", target, *args] if where == "before" else [*args, "--db", target]
            result = CliRunner().invoke(main, line)
            assert result.exit_code == 0, (line, result.output)
            return result.output

        sieve("import", str(bundle))
        outputs.append(
            [
                json.loads(sieve("runs", "--json")),
                sieve("results", "--scenario", "keykeeper"),
                json.loads(sieve("search", "minci", "--json")),
                json.loads(sieve("export", run_id, "--format", "json"))["runs"][0]["id"],
            ]
        )
    assert outputs[0] == outputs[1] and [r["id"] for r in outputs[0][0]] == [run_id]
    assert not (tmp_path / "default.db").exists()  # nothing went to the default file
