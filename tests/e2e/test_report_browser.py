"""The report in a real headless browser (Debian's chromium + chromedriver through selenium).

A real run of the embedded test model writes the page; the browser opens it from file:// with
a Content-Security-Policy that forbids every fetch, and the test reads the browser's console.
CI installs the browser with `apt-get install chromium chromium-driver` (scripts/install.sh).
"""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path

import pytest

from judgelab.data import load_items
from judgelab.judges.base import load_judge
from judgelab.llm.resolve import make_client
from judgelab.runner import run_judge
from tests.conftest import TEST_MODEL
from tests.e2e.browser import save_screenshot, start_chrome

ATTACK = '<script>window.__injected = 1</script><img src=x onerror="window.__injected = 2">'


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    driver = start_chrome(tmp_path_factory.mktemp("chromium-profile"))
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def real_run(tmp_path_factory, test_model_path) -> Path:
    """The demo judge (logprob scores) on 2 articles x 4 summaries; one summary carries markup."""
    examples = files("judgelab") / "examples"
    items = list(load_items(Path(str(examples / "demo_summaries.jsonl"))))[:8]
    items[1] = items[1].model_copy(update={"output": f"{ATTACK} {items[1].output}"})
    folder = tmp_path_factory.mktemp("run") / "demo-run"
    with make_client(TEST_MODEL, cache=folder.parent / "cache.sqlite") as client:
        run_judge(load_judge(Path(str(examples / "demo_judge.yaml"))), items, client, folder)
    _add_search_files(folder, items)
    return folder


def _add_search_files(folder: Path, items: list) -> None:
    """What an optimiser leaves beside its best run: the trajectory and factor advantages."""
    scores = [0.21, 0.35, 0.30, 0.42, 0.40, 0.47]
    best = [max(scores[: i + 1]) for i in range(len(scores))]
    lines = [json.dumps({"step": i + 1, "score": s, "best": b}) for i, (s, b) in enumerate(zip(scores, best, strict=True))]
    (folder / "trajectory.jsonl").write_text("\n".join(lines) + "\n")
    (folder / "optimizer.json").write_text(json.dumps({"method": "hpss", "budget": 6, "advantages": {
        "cot": {"none": -0.02, "prefix": 0.05}, "scale": {"5": 0.01, "10": -0.03}}}))
    from judgelab.report import write_report

    write_report(folder, items)


def _open(driver, path: Path) -> None:
    driver.get_log("browser")  # drop what earlier pages logged
    driver.get(path.resolve().as_uri())
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(1280, min(int(height) + 100, 12000))


def test_report_loads_offline_without_console_errors_and_draws_plots(browser, real_run, tmp_path):
    _open(browser, real_run / "report.html")
    errors = [entry for entry in browser.get_log("browser") if entry["level"] in ("SEVERE", "WARNING")]
    assert errors == []
    assert browser.title == f"judgelab run: {real_run.name}"
    drawn = browser.execute_script("""
        return Array.from(document.querySelectorAll('figure')).map(f => {
            const svg = f.querySelector('svg'); const box = svg.getBoundingClientRect();
            return [f.id, box.width, box.height, svg.querySelectorAll('circle, rect, path, polyline').length];
        });""")
    by_id = {name: (width, height, marks) for name, width, height, marks in drawn}
    for name in ("figure-scatter", "figure-judge-histogram", "figure-human-histogram", "figure-group-correlations",
                 "figure-calibration", "figure-trajectory", "figure-advantages"):
        width, height, marks = by_id[name]
        assert width > 100 and height > 100 and marks > 0, name
    assert by_id["figure-scatter"][2] == 8  # one dot per judged item
    cards = browser.find_element("id", "accounting").text
    assert "8\nitems" in cards and "paid calls" in cards
    assert browser.find_element("id", "metrics").text.count("spearman") >= 2
    # each number column's header ends where its figures end (the groups header sat a column width away)
    ends = browser.execute_script("""
        const ends = (cell) => { const range = document.createRange(); range.selectNodeContents(cell);
                                 return range.getBoundingClientRect().right; };
        const table = document.getElementById('metrics');
        const headers = Array.from(table.rows[0].cells);
        return ['value', 'n', 'groups'].map(name => {
            const k = headers.findIndex(th => th.textContent === name);
            return [name, ends(headers[k]), ends(table.rows[1].cells[k])];
        });""")
    for name, header, figure in ends:
        assert abs(header - figure) < 2, (name, header, figure)
    # the logprob score is named for what it is where it sits beside the reply's written rating
    note = browser.find_element("id", "score-note")
    assert note.is_displayed() and "expected rating" in note.text and "1-5" in note.text
    judge_block = browser.find_element("xpath", "//h2[text()='Judge']/following-sibling::pre[1]").text
    assert f"model: {TEST_MODEL}" in judge_block and "model: null" not in judge_block
    save_screenshot(browser, tmp_path, "report.png")


def test_dataset_markup_shows_as_text_and_never_runs(browser, real_run):
    _open(browser, real_run / "report.html")
    assert browser.execute_script("return window.__injected === undefined")
    page_text = browser.find_element("tag name", "body").text
    assert "<script>window.__injected = 1</script>" in page_text
    assert browser.execute_script("return document.querySelectorAll('body script').length") == 1  # the page's own


def test_sorting_a_table_by_clicking_its_header(browser, real_run):
    _open(browser, real_run / "report.html")
    header = browser.find_element("css selector", "#judgments th:nth-child(3)")
    values = []
    for _ in range(2):
        header.click()
        cells = browser.find_elements("css selector", "#judgments tr td:nth-child(3)")
        values.append([float(cell.text) for cell in cells])
    assert values[0] == sorted(values[0], reverse=True) and values[1] == sorted(values[1])
    assert browser.get_log("browser") == []


def test_a_script_that_slipped_through_escaping_would_not_run(browser, real_run, tmp_path):
    """The page's policy allows its own script by hash only (no 'unsafe-inline'): markup planted in the
    page as an escaping slip would leave it is blocked, while the page's table sorter still works."""
    page = (real_run / "report.html").read_text(encoding="utf-8")
    planted = page.replace("</body>", '<script>window.__slipped = 1</script>'
                                      '<img src=x onerror="window.__slipped = 2"></body>')
    copy = tmp_path / "report.html"
    copy.write_text(planted, encoding="utf-8")
    _open(browser, copy)
    assert browser.execute_script("return window.__slipped === undefined")
    blocked = [entry["message"] for entry in browser.get_log("browser")]
    assert any("Content Security Policy" in message for message in blocked), blocked
    header = browser.find_element("css selector", "#judgments th:nth-child(3)")
    header.click()
    cells = [float(cell.text) for cell in browser.find_elements("css selector", "#judgments tr td:nth-child(3)")]
    assert cells == sorted(cells, reverse=True)


def test_systems_section_of_an_evaluate_report(browser, real_run, tmp_path):
    """`judgelab evaluate --out` on the real run: the Systems table, two forest plots and the
    significance matrix draw without console errors, system names are escaped."""
    import numpy as np

    from judgelab.data import load_judgments
    from judgelab.evaluate import evaluate
    from judgelab.report.systems import write_systems_report

    items = list(load_items(Path(str(files("judgelab") / "examples" / "demo_summaries.jsonl"))))[:8]
    items = [item.model_copy(update={"system_id": ATTACK if item.system_id == "system-0" else item.system_id})
             for item in items]
    judgments = load_judgments(real_run / "judgments.jsonl")
    report = evaluate(items, judgments, aspect="coherence", human_ids="all", n_resamples=200)
    page = write_systems_report(tmp_path / "systems", items, judgments, report,
                                judgments_file=real_run / "judgments.jsonl")
    _open(browser, page)
    assert [e for e in browser.get_log("browser") if e["level"] in ("SEVERE", "WARNING")] == []
    assert browser.execute_script("return window.__injected === undefined")
    # the judgments' run folder names the model and holds the calls, tokens and time (were blank)
    header = browser.find_element("css selector", "h1 + p").text
    assert header.startswith(f"model {TEST_MODEL} (") and "not recorded" not in header
    cards = browser.find_element("id", "accounting").text
    run_usage = json.loads((real_run / "run.json").read_text())["usage"]
    assert f"{run_usage['calls']}\npaid calls" in cards and f"{run_usage['wall_s']:.1f} s\nwall time" in cards
    rows = browser.find_elements("css selector", "#systems tr")
    assert len(rows) == 1 + len({item.system_id for item in items})
    assert ATTACK[:20] in browser.find_element("id", "systems").text
    figures = browser.execute_script("""
        return Array.from(document.querySelectorAll('figure[id^=figure-systems]')).map(f => {
            const box = f.querySelector('svg').getBoundingClientRect();
            return [box.width, box.height, f.querySelectorAll('circle, line, rect').length];
        });""")
    assert len(figures) == 3 and all(w > 100 and h > 60 and marks > 0 for w, h, marks in figures)
    assert np.isfinite(report.estimates["corrected"].value).all()
    # a handful of labels per system: the recommended ranking is flagged, in a box a reader sees
    box = browser.find_element("id", "provisional-ranking")
    assert box.is_displayed() and box.text.startswith("Provisional ranking: ") and "labels per system" in box.text
    save_screenshot(browser, tmp_path, "systems.png")


def test_pairwise_report_draws_the_forest_and_the_rank_sets(browser, benchmarks_dir, tmp_path):
    """`judgelab evaluate --out` on Chatbot Arena (GPT-4 the judge, 1,000 random human votes): one
    forest plot of every estimator's win probability with its interval (one scale for all), then
    each system's point rank and simultaneous rank set for judge, human and corrected, then the
    separable pairs. The figures are docs/images/pairwise-report.png (JUDGELAB_ARTIFACTS)."""
    import random

    from judgelab.data.arena import load_arena
    from judgelab.evaluate import evaluate
    from judgelab.report.systems import write_systems_report

    items, judgments = load_arena(benchmarks_dir / "chatbot_arena", judge="gpt-4-0125-preview")
    items = list(items)
    random.seed(0)  # the labelled.txt of docs/pairwise.md
    report = evaluate(items, judgments, human_ids=random.sample([item.id for item in items], 1000))
    page = write_systems_report(tmp_path / "arena", items, judgments, report)
    _open(browser, page)
    assert [e for e in browser.get_log("browser") if e["level"] in ("SEVERE", "WARNING")] == []
    figures = browser.execute_script("""
        return Array.from(document.querySelectorAll('figure[id^=figure-systems]')).map(f => {
            const svg = f.querySelector('svg'); const box = svg.getBoundingClientRect();
            return [svg.querySelector('title').textContent, box.width, box.height,
                    svg.querySelectorAll('circle').length, svg.querySelectorAll('line[stroke]').length,
                    Array.from(svg.querySelectorAll('circle title')).map(t => t.textContent)];
        });""")
    (forest, *_, dots, bars, tips), (ranks, *_, rank_dots, rank_bars, rank_tips), (pairs, *_) = figures
    # shrunk: a point estimate, no bar (its posterior intervals are no per-system confidence intervals)
    assert forest == "Win probability (ties half), 95% intervals" and dots == 4 * 20 and bars == 3 * 20
    assert ranks == "Rank sets holding for all systems at once (max-t, 95%); dot: point rank"
    assert rank_dots == 3 * 20 and rank_bars == 3 * 20 and pairs == "Separable pairs: corrected (PPI)"
    # the tooltips carry the figures of systems.json: gpt-4 first, its corrected value and rank set
    corrected = report.estimates["corrected"]
    k = corrected.systems.index("gpt-4")
    rank, best, worst = report.ranks("corrected")
    assert f"corrected (PPI) gpt-4: {corrected.value[k]:.3f} [{corrected.ci[k, 0]:.3f}, {corrected.ci[k, 1]:.3f}]" \
        in tips
    assert f"corrected (PPI) gpt-4: {rank[k]:.0f} [{best[k]:.0f}, {worst[k]:.0f}]" in rank_tips
    text = browser.find_element("tag name", "body").text
    assert "rank sets: max-t, holding for every system at once" in text and "calibration" not in text.split("Systems")[1][:400]
    # one rank column: the recommended point ranking with corrected's rank sets in brackets, and why
    # (evaluate/preferences.recommend), as the terminal prints it (issue 45, item 6)
    assert report.recommended["estimator"] == "shrunk"
    assert "rank: shrunk's point rank (recommended); in brackets, corrected's rank interval" in text
    assert "Recommended ranking: shrunk; on 30 random halvings" in text
    save_screenshot(browser, tmp_path, "pairwise-report.png", browser.find_element("css selector", ".figures"))
