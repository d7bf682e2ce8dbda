"""The real CLI in a separate process under an address-space cap (``ulimit -v``), with its peak memory.

Issue 40 asks for the peak memory of its large-input cases measured under ``ulimit -v 2G`` from the
tests themselves: ``run_capped`` sets ``RLIMIT_AS`` in the child before it starts Python and reads the
child's own high-water mark (``VmHWM``: ``ru_maxrss`` would carry the forking pytest process's size
across the exec) as the interpreter exits.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

CAP = 2 << 30  # ulimit -v 2G
# the entry point, then the process's peak resident memory (kB) into the file named first
_REPORT_PEAK = ("import atexit, re, sys; out = sys.argv.pop(1); atexit.register(lambda: open(out, 'w').write("
                "re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1))); "
                "sys.argv[0] = 'judgelab'; from judgelab.cli import main; main()")


@dataclass(frozen=True)
class Capped:
    returncode: int
    stdout: str
    stderr: str
    peak_mib: float

    def lines(self) -> list[str]:
        """stderr's non-blank lines."""
        return [line for line in self.stderr.splitlines() if line.strip()]


def run_capped(*args: object, cap: int = CAP, timeout: float = 300, env: dict[str, str] | None = None) -> Capped:
    """``judgelab ARGS`` under an address-space cap of ``cap`` bytes; prints the figure (pytest -s)."""
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    with tempfile.TemporaryDirectory() as folder:
        peak_file = Path(folder) / "peak"
        done = subprocess.run([sys.executable, "-c", _REPORT_PEAK, str(peak_file), *map(str, args)],
                              capture_output=True, text=True, timeout=timeout, preexec_fn=limit,
                              env={**os.environ, **(env or {})})
        peak = int(peak_file.read_text()) / 1024 if peak_file.exists() else float("nan")
    print(f"\n[capped {cap >> 20} MiB] judgelab {' '.join(str(a)[:40] for a in args[:2])}: exit {done.returncode}, "
          f"peak RSS {peak:.0f} MiB")
    return Capped(done.returncode, done.stdout, done.stderr, peak)
