"""The embedded model's thread count: JUDGELAB_THREADS when set, else the cores the load leaves free."""

from __future__ import annotations

import os

import pytest

from judgelab.errors import ConfigError
from judgelab.llm.backends.embedded import configured_threads, default_threads


@pytest.fixture
def two_cores(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)

    def at(load):
        monkeypatch.setattr(os, "getloadavg", lambda: (load, load, load))
    return at


@pytest.mark.parametrize(("load", "threads"), [(0.0, 2), (0.4, 2), (0.6, 1), (2.0, 1), (9.0, 1)])
def test_default_threads_are_the_cores_the_load_leaves_free(two_cores, load, threads):
    two_cores(load)
    assert default_threads() == threads


def test_no_load_average_means_every_core(two_cores, monkeypatch):
    def unavailable():
        raise OSError("no load average")
    monkeypatch.setattr(os, "getloadavg", unavailable)
    assert default_threads() == 2


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
    with pytest.raises(ConfigError, match="--threads sets the embedded model's threads; openai:gpt-4o"):
        resolve.client_from_options("openai:gpt-4o", threads=2)
