"""The small things a reviewer reads (issue 26, §10): counts in words, help without doubled signs, Markdown that
escapes only what Markdown would read, entries with a gap after their id."""

from __future__ import annotations

import html
import textwrap

import click
import pytest
from click.testing import CliRunner
from markdown_it import MarkdownIt

from sieve.cli import main
from sieve.safe_text import md_inline
from sieve.tables import counted

HOSTILE = [
    "plain words",
    "(+1) at +00:00, 2025-01-02T03:04:05+00:00",
    "*bold* _it_ `code` [link](http://x) <b>tag</b> ![img](y) ~~gone~~ a|b",
    "# not a heading",
    "> not a quote",
    "- not a list",
    "+ not a list",
    "1. not a list",
    "2) not a list",
    "AT&T &copy; &#169; \\ back\\slash \\*",
    "=== not a rule",
]


def commands(group: click.Group = main, prefix: tuple[str, ...] = ()):
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            yield from commands(command, (*prefix, name))
        yield (*prefix, name)


def test_counts_say_one_thing_in_the_singular():
    assert [counted(n, "probe") for n in (0, 1, 2)] == ["0 probes", "1 probe", "2 probes"]
    assert counted(1, "reply", "replies") == "1 reply" and counted(3, "reply", "replies") == "3 replies"


def test_validate_counts_a_scenario_of_one_probe_as_one_probe(tmp_path):
    path = tmp_path / "one.toml"
    path.write_text(
        textwrap.dedent(
            """\
            [scenario]
            name = "one"
            title = "One"
            version = 1

            [[steps]]
            id = "s0"
            kind = "setup"
            text = "Setup."

            [[steps]]
            id = "s1"
            text = "Hello."

            [[probes]]
            id = "P1"
            kind = "memory"
            title = "p"
            text = "p"
            asked = ["s1"]
            """
        ),
        encoding="utf-8",
    )
    result = CliRunner().invoke(main, ["scenarios", "validate", str(path)])
    assert result.exit_code == 0, result.output
    assert "ok (2 steps, 0 items, 0 counters, 1 probe)" in result.output


@pytest.mark.parametrize("path", list(commands()), ids=" ".join)
def test_no_help_shows_a_doubled_percent_sign(path):
    result = CliRunner().invoke(main, [*path, "--help"])
    assert result.exit_code == 0 and "%%" not in result.output


@pytest.mark.parametrize("text", HOSTILE)
def test_markdown_reads_back_the_text_as_written_and_nothing_is_escaped_that_markdown_would_not_read(text):
    escaped = md_inline(text)
    # As running text (after "- run: ") and as a line of its own: Markdown shows exactly the text.
    for line in (f"x {escaped}", escaped):
        # GitHub's Markdown, less its links made of bare URLs (what it shows of a URL is the URL itself).
        rendered = MarkdownIt("commonmark").enable(["table", "strikethrough"]).render(line)
        assert rendered.startswith("<p>") and rendered.rstrip().endswith("</p>"), rendered
        assert html.unescape(rendered.strip()[3:-4]).removeprefix("x ") == text
    # No backslash where Markdown reads nothing: parentheses, plus signs and colons as they are.
    for clean in ("(+1)", "+00:00", "2025-01-02T03:04:05+00:00"):
        if clean in text:
            assert clean in escaped
