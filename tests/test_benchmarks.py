"""The benchmarks (tests/perf, not run here) keep their one rule that can be checked without running them."""

from __future__ import annotations

import ast
from pathlib import Path

PERF = Path(__file__).parent / "perf"


def first_print(path: Path) -> str | None:
    """The source of what `main()` prints first, if it prints anything."""
    tree = ast.parse(path.read_text())
    main = next(n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == "main")
    prints = [
        node
        for node in ast.walk(main)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print"
    ]
    if not prints:
        return None
    first = min(prints, key=lambda node: (node.lineno, node.col_offset))
    return ast.unparse(first.args[0]) if first.args else ""


def test_every_benchmark_prints_the_machine_it_ran_on_first():
    # A figure from another machine is read in proportion to the reference loop's time (docs/performance.md).
    benches = sorted(PERF.glob("bench_*.py"))
    assert len(benches) >= 12
    assert {b.name: first_print(b) for b in benches} == {b.name: "machine_line()" for b in benches}
