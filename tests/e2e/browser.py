"""A real headless browser for the tests and benchmarks: Debian's chromium + chromedriver through selenium.

CI installs the browser with `apt-get install chromium chromium-driver` (scripts/install.sh); where it
is missing the tests skip (and fail under CI).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import _missing

CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--window-size=1280,900")


def start_chrome(profile: Path, *, network_log: bool = False):
    """A headless Chromium with its own profile folder. ``network_log``: also record the page's
    network events (the ``performance`` log), for ``requests_made``."""
    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
        _missing("chromium and chromedriver not found in /usr/bin: apt-get install chromium chromium-driver")
    webdriver = pytest.importorskip("selenium.webdriver", reason="needs selenium (the dev extra)")
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (*FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    logs = {"browser": "ALL"} | ({"performance": "ALL"} if network_log else {})
    options.set_capability("goog:loggingPrefs", logs)
    return webdriver.Chrome(options=options, service=webdriver.ChromeService(executable_path=str(CHROMEDRIVER)))


def requests_made(driver) -> list[dict[str, Any]]:
    """Every request the page made since the last call: url, and bytes received over the wire
    (``encodedDataLength``: headers and body as transferred; 0 when served from the cache)."""
    sent: dict[str, dict[str, Any]] = {}
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        params = message.get("params", {})
        if message["method"] == "Network.requestWillBeSent":
            sent[params["requestId"] + params["request"]["url"]] = {"id": params["requestId"],
                                                                    "url": params["request"]["url"], "bytes": 0}
        elif message["method"] == "Network.loadingFinished":
            for request in sent.values():
                if request["id"] == params["requestId"]:
                    request["bytes"] = int(params.get("encodedDataLength", 0))
    return list(sent.values())


def uncached_reload(driver) -> list[dict[str, Any]]:
    """Reload the page with the browser cache off: the requests of a first visit (``requests_made``).
    Needs ``network_log``; what the page requested before is dropped."""
    requests_made(driver)
    driver.execute_cdp_cmd("Network.enable", {})
    driver.execute_cdp_cmd("Network.setCacheDisabled", {"cacheDisabled": True})
    try:
        driver.refresh()
        driver.execute_async_script("""const done = arguments[0];
            if (document.readyState === 'complete') done(); else addEventListener('load', () => done());""")
        return requests_made(driver)
    finally:
        driver.execute_cdp_cmd("Network.setCacheDisabled", {"cacheDisabled": False})


def save_screenshot(driver, folder: Path, name: str, element=None) -> Path:
    """A screenshot that must show something: not a blank or one-colour page. Copied to
    $JUDGELAB_ARTIFACTS when set (the docs' images are taken this way). ``element``: only it."""
    shot = folder / name
    assert element.screenshot(str(shot)) if element is not None else driver.save_screenshot(str(shot))
    assert shot.stat().st_size > 10_000, "the screenshot is nearly empty"
    if artefacts := os.environ.get("JUDGELAB_ARTIFACTS"):
        Path(artefacts).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(artefacts) / name)
    return shot


def colours_in(driver, png: Path) -> int:
    """How many distinct colours a PNG has (sampled), decoded by the browser itself on a blank page:
    a blank screenshot has one or two, a page with text and buttons dozens."""
    import base64

    driver.get("about:blank")
    data = base64.b64encode(png.read_bytes()).decode()
    return driver.execute_async_script("""
        const [data, done] = arguments;
        const image = new Image();
        image.onload = () => {
            const canvas = document.createElement('canvas');
            canvas.width = image.width; canvas.height = image.height;
            const context = canvas.getContext('2d');
            context.drawImage(image, 0, 0);
            const pixels = context.getImageData(0, 0, image.width, image.height).data;
            const seen = new Set();
            for (let i = 0; i < pixels.length; i += 4 * 7) seen.add(pixels[i] << 16 | pixels[i + 1] << 8 | pixels[i + 2]);
            done(seen.size);
        };
        image.src = 'data:image/png;base64,' + data;""", data)
