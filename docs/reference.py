"""The generated parts of the docs: click's help for every command, each screen's keys, the tables of settings.

The Markdown files call these from cog blocks (`cog -r README.md docs/*.md` writes them again;
tests/test_docs.py fails while any is stale). Everything here is a function of the code alone:
the help is laid out at a fixed width and never coloured, so the output does not depend on the
terminal, the environment or the machine of whoever runs it.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Iterator
from typing import Any

import click

WIDTH = 100  # the width click lays the help out at, whatever the terminal


def cli_reference(heading: str = "###") -> str:
    """Every command's `--help`, the group first, then its commands in order, each under a heading."""
    from sieve.cli import main

    parts = []
    for path, command, ctx in _commands(main):
        name = " ".join(path)
        parts.append(f"{heading} `{name}`\n\n```text\n{command.get_help(ctx).rstrip()}\n```\n")
    return "\n".join(parts)


def synopsis(*path: str) -> str:
    """One command's usage with every option spelled out: `sieve play SCENARIO [-m MODEL] ...`."""
    from sieve.cli import main

    for found, command, _ctx in _commands(main):
        if found == ("sieve", *path):
            words = [" ".join(found)]
            words += [p.human_readable_name for p in command.params if isinstance(p, click.Argument)]
            for param in command.params:
                if isinstance(param, click.Option) and not param.hidden and param.name != "help":
                    words.append(f"[{_option_words(param)}]")
            return _wrap(words, WIDTH) + "\n"
    raise LookupError(f"no command sieve {' '.join(path)}")


def key_table(target: str) -> str:
    """The keys of a screen (or dialog, or widget) from its BINDINGS, as a Markdown table.

    `target` is `module:Class`, e.g. `sieve.tui.screens.home:HomeScreen`. A key's id is the name
    to remap it by in the config file's `[keys]`; "footer" is its label there, empty when the
    footer does not show it.
    """
    rows = ["| key | id | footer | what it does |", "|---|---|---|---|"]
    for binding in bindings(target):
        keys = " ".join(f"`{_key_name(k)}`" for k in binding.key.split(","))
        footer = binding.description if binding.show else ""
        does = binding.tooltip or binding.description
        rows.append(f"| {keys} | `{binding.id}` | {_cell(footer)} | {_cell(does)} |")
    return "\n".join(rows) + "\n"


def first_keys(ids: Iterable[str], screens: dict[str, str]) -> str:
    """A short table of the keys named by id, looked up in `screens` (label: target): where, key, what it does."""
    found = {}
    for name, target in screens.items():
        for binding in bindings(target):
            found.setdefault(binding.id, (name, binding))
    rows = ["| where | key | what it does |", "|---|---|---|"]
    for binding_id in ids:
        name, binding = found[binding_id]
        keys = " ".join(f"`{_key_name(k)}`" for k in binding.key.split(","))
        rows.append(f"| {name} | {keys} | {_cell(binding.tooltip or binding.description)} |")
    return "\n".join(rows) + "\n"


def settings_table() -> str:
    """The request settings (a scenario's `[settings]`, a plan's, the options), with their types and ranges."""
    from sieve.scenarios.settings import SETTINGS

    rows = ["| setting | option | value | what it sets |", "|---|---|---|---|"]
    for s in SETTINGS:
        if s.choices:
            value = " \\| ".join(f'`"{c}"`' for c in s.choices)
        else:
            noun = "a whole number" if s.kind is int else "a number"
            low = f"above {_num(s.minimum)}, up" if s.above_minimum else f"from {_num(s.minimum)}"
            value = f"{noun} {low} to {_num(s.maximum)}"
        option = "--" + s.name.replace("_", "-")
        rows.append(f"| `{s.name}` | `{option}` | {value} | {_cell(s.help)} |")
    return "\n".join(rows) + "\n"


def detector_table() -> str:
    """Each detector a scenario may name: the counters it feeds and its parameters with their defaults."""
    from sieve.scenarios.detectors import DETECTORS

    rows = ["| detector | feeds | parameter | default | allowed | what it sets |", "|---|---|---|---|---|---|"]
    for spec in DETECTORS:
        feeds = ", ".join(spec.feeds) + " counters"
        for i, p in enumerate(spec.params):
            first = (f"`{spec.name}`", feeds) if i == 0 else ("", "")
            rows.append(f"| {first[0]} | {first[1]} | `{p.name}` | `{_toml(p.default)}` | {_allowed(p)} | {p.help} |")
    return "\n".join(rows) + "\n"


def module_map() -> str:
    """Every module of the package, folder by folder, each with the first line of its docstring."""
    import pkgutil

    import sieve

    names = ["sieve", *(m.name for m in pkgutil.walk_packages(sieve.__path__, "sieve."))]
    by_folder: dict[str, list[tuple[str, str]]] = {}
    for name in sorted(set(names) - {"sieve.__main__"}):
        module = importlib.import_module(name)
        path = _source_path(name, is_package=hasattr(module, "__path__"))
        folder, _, file = path.rpartition("/")
        first = " ".join((module.__doc__ or "").strip().split("\n\n")[0].split())
        if first or file != "__init__.py":
            by_folder.setdefault(folder + "/", []).append((file, first))
    parts = []
    for folder in sorted(by_folder, key=_folder_order):
        rows = [f"| `{folder}` | |", "|---|---|"]
        rows += [f"| `{file}` | {_cell(doc)} |" for file, doc in by_folder[folder]]
        parts.append("\n".join(rows) + "\n")
    return "\n".join(parts)


def bindings(target: str) -> list[Any]:
    """The Binding objects a class declares in its own BINDINGS, in order."""
    from textual.binding import Binding

    module, _, name = target.partition(":")
    cls = getattr(importlib.import_module(module), name)
    return [b for b in cls.BINDINGS if isinstance(b, Binding)]


# -- helpers -------------------------------------------------------------------------------------


def _commands(
    command: click.Command, path: tuple[str, ...] = ("sieve",), parent: click.Context | None = None
) -> Iterator[tuple[tuple[str, ...], click.Command, click.Context]]:
    ctx = click.Context(
        command, info_name=path[-1], parent=parent, terminal_width=WIDTH, max_content_width=WIDTH, color=False
    )
    yield path, command, ctx
    if isinstance(command, click.Group):
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is not None and not sub.hidden:
                yield from _commands(sub, (*path, name), ctx)


def _option_words(option: click.Option) -> str:
    name = min(option.opts, key=len) if len(option.opts) > 1 else option.opts[0]
    if option.is_flag:
        return " | ".join(option.opts + option.secondary_opts) if option.secondary_opts else name
    kind = option.type
    if isinstance(kind, click.Choice):
        value = "|".join(str(c) for c in kind.choices)
    elif isinstance(kind, (click.IntRange,)) or kind is click.INT:
        value = "N"
    elif isinstance(kind, (click.FloatRange,)) or kind is click.FLOAT:
        value = "X"
    elif isinstance(kind, (click.Path, click.File)):
        value = "FILE"
    else:
        value = max(option.opts, key=len).lstrip("-").upper()
    value = option.metavar or value
    more = "..." if option.multiple else ""
    return f"{name} {value}{more}"


def _wrap(words: list[str], width: int) -> str:
    lines, line = [], ""
    for word in words:
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = "    " + word
        else:
            line = f"{line} {word}" if line else word
    return "\n".join([*lines, line])


def _source_path(name: str, is_package: bool) -> str:
    """`sieve.tui.screens.home` -> `sieve/tui/screens/home.py`: the folders are laid out as the package installs."""
    base = name.replace(".", "/")
    return f"{base}/__init__.py" if is_package else f"{base}.py"


def _folder_order(folder: str) -> tuple[int, str]:
    # The layers from the bottom up, as the contract in pyproject.toml lists them from the top down.
    order = [
        "sieve/",
        "sieve/scenarios/",
        "sieve/store/",
        "sieve/store/record/",
        "sieve/store/scoring/",
        "sieve/engine/",
        "sieve/report/",
        "sieve/tui/",
        "sieve/cli/",
    ]
    rank = max(i for i, f in enumerate(order) if folder.startswith(f))
    return rank, folder


# Keys whose Textual names are not what a person types.
_KEY_NAMES = {
    "left_square_bracket": "[",
    "right_square_bracket": "]",
    "slash": "/",
    "full_stop": ".",
    "greater_than_sign": ">",
}


def _key_name(key: str) -> str:
    return _KEY_NAMES.get(key.strip(), key.strip())


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _num(value: float | None) -> str:
    if value is None:
        return "any"
    if abs(value) >= 2**62:
        return "−2⁶³" if value < 0 else "2⁶³ − 1"
    return f"{int(value):,}" if value == int(value) else str(value)


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, list):
        return "[" + ", ".join(f'"{v}"' for v in value) + "]"
    if isinstance(value, float) and value == int(value):
        return f"{value:.1f}"
    return str(value)


def _allowed(p: Any) -> str:
    if p.kind == "bool":
        return "true, false"
    if p.kind == "choices":
        return ", ".join(f"`{c}`" for c in p.choices)
    if p.kind == "strings":
        from sieve.scenarios.detectors import PHRASE_CHARS

        return f"up to {_num(p.maximum)} phrases of up to {PHRASE_CHARS} characters"
    return f"{_num(p.minimum)} to {_num(p.maximum)}"
