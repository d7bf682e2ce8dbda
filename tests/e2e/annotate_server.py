"""`judgelab annotate` as a user runs it (its own process on a free port) and a browser's keystrokes on it:
shared by tests/e2e/test_annotate_browser.py and bench/bench_annotate.py."""

from __future__ import annotations

import select
import signal
import socket
import subprocess
import sys
import time

PAGE_STATE = """
const answer = document.querySelector('input[name=answer_id]');
if (document.readyState !== 'complete') return null;
return answer ? answer.value : location.pathname + '#' + (document.getElementById('done') ? 'done' : document.title);
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class AnnotateServer:
    """``judgelab annotate ARGS --port PORT`` in a child process; ``url`` once it listens."""

    def __init__(self, *args: object, port: int | None = None):
        self.args = [str(a) for a in args]
        self.port = port or free_port()
        self.process: subprocess.Popen | None = None
        self.url = ""
        self.output = ""

    def start(self, timeout: float = 60) -> AnnotateServer:
        self.process = subprocess.Popen([sys.executable, "-m", "judgelab.cli", "annotate", *self.args,
                                         "--port", str(self.port)],
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        first = self._line(timeout)
        assert first.startswith("judgelab annotate: http://"), first + self.process.stderr.read()
        self.url = first.split(": ", 1)[1].strip()
        return self

    def _line(self, timeout: float) -> str:
        assert self.process is not None and self.process.stdout is not None
        ready, _, _ = select.select([self.process.stdout], [], [], timeout)
        if not ready:
            self.kill()
            raise AssertionError(f"no URL printed within {timeout}s")
        return self.process.stdout.readline()

    def kill(self, sig: int = signal.SIGKILL) -> int:
        """Send ``sig`` and wait for the process to end; its exit code. What it printed after the URL
        is then in ``output``."""
        assert self.process is not None
        if self.process.poll() is None:
            self.process.send_signal(sig)
        self.process.wait(timeout=30)
        # read through the text wrappers, not communicate(): _line's readline may already hold the
        # lines printed after the URL in the wrapper's buffer, which communicate() (raw reads) skips
        self.output = self.process.stdout.read() + self.process.stderr.read()
        return self.process.returncode

    def __enter__(self) -> AnnotateServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        if self.process is not None and self.process.poll() is None:
            self.kill(signal.SIGTERM)


def page_state(driver) -> str | None:
    """What identifies the page shown: the answer form's one-time id, else the path; None while loading."""
    return driver.execute_script(PAGE_STATE)


def wait_for_new_page(driver, before: str | None, timeout: float = 15) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            state = page_state(driver)
        except Exception:  # the old document went away mid-script: a navigation is under way
            state = None
        if state is not None and state != before:
            return state
        time.sleep(0.002)
    raise AssertionError(f"the page did not change within {timeout}s after a key press (still {before!r})")


def press(driver, key: str) -> str:
    """Press ``key`` as a user would (on the page, nothing focused) and wait for the next page."""
    from selenium.webdriver.common.action_chains import ActionChains

    before = page_state(driver)
    ActionChains(driver).send_keys(key).perform()
    return wait_for_new_page(driver, before)


def login(driver, name: str) -> None:
    from selenium.webdriver.common.keys import Keys

    before = page_state(driver)
    driver.find_element("id", "name").send_keys(name + Keys.ENTER)
    wait_for_new_page(driver, before)


def shown_item(driver) -> str | None:
    """The id of the item on the page (None on other pages)."""
    found = driver.find_elements("css selector", "input[name=item_id]")
    return found[0].get_attribute("value") if found else None


def open_page(driver, url: str) -> None:
    driver.get(url)
    wait_for_new_page(driver, None)
