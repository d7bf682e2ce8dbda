"""The installed judgelab's version, for the files that record it (run.json, reports) and ``--version``.

Its own module at the bottom of the layers, so that ``report/`` records it without importing the front door
(``judgelab/__init__.py``), which sits above every folder."""

from __future__ import annotations

import functools


@functools.cache
def installed_version() -> str:
    """The installed distribution's version, read on first use: importlib.metadata scans every installed
    package's metadata (60-100 ms), which ``import judgelab`` and ``judgelab --help`` should not pay."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("judgelab")
    except PackageNotFoundError:  # running from a source tree without install
        return "0.0.0"
