"""A small real disk that fills up: a 5 MB tmpfs mounted for one test (root only; skipped elsewhere, where
the unit tests fail os.write with ENOSPC instead: tests/doubles.py's FullDisk)."""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


@contextlib.contextmanager
def small_disk(folder: Path, size: str = "5m") -> Iterator[Path]:
    """``folder`` as a tmpfs of ``size``, unmounted afterwards."""
    folder.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)],
                             capture_output=True, text=True)
    if mounted.returncode:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True)


def fill(folder: Path, name: str = "filler") -> Path:
    """Write a file into ``folder`` until its disk is full; the file (delete it to give the space back)."""
    path = folder / name
    block = b"\0" * 65536
    with open(path, "wb", buffering=0) as out:
        while True:
            try:
                out.write(block)
            except OSError as exc:
                if exc.errno != errno.ENOSPC:
                    raise
                break
        for size in (4096, 512, 1):  # the last blocks, down to the byte
            while True:
                try:
                    out.write(b"\0" * size)
                except OSError:
                    break
    return path
