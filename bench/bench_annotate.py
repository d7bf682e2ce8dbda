"""`judgelab annotate` in a real browser: time per label (server round trip) and page weight.

The server runs as a user starts it (`judgelab annotate ...` in its own process, labels fsynced to a
labels.jsonl) on real summarisation items (QAGS CNN/DM: news articles of 300-800 words and their
summaries, from ../shared/benchmarks), and headless Chromium labels every item by keyboard. For each
label the page that follows reports its Navigation Timing: from the key's form post (the navigation
start) through the fsynced append, the redirect and the next item's HTML (``responseEnd``) to the page
fully loaded (``loadEventEnd``); the wall time from the WebDriver key press to the new page seen is
also kept (an upper bound: it adds WebDriver's own round trips). Chrome's network log gives the bytes
of a first, uncached page load and the address of every request the page made.

    .venv/bin/python -m bench.bench_annotate                # 60 items, docs/benchmarks.md updated
    .venv/bin/python -m bench.bench_annotate --items 20 --no-doc
"""

from __future__ import annotations

import argparse
import json
import signal
import tempfile
import time
from datetime import date
from pathlib import Path

import numpy as np
from tests.e2e.annotate_server import AnnotateServer, login, open_page, press, shown_item
from tests.e2e.browser import requests_made, start_chrome, uncached_reload

from bench.common import command_line, describe_machine, load_avg, log, write_doc_section
from judgelab.data import load_items, save_items
from judgelab.data.labels import read_labels

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "benchmarks" / "qags_cnndm.jsonl"
PAGE_BUDGET = 200_000
NAVIGATION = """const [n] = performance.getEntriesByType('navigation');
return {response: n.responseEnd, loaded: n.loadEventEnd, redirect: n.redirectEnd - n.redirectStart,
        bytes: n.transferSize};"""


def run(n_items: int, folder: Path) -> dict:
    items = list(load_items(DATA))[:n_items]
    data = save_items([item.model_copy(update={"scores": {}}) for item in items], folder / "items.jsonl")
    out = folder / "labels.jsonl"
    driver = start_chrome(folder / "profile", network_log=True)
    server = AnnotateServer("--data", data, "--aspect", "consistency", "--scale", "1-5", "--out", out).start()
    try:
        open_page(driver, server.url)
        login(driver, "bench")
        first = uncached_reload(driver)
        timings, walls = [], []
        while shown_item(driver) is not None:
            started = time.perf_counter()
            press(driver, str(1 + len(timings) % 5))
            walls.append((time.perf_counter() - started) * 1000)
            timings.append(driver.execute_script(NAVIGATION))
        later = requests_made(driver)
    finally:
        server.kill(signal.SIGTERM)
        driver.quit()
    assert len(read_labels(out)) == len(items) == len(timings), "every label written once"
    origin = f"http://127.0.0.1:{server.port}/"
    requests = first + later
    return {
        "items": len(items), "labels_written": len(read_labels(out)),
        "response_ms": [t["response"] for t in timings], "loaded_ms": [t["loaded"] for t in timings],
        "post_redirect_ms": [t["redirect"] for t in timings], "wall_ms": walls,
        "next_page_bytes": [t["bytes"] for t in timings],
        "first_load": [{"url": r["url"].removeprefix(origin[:-1]), "bytes": r["bytes"]} for r in first],
        "first_load_bytes": sum(r["bytes"] for r in first),
        "requests": len(requests), "outside": [r["url"] for r in requests if not r["url"].startswith(origin)],
    }


def percentiles(values: list[float]) -> str:
    p50, p95 = np.percentile(values, [50, 95])
    return f"{p50:.1f} / {p95:.1f}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=60, help="items to label (QAGS CNN/DM, in file order)")
    parser.add_argument("--no-doc", action="store_true", help="print only; leave docs/benchmarks.md alone")
    args = parser.parse_args(argv)
    loads = [load_avg()]
    with tempfile.TemporaryDirectory(prefix="bench-annotate-") as tmp:
        result = run(args.items, Path(tmp))
    loads.append(load_avg())
    log(json.dumps({k: v for k, v in result.items() if not k.endswith("_ms") and k != "next_page_bytes"}))
    assert not result["outside"], result["outside"]
    rows = [
        ("key press to the next item's HTML received (POST + fsync + redirect + GET), in the browser",
         percentiles(result["response_ms"])),
        ("of which the POST that writes the label, up to its redirect", percentiles(result["post_redirect_ms"])),
        ("key press to the next page fully loaded (`loadEventEnd`)", percentiles(result["loaded_ms"])),
        ("key press to the new page seen by WebDriver (wall clock, upper bound)", percentiles(result["wall_ms"])),
    ]
    table = ["| per label (ms) | p50 / p95 |", "|---|---:|", *[f"| {what} | {value} |" for what, value in rows]]
    assets = ", ".join(f"{r['url'].split('?')[0].removeprefix('/static/').strip('/') or 'the page'} {r['bytes'] / 1000:.1f} kB"
                       for r in result["first_load"] if r["bytes"])
    print("\n".join(table))
    if args.no_doc:
        return
    body = "\n".join([
        f"- command: `{command_line('bench.bench_annotate', argv)}`; date {date.today().isoformat()}; machine: "
        f"{describe_machine()}; headless Chromium (Debian package) through selenium; load average (1/5/15 min) "
        f"before and after: {', '.join(loads)}.",
        f"- what runs: `judgelab annotate` in its own process on 127.0.0.1 (uvicorn, every label appended to "
        f"labels.jsonl with an fsync before the redirect) over the first {result['items']} QAGS CNN/DM items "
        "(news articles and their summaries); the browser labels every item with a digit key. Times come from "
        "each next page's Navigation Timing (navigation start = the form post the key sends).",
        "",
        *table,
        "",
        f"- labels written: {result['labels_written']} for {result['items']} key presses (one line each).",
        f"- page weight, first load with the cache off (HTML of the item page with its article, CSS, script, icon; "
        f"bytes over the wire): **{result['first_load_bytes'] / 1000:.1f} kB** ({assets}); budget "
        f"{PAGE_BUDGET // 1000} kB. Later items fetch only their HTML (the assets are cached for good): median "
        f"{np.median(result['next_page_bytes']) / 1000:.1f} kB.",
        f"- requests the page made: {result['requests']}, all to 127.0.0.1 (none elsewhere: no CDN, no font, "
        "no analytics; the Content-Security-Policy would block them anyway).",
        "- the machine is shared (see the load average), so these are figures under load; the gap between the "
        "HTML received and `loadEventEnd` is the browser's own work (parse, cached CSS and script, layout).",
    ])
    write_doc_section("bench_annotate", body,
                      heading="## Annotate: time per label and page weight (`bench/bench_annotate.py`)")


if __name__ == "__main__":
    main()
