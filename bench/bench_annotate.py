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

``--pages`` measures a long `--until-decided` session instead (no browser): a pairwise session whose
labels file already holds 2,000 or 4,000 labels, the time of each next page (the answer's POST, its
fsync, the redirect and the next item's HTML) and how long a static file asked for while a page is
being made waits. ``--before SRC`` runs the same with another copy of the code (a ``src`` folder, e.g.
from ``git archive``) on the server's ``PYTHONPATH``, for before/after figures:

    git archive COMMIT src | tar -x -C /tmp/before
    .venv/bin/python -m bench.bench_annotate --pages --before /tmp/before/src --write
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import re
import signal
import tempfile
import threading
import time
from datetime import date
from pathlib import Path

import numpy as np
from tests.e2e.annotate_server import AnnotateServer, login, open_page, press, shown_item
from tests.e2e.browser import requests_made, start_chrome, uncached_reload

from bench.common import command_line, describe_machine, load_avg, log, write_doc_section
from judgelab.data import Item, load_items, save_items
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


# -- --pages: a long --until-decided session ----------------------------------------------------------
COMPARISONS = 10_000  # between v1 and v2: a coin-flipping annotator leaves the question open throughout
FORM_FIELD = re.compile(r'<input type="hidden" name="(\w+)" value="([^"]*)"')


@contextlib.contextmanager
def code_on_path(src: Path | None):
    """The server process imports judgelab from ``src`` (None: this checkout, as installed)."""
    before = os.environ.get("PYTHONPATH")
    if src is not None:
        os.environ["PYTHONPATH"] = str(src)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = before


def session_pages(folder: Path, n_labels: int, pages: int, src: Path | None) -> dict:
    """Start a server on a labels file of ``n_labels`` labels; time ``pages`` answers, each with a static
    request sent 10 ms into it."""
    import httpx

    items = [Item(id=f"c{k}", instruction=f"Question {k}?", output_a="first answer", output_b="second answer",
                 system_a="v1", system_b="v2") for k in range(COMPARISONS)]
    data = save_items(items, folder / "items.jsonl")
    out = folder / "labels.jsonl"
    rng = random.Random(0)
    out.write_text("".join(json.dumps({"item_id": f"c{k}", "aspect": "preference", "value": rng.choice("ab"),
                                       "annotator": "bench"}) + "\n" for k in range(n_labels)))
    with code_on_path(src):
        server = AnnotateServer("--data", data, "--aspect", "preference", "--out", out, "--annotator", "bench",
                                "--until-decided", "worse:v1,v2").start(timeout=120)
    base = f"http://127.0.0.1:{server.port}"
    try:
        with httpx.Client(base_url=base, timeout=600) as page_client, httpx.Client(base_url=base, timeout=600) as other:
            started = time.perf_counter()
            text = page_client.get("/").text
            first = time.perf_counter() - started
            page_s, static_s = [], []
            for _ in range(pages):
                form = dict(FORM_FIELD.findall(text))
                answer = {}

                def post(form=form, answer=answer) -> None:
                    began = time.perf_counter()
                    response = page_client.post("/answer", data={**form, "value": "left"}, headers={"origin": base},
                                                follow_redirects=True)
                    answer.update(text=response.text, seconds=time.perf_counter() - began)

                worker = threading.Thread(target=post)
                worker.start()
                time.sleep(0.01)
                began = time.perf_counter()
                assert other.get("/static/annotate.css").status_code == 200
                static_s.append(time.perf_counter() - began)
                worker.join()
                page_s.append(answer["seconds"])
                text = answer["text"]
                assert 'name="item_id"' in text, "the next item"
    finally:
        server.kill(signal.SIGTERM)
    assert len(read_labels(out)) == n_labels + pages, "every answer written once"
    return {"labels": n_labels, "first_page_s": first, "page_s": page_s, "static_s": static_s}


def pages_main(args: argparse.Namespace, argv: list[str] | None) -> None:
    codes = ([("before", args.before)] if args.before else []) + [("now", None)]
    rows = []
    loads = [load_avg()]
    for n_labels in args.labels:
        for name, src in codes:
            with tempfile.TemporaryDirectory(prefix="bench-annotate-pages-") as tmp:
                result = session_pages(Path(tmp), n_labels, args.answers, src)
            log(json.dumps({"code": name, **result}))
            rows.append((name, result))
    loads.append(load_avg())
    table = ["| code | labels in the file | first page (s) | next page, median (max) (s) | a static file asked for meanwhile, median (max) (s) |",
             "|---|---:|---:|---:|---:|"]
    for name, r in rows:
        table.append(f"| {name} | {r['labels']:,} | {r['first_page_s']:.3f} | {np.median(r['page_s']):.3f} "
                     f"({max(r['page_s']):.3f}) | {np.median(r['static_s']):.3f} ({max(r['static_s']):.3f}) |")
    print("\n".join(table))
    if not args.write:
        return
    body = "\n".join([
        f"- command: `{command_line('bench.bench_annotate', argv)}`; date {date.today().isoformat()}; machine: "
        f"{describe_machine()}; load average (1/5/15 min) before and after: {', '.join(loads)}.",
        f"- what runs: `judgelab annotate --until-decided worse:v1,v2 --annotator bench` in its own process on "
        f"{COMPARISONS:,} comparisons of v1 and v2, its labels file already holding the given number of labels "
        "(a coin-flipping annotator: the question stays open). An HTTP client answers "
        f"{args.answers} items (the POST, its fsync, the redirect and the next item's HTML: one page); 10 ms into "
        "each, another client asks for the stylesheet. `before`: the code of `--before` on the server's "
        "`PYTHONPATH`; `now`: this checkout. The first page also reads the labels file.",
        "",
        *table,
        "",
        "- before: every page read all the labels again as a confidence sequence, O(n^2) in the labels (a "
        "refinement at every past label), on the event loop, so every other request waited for it. Now each "
        "label moves the sequence on by one step (`metrics.betting.RunningSequence`, the same numbers), and pages "
        "are made in the server's thread pool.",
    ])
    write_doc_section("bench_annotate_pages", body,
                      heading="## Annotate: a long --until-decided session (`bench/bench_annotate.py --pages`)")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=60, help="items to label (QAGS CNN/DM, in file order)")
    parser.add_argument("--no-doc", action="store_true", help="print only; leave docs/benchmarks.md alone")
    parser.add_argument("--pages", action="store_true", help="time pages of a long --until-decided session instead")
    parser.add_argument("--labels", type=lambda text: [int(n) for n in text.split(",")], default=[2000, 4000],
                        help="--pages: labels already in the file, e.g. 2000,4000")
    parser.add_argument("--answers", type=int, default=3, help="--pages: answers timed per labels file")
    parser.add_argument("--before", type=Path, help="--pages: a src folder of other code to measure first")
    parser.add_argument("--write", action="store_true", help="--pages: write the figures to docs/benchmarks.md")
    args = parser.parse_args(argv)
    if args.pages:
        return pages_main(args, argv)
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
