"""The embedded model's thread count: JUDGELAB_THREADS when set, else the cores the load leaves free."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from judgelab.errors import ConfigError
from judgelab.llm.backends import embedded
from judgelab.llm.backends.embedded import configured_threads, default_threads


@pytest.fixture
def two_cores(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)

    def busy(count):
        monkeypatch.setattr(embedded, "_busy_cores", lambda cores: count)
    return busy


@pytest.mark.parametrize(("busy", "threads"), [(0.0, 2), (0.4, 2), (0.6, 1), (2.0, 1), (9.0, 1)])
def test_default_threads_are_the_cores_other_processes_leave_free(two_cores, busy, threads):
    two_cores(busy)
    assert default_threads() == threads


def test_busy_cores_sees_a_spinning_process_and_not_this_one():
    """Real readings of /proc/stat: this process sleeps while it measures, a spinning child does not."""
    if not os.path.exists("/proc/stat"):
        pytest.skip("no /proc/stat on this platform (the default is then every core)")
    cores = sorted(os.sched_getaffinity(0))
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.3)
        busy = embedded._busy_cores(cores, window=0.5)
    finally:
        spinner.kill()
        spinner.wait()
    assert 0.6 <= busy <= len(cores) + 0.01, busy  # at least most of the spinner's core


def test_judgelab_threads_is_read_and_checked(monkeypatch):
    monkeypatch.delenv("JUDGELAB_THREADS", raising=False)
    assert configured_threads() is None
    monkeypatch.setenv("JUDGELAB_THREADS", "3")
    assert configured_threads() == 3
    for bad in ("0", "two", "-1", "999"):
        monkeypatch.setenv("JUDGELAB_THREADS", bad)
        with pytest.raises(ConfigError, match="JUDGELAB_THREADS"):
            configured_threads()


def test_threads_option_reaches_the_embedded_backend_and_is_refused_for_a_server(monkeypatch):
    from judgelab.llm import resolve

    seen = {}
    monkeypatch.setattr(resolve, "make_client", lambda *args, **kwargs: seen.update(kwargs))
    resolve.client_from_options("smollm2-135m", threads=3)
    assert seen["backend_options"] == {"n_threads": 3}
    resolve.client_from_options("smollm2-135m")
    assert seen["backend_options"] is None  # the backend's default: JUDGELAB_THREADS, else default_threads()
    with pytest.raises(ConfigError, match="threads sets the embedded model's threads; openai:gpt-4o"):
        resolve.client_from_options("openai:gpt-4o", threads=2)
