"""`make bench`: list the benchmarks, or run the ones named, one after another (never two at once).

    make bench                                  # the list, with each one's first docstring line
    make bench BENCH="bench_metrics bench_evaluate"   # run these with their default options

Most benchmarks load a model or run for an hour or more on 2 cores, and each writes its own
section of docs/benchmarks.md with the command that reproduces it (see that page for the options
each section used); so nothing runs unless named.
"""

from __future__ import annotations

import ast
import runpy
import sys
from pathlib import Path

HERE = Path(__file__).parent


def benchmarks() -> dict[str, str]:
    """``{module name: first line of its docstring}`` for every bench/bench_*.py."""
    found = {}
    for path in sorted(HERE.glob("bench_*.py")):
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
        found[path.stem] = doc.splitlines()[0] if doc else ""
    return found


def main(names: list[str]) -> int:
    known = benchmarks()
    if not names:
        for name, line in known.items():
            print(f"{name:28s} {line}")
        print('\nrun some with: make bench BENCH="bench_metrics bench_evaluate"')
        return 0
    unknown = [name for name in names if name not in known]
    if unknown:
        print(f"unknown benchmark(s): {', '.join(unknown)}; choose from {', '.join(known)}", file=sys.stderr)
        return 2
    for name in names:
        print(f"== {name}", flush=True)
        sys.argv = [name]
        runpy.run_module(f"bench.{name}", run_name="__main__")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
