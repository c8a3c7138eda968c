"""The docs stay true: the generated parts are current, and what the pages name exists.

The generated parts (click's help, each screen's keys, the settings, the detectors, the module map)
are written by cog from docs/reference.py; `cog -r README.md docs/*.md` writes them again.
"""

from __future__ import annotations

import fnmatch
import importlib
import importlib.util
import io
import pkgutil
import re
import shlex
from pathlib import Path

import click

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted(DOCS.glob("*.md"))]
REGENERATE = "cog -r README.md docs/*.md"


def text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def without_code(markdown: str) -> str:
    return re.sub(r"^```.*?^```", "", markdown, flags=re.S | re.M)


def reference():
    """docs/reference.py, the code the cog blocks call."""
    spec = importlib.util.spec_from_file_location("docs_reference", DOCS / "reference.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_generated_parts_are_current():
    from cogapp import Cog

    generated = [p for p in PAGES if "[[[cog" in text(p)]
    names = {str(p.relative_to(ROOT)) for p in generated}
    assert {"README.md", "docs/cli.md", "docs/tui.md", "docs/scenarios.md", "docs/architecture.md"} <= names
    cog, out = Cog(), io.StringIO()
    cog.set_output(stdout=out, stderr=out)
    status = cog.main(["cog", "--check", "--diff", "--verbosity=1", *map(str, generated)])
    assert status == 0, f"{out.getvalue()}\nThe generated parts are stale: run `{REGENERATE}` and commit them."


def test_the_generated_parts_do_not_depend_on_the_terminal(monkeypatch):
    ref = reference()

    def render() -> list[str]:
        return [ref.cli_reference(), ref.key_table("sieve.tui.screens.review:ReviewScreen"), ref.synopsis("run")]

    monkeypatch.setenv("COLUMNS", "300")
    monkeypatch.setenv("FORCE_COLOR", "1")
    wide = render()
    monkeypatch.setenv("COLUMNS", "40")
    monkeypatch.delenv("FORCE_COLOR")
    monkeypatch.setenv("NO_COLOR", "1")
    assert render() == wide
    assert "\x1b" not in "".join(wide)
    assert max(len(line) for line in wide[0].splitlines()) <= ref.WIDTH


def test_the_cli_reference_has_every_command():
    from sieve.cli import main

    page = text(DOCS / "cli.md")

    def paths(command: click.Command, path: tuple[str, ...]):
        yield path
        if isinstance(command, click.Group):
            for name, sub in command.commands.items():
                yield from paths(sub, (*path, name))

    missing = [" ".join(p) for p in paths(main, ("sieve",)) if f"Usage: {' '.join(p)} [OPTIONS]" not in page]
    assert missing == []


def documented_key_tables() -> set[type]:
    """The classes whose BINDINGS the TUI page renders, by the targets its cog blocks name."""
    targets = re.findall(r'keys\("([\w.]+:\w+)"\)', text(DOCS / "tui.md"))
    classes = set()
    for target in targets:
        module, _, name = target.partition(":")
        classes.add(getattr(importlib.import_module(module), name))
    return classes


def classes_with_keys() -> set[type]:
    """Every class of the app that declares BINDINGS of its own: screens, dialogs, widgets, the app."""
    import sieve.tui

    found = set()
    names = ["sieve.tui", *(m.name for m in pkgutil.walk_packages(sieve.tui.__path__, "sieve.tui."))]
    for name in names:
        module = importlib.import_module(name)
        for value in vars(module).values():
            if isinstance(value, type) and value.__module__ == name and vars(value).get("BINDINGS"):
                found.add(value)
    return found


def test_every_screen_dialog_and_widget_with_keys_has_its_table_in_the_tui_page():
    undocumented = sorted(f"{c.__module__}:{c.__name__}" for c in classes_with_keys() - documented_key_tables())
    assert undocumented == [], f"add a keys(...) block for each to docs/tui.md, then run `{REGENERATE}`"


def test_every_binding_is_a_binding_with_an_id_to_remap_it_by():
    from textual.binding import Binding

    missing = []
    for cls in classes_with_keys():
        for binding in cls.BINDINGS:
            if not isinstance(binding, Binding) or not binding.id:
                missing.append(f"{cls.__name__}: {binding}")
    assert missing == []


def shown_commands() -> list[tuple[str, str]]:
    """Every `sieve ...` line of the shell blocks of the README and the docs: (page, command)."""
    found = []
    for page in PAGES:
        for block in re.findall(r"^```sh\n(.*?)^```", text(page), flags=re.S | re.M):
            for line in block.splitlines():
                command = re.split(r"\s+#", line)[0].strip()
                for part in command.split("&&"):
                    if part.strip().startswith("sieve "):
                        found.append((page.name, part.strip()))
    return found


def option_names(command: click.Command) -> set[str]:
    return {name for p in command.params if isinstance(p, click.Option) for name in p.opts + p.secondary_opts}


def problems_with(line: str) -> list[str]:
    """What in a shown command does not exist: a subcommand, or an option the command does not take."""
    from sieve.cli import main

    words = [w.strip("[]") for w in shlex.split(line.replace("|", " "))][1:]
    command: click.Command = main
    problems = []
    for word in words:
        if not word or word == "...":
            continue
        if word.startswith("-"):
            if word.split("=")[0] not in option_names(command) | {"--help"}:
                problems.append(f"{line}: no option {word} of `{command.name}`")
        elif isinstance(command, click.Group):
            sub = command.commands.get(word)
            if sub is None:
                problems.append(f"{line}: no command {word}")
                break
            command = sub
    return problems


def test_the_commands_the_pages_show_exist_with_the_options_they_use():
    shown = shown_commands()
    assert len(shown) > 40
    problems = [p for page, line in shown for p in problems_with(line)]
    assert problems == []


def test_a_command_that_does_not_exist_is_caught():
    assert problems_with("sieve results --no-such-option") and problems_with("sieve frobnicate RUN")
    assert problems_with("sieve scenarios show train --json") == []


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    return {slug(h) for h in re.findall(r"^#+ (.+)$", without_code(text(path)), flags=re.M)}


def test_every_link_leads_to_a_file_and_a_heading_that_exist():
    broken = []
    for page in PAGES:
        for target in re.findall(r"\]\(([^)\s]+)\)", without_code(text(page))):
            if re.match(r"[a-z]+:", target):
                continue  # a web address
            file, _, anchor = target.partition("#")
            path = (page.parent / file).resolve() if file else page
            if not path.exists():
                broken.append(f"{page.name}: {target}")
            elif anchor and path.suffix == ".md" and anchor not in anchors(path):
                broken.append(f"{page.name}: {target} (no such heading)")
    assert broken == []


def layout_paths(page: Path, heading: str) -> list[str]:
    """The paths a layout block names: the first word of each line that does not continue the last."""
    section = ("\n" + text(page)).split(f"\n{heading}\n", 1)[1]
    block = re.search(r"^```\n(.*?)^```", section, flags=re.S | re.M)
    assert block, f"{page.name}: no layout block under {heading}"
    return [line.split()[0] for line in block.group(1).splitlines() if line and not line[0].isspace()]


def top_level_folders() -> set[str]:
    """The checkout's own folders: those .gitignore does not leave out (build/, *.egg-info, caches)."""
    ignored = [p.strip().rstrip("/") for p in text(ROOT / ".gitignore").splitlines() if p.strip()]
    folders = set()
    for path in ROOT.iterdir():
        name = path.name
        if not path.is_dir() or name == ".git" or any(fnmatch.fnmatch(name, p) for p in ignored):
            continue
        if name.startswith(".") and name != ".ci":
            continue  # tools' caches (.ruff_cache, .mypy_cache, ...)
        folders.add(name + "/")
    return folders


def test_the_layouts_name_folders_that_exist_and_the_readme_names_every_one():
    for page, heading in ((ROOT / "README.md", "## Layout"), (DOCS / "architecture.md", "# Architecture")):
        named = layout_paths(page, heading)
        assert [p for p in named if not (ROOT / p).exists()] == [], page.name
    readme = set(layout_paths(ROOT / "README.md", "## Layout"))
    assert top_level_folders() - readme == set()


def test_the_docs_describe_every_detector():
    from sieve.scenarios.detectors import DETECTORS

    judging = text(DOCS / "judging.md")
    assert [d.name for d in DETECTORS if f"| `{d.name}` |" not in judging] == []
