"""report.html on a laptop and on a phone, in a real headless Chromium (issue 45, item 7).

A run report (`judgelab meta --out` on the demo summaries: what `judgelab demo` draws, without the
model) and two evaluate reports (pointwise answers, comparisons) from the shipped examples, opened at
1280x800 and 390x844. Before, at 390 px the pages laid out 690-1,243 px wide (the page scrolled
sideways) and at 1280 px the comparisons' systems table ran 61 px past its column. Now no page is
wider than the window, a wide table scrolls inside its own box, and at 1280 px no table needs to.
The screenshots land in the test's tmp dir (and $JUDGELAB_ARTIFACTS when set).
"""

from __future__ import annotations

import re
from importlib.resources import files
from pathlib import Path

import pytest

from tests.e2e.browser import save_screenshot, start_chrome
from tests.e2e.cli import run_cli

EXAMPLES = Path(str(files("judgelab") / "examples"))
VIEWPORTS = ((1280, 800), (390, 844))


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    driver = start_chrome(tmp_path_factory.mktemp("chromium-profile"))
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> dict[str, tuple[Path, str]]:
    """{name: (report.html, what the command printed)}."""
    folder = tmp_path_factory.mktemp("reports")
    commands = {
        "run": ("meta", "--data", EXAMPLES / "demo_summaries.jsonl", "--judgments", EXAMPLES / "demo_judgments.jsonl"),
        "answers": ("evaluate", "--data", EXAMPLES / "answers.jsonl", "--judgments",
                    EXAMPLES / "answers_judgments.jsonl", "--aspect", "helpfulness", "--human-ids", "all"),
        "comparisons": ("evaluate", "--data", EXAMPLES / "comparisons.jsonl", "--judgments",
                        EXAMPLES / "comparisons_judgments.jsonl", "--human-ids", "all"),
    }
    made = {}
    for name, command in commands.items():
        done = run_cli(*command, "--out", folder / name, env={"COLUMNS": "120"})
        assert done.returncode == 0, done.stderr
        made[name] = (folder / name / "report.html", done.stdout)
    return made


#: Where each table, plot and the page itself end, against the column they sit in. A table's box is its
#: scrolling container where it has one (.table-scroll): a wide table scrolls inside it, not the page.
MEASURE = """
const body = document.body, style = getComputedStyle(body), page = body.getBoundingClientRect();
const column = [page.left + parseFloat(style.paddingLeft), page.right - parseFloat(style.paddingRight)];
const past = (box, within) => box.right > within[1] + 0.5 || box.left < within[0] - 0.5;
const tables = Array.from(document.querySelectorAll('table')).map(table => {
    const box = table.closest('.table-scroll') || table;
    const outer = box.parentElement.getBoundingClientRect(), own = box.getBoundingClientRect();
    return {id: table.id || table.rows[0].textContent.trim().slice(0, 30),
            past_container: past(own, [outer.left, outer.right]), past_column: past(own, column),
            scrolls: box.scrollWidth > box.clientWidth + 1, width: Math.round(table.scrollWidth)};
});
const plots = Array.from(document.querySelectorAll('svg.plot')).filter(svg => past(svg.getBoundingClientRect(), column))
    .map(svg => svg.querySelector('title').textContent);
return {inner: window.innerWidth, client: document.documentElement.clientWidth,
        scroll: document.documentElement.scrollWidth, tables: tables, plots: plots};
"""


def _viewport(browser, width: int, height: int) -> None:
    """Exactly this viewport (a headless window's is shorter than the window by its frame)."""
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})


def _shoot(browser, html: Path, name: str, width: int, height: int, folder: Path) -> dict:
    """The page's measures at ``width`` x ``height``, and three screenshots: the top of the page, its main
    table at the top of the window, and the whole page (the viewport as tall as the page)."""
    _viewport(browser, width, height)
    browser.get(html.resolve().as_uri())
    found = browser.execute_script(MEASURE)
    assert found["inner"] == width
    save_screenshot(browser, folder, f"{name}-{width}x{height}.png")
    main = browser.find_elements("css selector", "#systems, #metrics")
    if main:
        browser.execute_script("arguments[0].scrollIntoView()", main[0])
        save_screenshot(browser, folder, f"{name}-{width}x{height}-table.png")
    _viewport(browser, width, min(browser.execute_script("return document.documentElement.scrollHeight"), 9000))
    save_screenshot(browser, folder, f"{name}-{width}-full.png")
    browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    return found


@pytest.mark.parametrize("name", ["run", "answers", "comparisons"])
@pytest.mark.parametrize(("width", "height"), VIEWPORTS)
def test_nothing_runs_past_its_column_on_a_laptop_or_a_phone(browser, reports, tmp_path, name, width, height):
    found = _shoot(browser, reports[name][0], name, width, height, tmp_path)
    assert found["scroll"] <= found["client"] <= width, found  # the page never scrolls sideways
    assert [t["id"] for t in found["tables"] if t["past_container"] or t["past_column"]] == [], found["tables"]
    assert found["plots"] == []
    if width >= 1280:  # room enough: every table fits its column without scrolling
        assert [t["id"] for t in found["tables"] if t["scrolls"]] == [], found["tables"]
    else:  # the systems table is wider than a phone: it scrolls in its own box
        assert name == "run" or any(t["scrolls"] for t in found["tables"] if t["id"] == "systems")


def _terminal_ranks(printed: str) -> dict[str, str]:
    """{system: rank cell} from the board's rows (``│ v1 │ ... │ 1 (1-3) │``)."""
    rows = [[cell.strip() for cell in line.split("│")[1:-1]] for line in printed.splitlines() if line.startswith("│")]
    return {row[0]: row[-1] for row in rows}


@pytest.mark.parametrize("name", ["answers", "comparisons"])
def test_the_report_reads_as_the_terminal_board_and_says_which_number_to_read_first(browser, reports, name):
    """One rank column for pointwise and pairwise boards, the same on the page as in the terminal (the
    page's was all "—" where the terminal printed ranks), explained once, with what to read first."""
    html, printed = reports[name]
    browser.get(html.resolve().as_uri())
    rows = browser.find_elements("css selector", "#systems tr")
    page_ranks = {row.find_elements("tag name", "td")[0].text: row.find_elements("tag name", "td")[-1].text
                  for row in rows[1:]}
    assert page_ranks == _terminal_ranks(printed) and set(page_ranks.values()) != {"—"}
    legend = browser.find_element("id", "rank-legend").text
    assert legend == "rank: shrunk's point rank (recommended); in brackets, corrected's rank interval."
    assert legend[:-1] in " ".join(printed.split())  # the terminal's closing line says the same
    assert browser.find_element("id", "read-first").text.startswith("Read first the rank column")
    notes = browser.find_element("id", "systems-reading").text
    assert "judge only:" in notes and "rank intervals:" in notes and "shrunk (EB):" in notes


def test_the_run_report_says_what_the_levels_mean_what_to_read_first_and_the_gap_scale(browser, reports):
    browser.get(reports["run"][0].resolve().as_uri())
    first = browser.find_element("id", "read-first-agreement").text
    assert first.startswith("Read first: group / spearman = ")
    highlighted = browser.find_element("css selector", "#metrics tr.first").text
    assert highlighted.startswith("group spearman")
    levels = browser.find_element("id", "levels").text
    assert all(f"{level}:" in levels for level in ("dataset", "group", "system"))
    caution = browser.find_element("id", "system-caution").text  # the demo has 4 systems
    assert re.search(r"rests on 4 systems: .* by chance \(its spearman interval here: [\d.]+ to [\d.]+\)", caution)
    gap = browser.find_element("id", "gap-note").text
    assert "0-1 of its own scale" in gap and "its 1-5 scale" not in gap  # the judge's scale: none in run.json
