"""`judgelab annotate` in a real headless Chromium: the server runs as a user starts it (its own process
on a free port) and the browser labels by keyboard, goes back, reloads, survives a SIGKILL of the server,
and a second annotator labels with overlap; then `meta --human` and `agreement` read the file written."""

from __future__ import annotations

import json
import re
import signal
from importlib.resources import files
from pathlib import Path

import krippendorff
import numpy as np
import pytest
from scipy.stats import spearmanr

from judgelab.annotate.task import build_task
from judgelab.annotate.view import STEP_ARGUMENTS
from judgelab.data import load_items, save_items
from judgelab.data.labels import load_labels, read_labels
from tests.e2e.annotate_server import (
    AnnotateServer,
    login,
    open_page,
    page_state,
    press,
    shown_item,
    wait_for_new_page,
)
from tests.e2e.browser import colours_in, requests_made, save_screenshot, start_chrome, uncached_reload
from tests.e2e.cli import run_cli, write_jsonl

pytest.importorskip("starlette", reason="needs the annotate extra")

SCRIPT = "<script>alert(1)</script>"
IMAGE = "<img src=x onerror=alert(2)>"
PAGE_BUDGET = 200_000  # bytes over the wire for a first, uncached page load


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    driver = start_chrome(tmp_path_factory.mktemp("chromium-profile"), network_log=True)
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def items_file(tmp_path_factory) -> Path:
    """12 demo summaries (3 articles x 4); the second carries markup in its source and output."""
    items = list(load_items(Path(str(files("judgelab") / "examples" / "demo_summaries.jsonl"))))[:12]
    items[1] = items[1].model_copy(update={"output": f"{SCRIPT} {IMAGE} {items[1].output}",
                                           "source": f"{IMAGE} {items[1].source}"})
    return save_items(items, tmp_path_factory.mktemp("data") / "items.jsonl")


def _args(items_file: Path, out: Path) -> tuple:
    return ("--data", items_file, "--aspect", "coherence", "--scale", "1-5", "--out", out, "--overlap", "0.5",
            "--seed", "3")


def _no_alert(driver) -> bool:
    from selenium.common.exceptions import NoAlertPresentException

    try:
        _ = driver.switch_to.alert
    except NoAlertPresentException:
        return True
    return False


def _label(driver, answers: dict[str, int], value: int) -> str:
    item = shown_item(driver)
    assert item is not None, driver.current_url
    press(driver, str(value))
    answers[item] = value
    return item


def test_keyboard_labelling_back_reload_kill_restart_and_a_second_annotator(browser, items_file, tmp_path):
    out = tmp_path / "labels.jsonl"
    order = [item.id for item in load_items(items_file)]
    shared = build_task(items_file, "coherence", tmp_path / "probe.jsonl", scale="1-5", overlap=0.5, seed=3).shared
    server = AnnotateServer(*_args(items_file, out)).start()
    try:
        browser.get_log("performance")
        open_page(browser, server.url)
        save_screenshot(browser, tmp_path, "annotate-login.png")
        login(browser, "alice")
        login_page = requests_made(browser)
        first_page = uncached_reload(browser)
        assert {r["url"].split("?")[0].removeprefix(server.url) for r in first_page if r["bytes"]} >= {
            "", "static/annotate.css", "static/annotate.js"}
        alice: dict[str, int] = {}
        for k in range(6):  # the first six items, in data order, rated 1..5 then 1
            assert _label(browser, alice, 1 + k % 5) == order[k]
        press(browser, "b")
        assert shown_item(browser) == order[5]
        press(browser, "b")
        assert shown_item(browser) == order[4]
        assert browser.find_element("css selector", ".choice.chosen").get_attribute("value") == "5"
        _label(browser, alice, 2)  # changed: 5 -> 2; back to the next new item
        assert shown_item(browser) == order[6]
        browser.refresh()
        wait_for_new_page(browser, None)
        assert shown_item(browser) == order[6]  # a reload shows the same item, nothing answered twice
        assert browser.find_element("id", "progress-text").text.startswith("6 of 12")
        assert _no_alert(browser)
        save_screenshot(browser, tmp_path, "annotate-item.png")

        assert server.kill(signal.SIGKILL) == -signal.SIGKILL  # mid-way, the browser still on item 7
        server = AnnotateServer(*_args(items_file, out), port=server.port).start()
        open_page(browser, server.url)  # the restart forgot the session: the name again, then item 7
        login(browser, "alice")
        assert shown_item(browser) == order[6]
        for k in range(2):
            _label(browser, alice, 3 + k)

        before = page_state(browser)  # the item page: wait until the login page has replaced it
        browser.find_element("css selector", "button.link").click()  # "switch": the second annotator
        wait_for_new_page(browser, before)
        login(browser, "bob")
        bob: dict[str, int] = {}
        while (item := shown_item(browser)) is not None:  # agrees with alice on every other item
            _label(browser, bob, alice.get(item, 3) if len(bob) % 2 == 0 else 1 + len(bob) % 5)
        assert browser.find_element("id", "done").is_displayed()
        requests = requests_made(browser)
    finally:
        server.kill(signal.SIGTERM)

    # bob got the shared half plus what alice had not taken; alice's own items went to nobody else
    assert set(bob) == {i for i in order if i in shared or i not in alice}
    assert set(alice) == set(order[:8])
    written = read_labels(out)
    assert len(written) == 6 + 1 + 2 + len(bob)  # one line per answer: the change is a line, the kill lost none
    assert len({label.answer_id for label in written}) == len(written)
    current = {(label.annotator, label.item_id): label.value for label in load_labels(out)}
    assert current == {**{("alice", i): float(v) for i, v in alice.items()},
                       **{("bob", i): float(v) for i, v in bob.items()}}

    # everything came from the server itself, and a first page load is light
    seen = login_page + first_page + requests
    assert len(seen) > 30 and all(r["url"].startswith(f"http://127.0.0.1:{server.port}/") for r in seen), \
        [r["url"] for r in seen if not r["url"].startswith("http://127.0.0.1")]
    weight = sum(r["bytes"] for r in first_page)
    assert 0 < weight < PAGE_BUDGET, first_page

    _meta_and_agreement_read_the_file(items_file, out, alice, bob, tmp_path)


def _meta_and_agreement_read_the_file(items_file: Path, out: Path, alice: dict, bob: dict, tmp_path: Path) -> None:
    order = [item.id for item in load_items(items_file)]
    judge = {item_id: float((position * 7) % 5 + 1) for position, item_id in enumerate(order)}
    judgments = write_jsonl(tmp_path / "judgments.jsonl", [{"item_id": i, "score": s} for i, s in judge.items()])
    result = run_cli("meta", "--data", items_file, "--judgments", judgments, "--human", out, "--json", "--bootstrap", "0")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    labelled = [i for i in order if i in alice or i in bob]
    human = [np.mean([d[i] for d in (alice, bob) if i in d]) for i in labelled]
    assert report["coverage"]["n_used"] == len(labelled) and report["aspect"] == "coherence"
    expected = spearmanr(human, [judge[i] for i in labelled]).statistic
    assert report["dataset"]["spearman"]["value"] == pytest.approx(expected)
    assert report["human_labels"]["annotators"] == 2

    result = run_cli("agreement", out, "--json", "--bootstrap", "0")
    assert result.returncode == 0, result.stderr
    agreement = json.loads(result.stdout)
    both = [i for i in order if i in alice and i in bob]
    assert agreement["n_overlap"] == len(both) > 0 and agreement["annotators"] == ["alice", "bob"]
    matrix = [[alice[i] for i in both], [bob[i] for i in both]]
    assert agreement["alpha"]["value"] == pytest.approx(krippendorff.alpha(matrix, level_of_measurement="ordinal"))
    text = run_cli("agreement", out, "--bootstrap", "0").stdout
    assert f"{len(both)} labelled by two or more" in text


def test_markup_in_a_judged_text_shows_as_text_and_never_runs(browser, items_file, tmp_path):
    with AnnotateServer(*_args(items_file, tmp_path / "labels.jsonl"), "--annotator", "<b>carol</b>") as server:
        browser.get_log("performance")
        open_page(browser, server.url)
        press(browser, "4")  # the second item is the one with markup
        output = browser.find_element("id", "output").text
        assert SCRIPT in output and IMAGE in output
        assert IMAGE in browser.find_element("id", "source").text
        assert browser.execute_script("return document.querySelectorAll('#item script, #item img').length") == 0
        assert "<b>carol</b>" in browser.find_element("css selector", ".who").text
        assert _no_alert(browser)
        assert not [r for r in requests_made(browser) if r["url"].endswith("/x")]  # the img was never fetched
        console = [e for e in browser.get_log("browser") if e["level"] in ("SEVERE", "WARNING")]
        assert console == []
        shot = save_screenshot(browser, tmp_path, "annotate-markup.png")
    assert colours_in(browser, shot) > 20
    assert "alert" not in server.output and "demo-d1" not in server.output  # no item data in the server's logs


def test_markup_in_criteria_and_in_a_name_another_annotator_sees_never_runs(browser, items_file, tmp_path):
    """Issue 50, item 21 (held, kept as a test): the criteria (``--criteria``) and a name typed on the login
    page, which every later login page lists to the other annotators, inside an attribute."""
    name = f'"><img src=x onerror=alert(5)>{SCRIPT}'
    criteria = f"{SCRIPT} {IMAGE} Coherence: the summary reads as one whole."
    with AnnotateServer(*_args(items_file, tmp_path / "labels.jsonl"), "--criteria", criteria) as server:
        browser.delete_all_cookies()
        browser.get_log("performance")
        open_page(browser, server.url)
        login(browser, name)
        assert SCRIPT in browser.find_element("css selector", ".criteria .text").text
        press(browser, "3")
        browser.delete_all_cookies()  # another annotator: the login page lists the names given so far
        open_page(browser, server.url)
        listed = browser.execute_script("return [...document.querySelectorAll('#known-names option')].map(o => o.value)")
        assert listed == [name]
        assert browser.execute_script("return document.querySelectorAll('main script, main img').length") == 0
        assert _no_alert(browser)
        assert not [r for r in requests_made(browser) if r["url"].endswith("/x")]  # no img was fetched
    assert [label.annotator for label in load_labels(tmp_path / "labels.jsonl")] == [name]


def test_pairwise_order_is_shuffled_per_item_and_written_in_the_items_order(browser, tmp_path):
    items = [{"id": f"p{i}", "instruction": f"Say {i}", "output_a": f"A{i}", "output_b": f"B{i}"} for i in range(8)]
    data = write_jsonl(tmp_path / "pairs.jsonl", items)
    out = tmp_path / "labels.jsonl"
    with AnnotateServer("--data", data, "--aspect", "preference", "--out", out, "--annotator", "dana") as server:
        open_page(browser, server.url)
        save_screenshot(browser, tmp_path, "annotate-pairwise.png")
        shown, keys = [], []
        for k in range(len(items)):
            shown.append(browser.find_element("id", "left").text)
            keys.append("ab"[k % 2])  # response A (left), then B (right): b picks, it does not go back
            before = shown_item(browser)
            press(browser, keys[-1])
            assert shown_item(browser) != before  # the next item shows
    written = {label.item_id: label for label in read_labels(out)}
    swapped = [left.startswith("B") for left in shown]
    assert 0 < sum(swapped) < len(items)  # both orders occur
    for item, left, key in zip(items, shown, keys, strict=True):
        label = written[item["id"]]
        assert label.order == ("ba" if left.startswith("B") else "ab")
        picked_a = (key == "a") != left.startswith("B")  # in the items' own order
        assert label.value == ("a" if picked_a else "b")


# -- issue #32 items 4-7: what a person labelling 100 items meets ---------------------------------------------------
def _first_rows(source: Path, n: int, folder: Path, **update) -> Path:
    """The first ``n`` items of a shared benchmark file, without their human scores (a fresh session)."""
    items = [item.model_copy(update={"scores": {}, **update}) for item in list(load_items(source))[:n]]
    return save_items(items, folder / source.name)


def _clipped(driver) -> list[str]:
    """Buttons whose caption does not fit (cut off, or running out of the button)."""
    return driver.execute_script("""
        return Array.from(document.querySelectorAll('.choice')).filter(button => {
            const box = button.getBoundingClientRect(), range = document.createRange();
            range.selectNodeContents(button);
            const text = range.getBoundingClientRect();
            return button.scrollWidth > button.clientWidth + 1 || text.left < box.left - 1 || text.right > box.right + 1;
        }).map(button => button.textContent.trim());""")


def _visible(driver, element_id: str) -> bool:
    found = driver.find_elements("id", element_id)
    return bool(found) and found[0].is_displayed()


def _keys(driver, keys: str) -> None:
    """Keys that stay on the page (no navigation to wait for)."""
    from selenium.webdriver.common.action_chains import ActionChains

    ActionChains(driver).send_keys(keys).perform()


def test_relevance_items_show_whole_captions_trecs_grades_and_relevance_criteria(browser, benchmarks_dir, tmp_path):
    data = _first_rows(benchmarks_dir / "trec_dl2019.jsonl", 6, tmp_path)
    captions = "0=irrelevant,1=related,2=relevant,3=perfect"
    with AnnotateServer("--data", data, "--aspect", "relevance", "--out", tmp_path / "given.jsonl",
                        "--labels", captions, "--annotator", "erin") as server:
        open_page(browser, server.url)
        texts = [b.text for b in browser.find_elements("css selector", ".choice")]
        assert texts == ["0 irrelevant", "1 related", "2 relevant", "3 perfect"]  # whole, not "irreleva"
        assert _clipped(browser) == []
    out = tmp_path / "labels.jsonl"
    with AnnotateServer("--data", data, "--aspect", "relevance", "--out", out, "--annotator", "erin") as server:
        open_page(browser, server.url)
        values = [b.get_attribute("value") for b in browser.find_elements("css selector", ".choice")]
        assert values == ["0", "1", "2", "3"]  # the items' 0-3 grades, not a 1-5 scale
        assert _clipped(browser) == []
        criteria = browser.find_element("css selector", ".criteria .text").text
        assert "query" in criteria and "passage" in criteria and "output" not in criteria and "source" not in criteria
        assert "exact answer" in browser.find_element("css selector", ".anchors").text
        save_screenshot(browser, tmp_path, "annotate-relevance.png")
        press(browser, "3")
    assert "scale 0-3 (0 irrelevant, 1 related, 2 highly relevant, 3 perfectly relevant)" in server.output
    assert [(label.value, label.scale) for label in read_labels(out)] == [(3.0, (0.0, 3.0))]


def test_help_overlay_anchors_reference_key_dark_mode_and_the_history(browser, items_file, tmp_path):
    data = save_items([item.model_copy(update={"reference": f"Reference summary {k}."})
                       for k, item in enumerate(load_items(items_file))][:5], tmp_path / "with-reference.jsonl")
    out = tmp_path / "labels.jsonl"
    with AnnotateServer("--data", data, "--aspect", "coherence", "--out", out, "--annotator", "fay") as server:
        open_page(browser, server.url)
        browser.execute_script("localStorage.clear()")
        anchors = browser.find_element("css selector", ".anchors").text
        assert "1 a heap of unrelated sentences" in anchors and "5 well structured" in anchors

        assert not _visible(browser, "help")
        _keys(browser, "?")
        assert _visible(browser, "help") and "dark or light" in browser.find_element("id", "help").text
        save_screenshot(browser, tmp_path, "annotate-help.png")
        _keys(browser, "?")
        assert not _visible(browser, "help")
        _keys(browser, "?")
        from selenium.webdriver.common.keys import Keys

        _keys(browser, Keys.ESCAPE)
        assert not _visible(browser, "help")

        assert not _visible(browser, "reference")  # folded
        _keys(browser, "r")
        assert _visible(browser, "reference") and browser.find_element("id", "reference").text == "Reference summary 0."
        _keys(browser, "r")
        assert not _visible(browser, "reference")

        background = "return getComputedStyle(document.body.parentElement).backgroundColor"
        light = browser.execute_script(background)
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme",
                                                                             "value": "dark"}]})
        try:
            dark = browser.execute_script(background)
            assert _luminance(dark) < 0.2 < 0.8 < _luminance(light), (dark, light)  # follows the system
            _keys(browser, "d")  # the toggle: light although the system is dark, and remembered
            assert browser.execute_script(background) == light
            browser.refresh()
            wait_for_new_page(browser, None)
            assert browser.execute_script(background) == light
            _keys(browser, "d")
            assert browser.execute_script(background) == dark
            assert browser.execute_script("return localStorage.getItem('judgelab-annotate-theme')") == "dark"
            save_screenshot(browser, tmp_path, "annotate-dark.png")
        finally:
            browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})
            browser.execute_script("localStorage.clear()")

        order = [item.id for item in load_items(data)]
        press(browser, "2")
        press(browser, "s")
        press(browser, "4")
        press(browser, "h")  # the history: every answer, each a link to reopen it
        rows = browser.find_elements("css selector", "#history tbody tr")
        assert [row.find_elements("css selector", "td")[-1].text for row in rows] == ["2", "skipped", "4"]
        save_screenshot(browser, tmp_path, "annotate-history.png")
        before = page_state(browser)
        rows[0].find_element("css selector", "a.revisit-link").click()
        wait_for_new_page(browser, before)
        assert shown_item(browser) == order[0]
        assert browser.find_element("css selector", ".choice.chosen").get_attribute("value") == "2"
        press(browser, "5")  # changed from the history; back to the next new item
        assert shown_item(browser) == order[3]
        press(browser, "h")
        assert [row.find_elements("css selector", "td")[-1].text
                for row in browser.find_elements("css selector", "#history tbody tr")] == ["5", "skipped", "4"]
        press(browser, "h")  # h again: back to labelling
        assert shown_item(browser) == order[3]
    assert {label.item_id: label.value for label in load_labels(out)} == {order[0]: 5.0, order[2]: 4.0}


def _luminance(css: str) -> float:
    red, green, blue = (int(v) for v in re.findall(r"\d+", css)[:3])
    return (0.2126 * red + 0.7152 * green + 0.0722 * blue) / 255


def test_several_aspects_on_one_page_with_a_keyboard_flow_from_one_to_the_next(browser, benchmarks_dir, tmp_path):
    data = _first_rows(benchmarks_dir / "sfres.jsonl", 4, tmp_path)
    out = tmp_path / "labels.jsonl"
    from selenium.webdriver.common.keys import Keys

    with AnnotateServer("--data", data, "--aspect", "naturalness,informativeness", "--out", out,
                        "--annotator", "gus") as server:
        open_page(browser, server.url)
        groups = browser.find_elements("css selector", ".aspect-group")
        assert [g.find_element("css selector", "legend").text for g in groups] == ["1. naturalness",
                                                                                   "2. informativeness"]
        active = "return document.querySelector('.aspect-group.active').dataset.aspect"
        assert browser.execute_script(active) == "0"
        first = shown_item(browser)
        _keys(browser, "2")  # naturalness 2, then the focus moves on; the item stays
        assert browser.execute_script(active) == "1" and shown_item(browser) == first
        save_screenshot(browser, tmp_path, "annotate-multi.png")
        press(browser, "3")  # informativeness 3: every aspect has a value, so the answer is saved
        second = shown_item(browser)
        assert second != first
        _keys(browser, Keys.ARROW_DOWN + "1")  # arrow keys move between aspects; the last one rated ...
        assert shown_item(browser) == second and browser.execute_script(active) == "0"  # ... naturalness is open
        press(browser, "1")
        press(browser, "b")  # back: both answers are shown, and one can be changed alone
        checked = "return Array.from(document.querySelectorAll('.aspect-group input:checked')).map(i => i.value)"
        assert browser.execute_script(checked) == ["1", "1"]
        _keys(browser, Keys.ARROW_DOWN)
        press(browser, "2")  # informativeness 1 -> 2; the last aspect: saved
        press(browser, "s")  # a skip skips every aspect
    lines = read_labels(out)
    assert [(x.item_id, x.aspect, x.value) for x in lines] == [
        (first, "naturalness", 2.0), (first, "informativeness", 3.0),
        (second, "naturalness", 1.0), (second, "informativeness", 1.0),
        (second, "naturalness", 1.0), (second, "informativeness", 2.0),
        (lines[-1].item_id, "naturalness", None), (lines[-1].item_id, "informativeness", None)]
    assert "aspects 'naturalness' (scale 1-6), 'informativeness' (scale 1-6)" in server.output
    for aspect in ("naturalness", "informativeness"):  # meta reads each aspect's labels unchanged
        result = run_cli("agreement", out, "--aspect", aspect, "--json")
        assert result.returncode == 2 and "only one annotator" in result.stderr


def test_the_done_page_counts_skips_apart_from_labels(browser, items_file, tmp_path):
    data = save_items(list(load_items(items_file))[:3], tmp_path / "three.jsonl")
    with AnnotateServer("--data", data, "--aspect", "coherence", "--out", tmp_path / "labels.jsonl",
                        "--annotator", "hal") as server:
        open_page(browser, server.url)
        for key in "4s2":
            press(browser, key)
        assert browser.find_element("id", "answered").text == "2 items labelled"
        assert browser.find_element("id", "skipped").text == "1 skipped"
    assert "aspect 'coherence', scale 1-5" in server.output


def test_until_decided_stops_asking_once_a_planted_regression_is_decided(browser, tmp_path):
    """60 comparisons of v1 (baseline) with v2 (candidate); the annotator prefers v1's answer 9 times in 10.
    With --until-decided worse:v1,v2 the app shows the items in random order and, after each label, reads
    the labels so far as a confidence sequence; it stops asking once v2 is shown worse, well before 60."""
    rng = np.random.default_rng(5)
    items = []
    for k in range(60):
        first = ("v1", "v2") if k % 2 else ("v2", "v1")  # both positions
        items.append({"id": f"c{k}", "instruction": f"Question {k}", "system_a": first[0], "system_b": first[1],
                      "output_a": f"answer of {first[0]} to {k}", "output_b": f"answer of {first[1]} to {k}"})
    data = write_jsonl(tmp_path / "comparisons.jsonl", items)
    out = tmp_path / "labels.jsonl"
    labelled = 0
    with AnnotateServer("--data", data, "--aspect", "preference", "--out", out, "--annotator", "rae",
                        "--until-decided", "worse:v1,v2") as server:
        open_page(browser, server.url)
        while shown_item(browser) is not None:
            left = browser.find_element("id", "left").text
            prefers_baseline = rng.random() < 0.9
            press(browser, "a" if ("v1" in left) == prefers_baseline else "b")
            labelled += 1
            assert labelled <= 60
        done = browser.find_element("id", "done").text
        decision = browser.find_element("id", "decision").text
        save_screenshot(browser, tmp_path, "annotate-decided.png")
    assert done.startswith("Decided") and "no more labels are needed" in decision
    assert "v1" not in done and "v2" not in done  # a blind session: the answer goes to the terminal (issue 50)
    assert "judgelab annotate: decided: is v2 worse than v1 by more than 0 (win rate)? v2 is worse than v1 by more " \
           "than the margin" in server.output
    assert 5 <= labelled < 40, labelled  # stopped early, on the labels' evidence
    assert len(read_labels(out)) == labelled
    # the gate, reading the same labels as a sequence, agrees
    judged = write_jsonl(tmp_path / "judged.jsonl", [{"item_id": i["id"], "label": "tie"} for i in items])
    gate = run_cli("compare", "--data", data, "--judgments", judged, "--baseline", "v1", "--candidate", "v2",
                   "--human", out, "--sequential", "--json")
    assert gate.returncode == 1, gate.stderr
    assert json.loads(gate.stdout)["decision"] == "worse"


# -- issue #41 items 13-16: a newcomer's first hour, on a laptop window and on a phone ------------------------------
#: A laptop's browser window (its toolbars take their share of the 800 px: headless Chromium leaves 657) and
#: a phone's screen, which is the page's viewport.
VIEWPORTS = {"laptop": (1280, 800), "phone": (390, 844)}


@pytest.fixture(params=list(VIEWPORTS))
def viewport(request, browser):
    """The browser at a laptop's window size or a phone's screen for one test; the name and (width, height)."""
    width, height = VIEWPORTS[request.param]
    if request.param == "phone":  # a mobile browser: the screen is the viewport, laid out as a phone lays it out
        browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": True})
    else:
        browser.set_window_size(width, height)
    try:
        yield request.param, (width, height)
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
        browser.set_window_size(1280, 900)


def _taught(driver, selector: str) -> dict[str, str]:
    """The keys a list or table of keys teaches (shown or not: the help is folded away until ``?``): each
    key shown (``kbd``) with the text of its row."""
    def text(element) -> str:
        return " ".join(element.get_attribute("textContent").split())

    taught: dict[str, str] = {}
    for row in driver.find_elements("css selector", f"{selector} li, {selector} tr"):
        for kbd in row.find_elements("css selector", "kbd"):
            taught.setdefault(text(kbd).lower(), text(row))
    return taught


def _offered(driver) -> dict[str, str]:
    """What the page's own key hints say: for each element a key clicks (``data-key``) that shows a key
    (``kbd``), the key shown, which must be the key that clicks it; the element's text by key."""
    offered = {}
    for element in driver.find_elements("css selector", "[data-key]"):
        shown = [kbd.text.strip().lower() for kbd in element.find_elements("css selector", "kbd")]
        if shown and element.is_displayed():
            assert shown[0] == element.get_attribute("data-key"), (shown, element.get_attribute("outerHTML"))
            offered[shown[0]] = element.text
    return offered


def _overflow(driver, width: int) -> list[str]:
    """Elements that reach past the right edge of a page ``width`` wide (the page would scroll sideways)."""
    return driver.execute_script("""
        const width = arguments[0];
        const wide = document.documentElement.scrollWidth > width ? ['the page: ' + document.documentElement.scrollWidth] : [];
        return wide.concat(Array.from(document.querySelectorAll('body *')).filter(element => {
            const box = element.getBoundingClientRect();
            return box.width > 0 && box.right > width + 1 && !element.closest('.overlay[hidden]');
        }).map(element => element.tagName + '#' + element.id + '.' + element.className + ' ' + element.textContent.slice(0, 40)));
        """, width)


def _press_stays(driver, key: str) -> None:
    """A key that must do nothing here: the page stays (no navigation starts within a second)."""
    import time

    before = page_state(driver)
    _keys(driver, key)
    time.sleep(1.0)
    assert page_state(driver) == before, f"{key!r} did something on {driver.current_url}"


def test_every_page_teaches_the_keys_of_its_session_and_they_work_there(browser, viewport, tmp_path):
    name, (width, _) = viewport
    pairs = write_jsonl(tmp_path / "pairs.jsonl", [{"id": f"p{k}", "instruction": f"Say {k}", "output_a": f"A{k}",
                                                    "output_b": f"B{k}"} for k in range(3)])
    with AnnotateServer("--data", pairs, "--aspect", "preference", "--out", tmp_path / "pairs-labels.jsonl") as server:
        open_page(browser, server.url)
        taught = _taught(browser, ".keys")
        assert {"a", "b", "t", "p", "s", "h", "n"} <= set(taught) and not set(taught) & set("0123456789"), taught
        assert "B is better" in taught["b"] and "back" in taught["p"] and "back" not in taught["b"], taught
        assert _overflow(browser, width) == []
        save_screenshot(browser, tmp_path, f"annotate-pairwise-login-{name}.png")
        login(browser, "ivy")
        assert _taught(browser, "#help") == taught  # the login page and the help over an item say the same
        first = shown_item(browser)
        press(browser, "a")
        assert shown_item(browser) != first
        assert set(_offered(browser)) >= {"a", "b", "t", "p", "s", "h"} and "B is better" in _offered(browser)["b"]
        press(browser, "p")  # back
        assert shown_item(browser) == first
        press(browser, "t")  # a new answer; on to the next new item
        press(browser, "b")
        press(browser, "a")
        assert browser.find_elements("id", "done")
        offered = _offered(browser)
        assert "p" in offered and "back" in offered["p"] and "b" not in offered, offered
        save_screenshot(browser, tmp_path, f"annotate-pairwise-done-{name}.png")
        _press_stays(browser, "b")  # b picks response B: on the done page there is none, so it does nothing
        press(browser, "p")  # ... and p goes back, as it does on an item
        assert shown_item(browser) == "p2"
        press(browser, "h")
        assert "h" in _offered(browser)
        press(browser, "h")
        assert browser.find_elements("id", "done")
    points = write_jsonl(tmp_path / "points.jsonl", [{"id": f"i{k}", "source": f"Text {k}", "output": f"Summary {k}"}
                                                     for k in range(2)])
    with AnnotateServer("--data", points, "--aspect", "coherence", "--scale", "1-5",
                        "--out", tmp_path / "points-labels.jsonl") as server:
        open_page(browser, server.url)
        taught = _taught(browser, ".keys")
        assert {key for key in taught if key.isdigit()} == set("12345"), taught  # this scale's keys, not 1...9, 0
        assert "back" in taught["b"] and "p" not in taught and "a" not in taught, taught
        login(browser, "ivy")
        assert _taught(browser, "#help") == taught
        press(browser, "4")
        press(browser, "2")
        offered = _offered(browser)
        assert "b" in offered and "back" in offered["b"] and "p" not in offered, offered
        press(browser, "b")
        assert shown_item(browser) == "i1"


def test_pairwise_history_shows_each_answer_as_the_annotator_saw_it(browser, viewport, tmp_path):
    name, (width, _) = viewport
    items = [{"id": f"p{k}", "instruction": f"Say {k}", "output_a": f"A{k}", "output_b": f"B{k}"} for k in range(8)]
    data = write_jsonl(tmp_path / "pairs.jsonl", items)
    keys = "abtabtab"
    with AnnotateServer("--data", data, "--aspect", "preference", "--out", tmp_path / "labels.jsonl",
                        "--annotator", "dana") as server:
        open_page(browser, server.url)
        lefts = []
        for key in keys:
            lefts.append(browser.find_element("id", "left").text)
            press(browser, key)
        assert 0 < sum(left.startswith("B") for left in lefts) < len(items)  # some shown swapped
        press(browser, "h")
        rows = browser.find_elements("css selector", "#history tbody tr")
        shown = [row.find_elements("css selector", "td")[-1].text for row in rows]
        said = {"a": "A is better", "b": "B is better", "t": "tie"}
        assert shown == [said[key] for key in keys], list(zip(lefts, keys, shown, strict=True))
        assert _overflow(browser, width) == []
        save_screenshot(browser, tmp_path, f"annotate-pairwise-history-{name}.png")
        swapped = next(k for k, left in enumerate(lefts) if left.startswith("B") and keys[k] == "a")
        before = page_state(browser)
        rows[swapped].find_element("css selector", "a.revisit-link").click()  # reopened: still A, on the left
        wait_for_new_page(browser, before)
        assert browser.find_element("id", "left").text == lefts[swapped]
        assert browser.find_element("css selector", ".choice.chosen").get_attribute("value") == "left"
    written = {label.item_id: label for label in read_labels(tmp_path / "labels.jsonl")}
    assert written[f"p{swapped}"].value == "b" and written[f"p{swapped}"].order == "ba"  # the file: the items' order


def test_unknown_text_columns_are_named_when_an_item_would_show_without_its_instruction(browser, viewport, tmp_path):
    name, (width, _) = viewport
    rows = [{"id": f"c{k}", "question_id": f"q{k}", "question": f"Which city is the capital of country {k}?",
             "output_a": f"City {k}", "output_b": f"Town {k}"} for k in range(3)]
    data = write_jsonl(tmp_path / "comparisons.jsonl", rows)
    with AnnotateServer("--data", data, "--aspect", "preference", "--out", tmp_path / "labels.jsonl",
                        "--annotator", "ned") as server:
        open_page(browser, server.url)
        assert "follows the instruction" in browser.find_element("css selector", ".criteria").text
        notice = browser.find_elements("id", "unshown")
        assert notice and notice[0].is_displayed(), "the page shows the responses without a word about the question"
        text = notice[0].text
        assert "question" in text and "question_id" not in text and "instruction" in text, text
        assert _overflow(browser, width) == []
        save_screenshot(browser, tmp_path, f"annotate-unshown-{name}.png")
    # annotate's own warning (the loader's rename hint for every unknown column comes first)
    warned = [line for line in server.output.splitlines() if line.startswith("warning:") and "annotate" in line]
    assert warned and "'question'" in warned[0] and "question_id" not in warned[0] and "instruction" in warned[0], \
        server.output


def _scale_rows(driver) -> list[list[str]]:
    """The choice buttons of each scale on the page, grouped by the line they are on."""
    return driver.execute_script("""
        return Array.from(document.querySelectorAll('.choices')).flatMap(choices => {
            const lines = new Map();
            for (const button of choices.querySelectorAll('.choice')) {
                const top = Math.round(button.getBoundingClientRect().top);
                lines.set(top, (lines.get(top) || []).concat([button.textContent.trim()]));
            }
            return Array.from(lines.values());
        });""")


def _widths(driver) -> set[int]:
    return set(driver.execute_script(
        "return Array.from(document.querySelectorAll('.choice')).map(b => Math.round(b.getBoundingClientRect().width))"))


def test_a_scale_reads_as_one_row_of_buttons(browser, viewport, tmp_path):
    name, (width, _) = viewport
    data = write_jsonl(tmp_path / "items.jsonl", [{"id": f"i{k}", "source": f"Text {k}", "output": f"Summary {k}"}
                                                  for k in range(2)])
    for scale, keys in (("1-5", ["1", "2", "3", "4", "5"]), ("1-10", [*"123456789", "0"])):
        with AnnotateServer("--data", data, "--aspect", "coherence", "--scale", scale, "--out",
                            tmp_path / f"labels-{scale}.jsonl", "--annotator", "ora") as server:
            open_page(browser, server.url)
            rows = _scale_rows(browser)
            assert len(rows) == 1 and len(rows[0]) == len(keys), rows
            assert max(_widths(browser)) - min(_widths(browser)) <= 1 and _clipped(browser) == []
            assert [b.get_attribute("data-key") for b in browser.find_elements("css selector", ".choice")] == keys
            assert _overflow(browser, width) == []
            save_screenshot(browser, tmp_path, f"annotate-scale-{scale}-{name}.png")


def test_two_aspects_keep_the_note_back_and_skip_in_view(browser, viewport, tmp_path):
    name, (width, height) = viewport
    data = write_jsonl(tmp_path / "items.jsonl", [{"id": f"r{k}", "source": f"inform(name=place {k}; area=north)",
                                                   "output": f"Place {k} is a nice restaurant in the north of town.",
                                                   "scale": [1, 6]} for k in range(3)])
    with AnnotateServer("--data", data, "--aspect", "naturalness,informativeness", "--out", tmp_path / "labels.jsonl",
                        "--annotator", "pat") as server:
        open_page(browser, server.url)
        _keys(browser, "2")
        press(browser, "3")  # answered: the next item offers back
        assert [len(row) for row in _scale_rows(browser)] == [6, 6]
        assert _clipped(browser) == [] and _overflow(browser, width) == []
        if name == "laptop":  # beside the item, everything of the answer in view without scrolling
            inner = browser.execute_script("return innerHeight")
            bottoms = {element: browser.find_element("id", element).rect["y"] + browser.find_element("id", element)
                       .rect["height"] for element in ("note", "back", "skip", "save")}
            assert max(bottoms.values()) <= inner, (bottoms, inner)
        save_screenshot(browser, tmp_path, f"annotate-two-aspects-{name}.png")


def _broken_tokens(driver, selector: str) -> list[str]:
    """Words of the commands in ``selector`` split over two lines though they would fit on one."""
    return driver.execute_script("""
        const problems = [];
        for (const code of document.querySelectorAll(arguments[0])) {
            const line = code.closest('p, li, div').getBoundingClientRect().width;
            const walker = document.createTreeWalker(code, NodeFilter.SHOW_TEXT);
            for (let node = walker.nextNode(); node; node = walker.nextNode()) {
                for (const match of node.data.matchAll(/\\S+/g)) {
                    const range = document.createRange();
                    range.setStart(node, match.index);
                    range.setEnd(node, match.index + match[0].length);
                    const rects = Array.from(range.getClientRects()).filter(r => r.width > 0);
                    const tops = new Set(rects.map(r => Math.round(r.bottom)));
                    const wide = rects.reduce((sum, r) => sum + r.width, 0);
                    if (tops.size > 1 && wide <= line) problems.push(match[0]);
                }
            }
        }
        return problems;""", selector)


def test_progress_history_and_the_done_page_fit_the_window(browser, viewport, tmp_path):
    name, (width, _) = viewport
    token = "https://example.org/" + "a-very-long-unbroken-path-segment" * 6
    rows = [{"id": f"doc-{k}", "source": f"Article {k}.", "output": token if k == 0 else f"Summary {k}."}
            for k in range(3)]
    data = write_jsonl(tmp_path / "items.jsonl", rows)
    out = tmp_path / "labels by alice" / "labels.jsonl"
    out.parent.mkdir()
    with AnnotateServer("--data", data, "--aspect", "coherence", "--scale", "1-5", "--out", out,
                        "--annotator", "alice") as server:
        open_page(browser, server.url)
        press(browser, "3")
        press(browser, "4")  # the time estimate shows beside the count
        text = browser.find_element("id", "progress-text")
        assert "left" in text.text and text.rect["x"] + text.rect["width"] <= width
        assert browser.execute_script("const t = arguments[0]; return t.scrollWidth <= t.clientWidth", text)
        assert _overflow(browser, width) == []
        save_screenshot(browser, tmp_path, f"annotate-progress-{name}.png")
        press(browser, "h")
        assert _overflow(browser, width) == []
        answers = browser.find_elements("css selector", "#history td.answer")
        assert [a.text for a in answers] == ["3", "4"] and all(a.rect["x"] + a.rect["width"] <= width for a in answers)
        save_screenshot(browser, tmp_path, f"annotate-history-{name}.png")
        press(browser, "h")
        press(browser, "5")
        done = browser.find_element("id", "done").text
        assert str(out) in done and f"--human '{out}'" in done, done  # the path given, quoted for a shell
        assert f"--data {data}" in done  # the items' file, as given
        assert _broken_tokens(browser, "#done code") == []
        assert _overflow(browser, width) == []
        save_screenshot(browser, tmp_path, f"annotate-done-{name}.png")


# -- issue #48 item 3: conversations, retrieved passages and agent runs ----------------------------------------------
#: The shipped conversation with a tool call, an answer with three titled passages, and an agent's run of three
#: steps (one with a long unbroken URL, which must wrap, not widen the page).
CALL_LINE = 'calls search_notes({"query": "cake orders"})'
LONG_URL = "https://example.org/" + "a-very-long-unbroken-path-segment" * 4


def _rich_items(folder: Path) -> Path:
    shipped = Path(str(files("judgelab") / "examples" / "conversations.jsonl")).read_text().splitlines()
    chat = next(row for row in map(json.loads, shipped) if row["id"] == "order-v1")
    rag = {"id": "rag-1", "source": "When can I pick up bread on a weekend, and do you bake spelt?",
           "output": "On Saturday from 7:00 to 18:00 and on Sunday from 8:00 to 12:00 [hours]. Yes: the spelt loaf, "
                     "baked every morning [spelt].",
           "contexts": [{"id": "hours", "title": "Opening hours", "source": "notes/hours.md",
                         "text": "Open Tuesday to Saturday, 7:00-18:00; Sunday 8:00-12:00; closed on Mondays."},
                        {"id": "spelt", "title": "Breads", "text": "The spelt loaf is baked every morning; it "
                                                                   "contains gluten."},
                        {"id": "cakes", "title": "Orders", "text": "Cakes are ordered at least 48 hours ahead."}]}
    run = {"id": "run-1", "source": "Is the bakery open on Monday? Check its site.",
           "output": "No: it is closed on Mondays, and opens again on Tuesday at 7:00.",
           "trajectory": [
               {"tool": "search", "arguments": {"query": "bakery opening hours"}, "thought": "Find the bakery's site.",
                "observation": f"1. {LONG_URL}"},
               {"tool": "fetch_page", "arguments": {"url": LONG_URL}, "thought": "Read its hours.",
                "observation": "Open Tuesday to Saturday, 7:00-18:00; closed on Mondays."},
               {"tool": "answer", "arguments": None, "thought": "It says closed on Mondays.", "observation": None}]}
    return write_jsonl(folder / "rich.jsonl", [chat, rag, run])


def _rect(driver, selector: str) -> dict:
    return driver.execute_script("const b = document.querySelector(arguments[0]).getBoundingClientRect();"
                                 "return {left: b.left, right: b.right, top: b.top, bottom: b.bottom};", selector)


def _beside_or_below(driver, name: str) -> None:
    """The passages beside the answer on a laptop, below it on a phone."""
    answer, passages = _rect(driver, ".with-passages > .answer"), _rect(driver, "#passages")
    if name == "laptop":
        assert passages["left"] >= answer["right"] and passages["top"] < answer["bottom"], (answer, passages)
    else:
        assert passages["top"] >= answer["bottom"], (answer, passages)


def test_a_conversation_passages_and_a_trajectory_show_as_such_and_label_as_before(browser, viewport, tmp_path):
    name, (width, _) = viewport
    data = _rich_items(tmp_path)
    chat = next(iter(load_items(data)))
    out = tmp_path / "labels.jsonl"
    with AnnotateServer("--data", data, "--aspect", "helpfulness", "--scale", "1-5", "--out", out,
                        "--annotator", "uma") as server:
        open_page(browser, server.url)
        # the chat: one bubble per message, by role; the tool call on one line; the last reply the one to rate
        bubbles = browser.find_elements("css selector", "#chat .bubble")
        assert [b.get_attribute("data-role") for b in bubbles] == [m.role for m in chat.messages]
        assert [b.find_element("css selector", ".speaker").get_attribute("textContent") for b in bubbles] == [
            "system", "user", "assistant", "tool result · search_notes", "assistant"]
        assert [c.text for c in browser.find_elements("css selector", "#chat .call")] == [CALL_LINE]
        rated = browser.find_elements("css selector", "#chat .bubble.rated")
        assert len(rated) == 1 and rated[0] == bubbles[-1] and "reply to rate" in rated[0].text
        assert browser.find_element("id", "output").text == chat.output
        assert not browser.find_elements("id", "source")  # the chat replaces its rendering as text
        heads = [h.text for h in browser.find_elements("css selector", "#passages .passage-head")]
        assert heads == ["[orders] Orders"]
        _beside_or_below(browser, name)
        assert _overflow(browser, width) == []
        save_screenshot(browser, tmp_path, f"annotate-chat-{name}.png")
        press(browser, "4")

        # an answer and its passages, each with its id and title, beside it
        heads = [h.text for h in browser.find_elements("css selector", "#passages .passage-head")]
        assert heads == ["[hours] Opening hours", "[spelt] Breads", "[cakes] Orders"]
        assert "notes/hours.md" in browser.find_element("id", "passages").text
        assert not browser.find_elements("id", "context") and browser.find_element("id", "source").is_displayed()
        _beside_or_below(browser, name)
        assert _overflow(browser, width) == []
        save_screenshot(browser, tmp_path, f"annotate-contexts-{name}.png")
        press(browser, "5")

        # the agent's run: its steps folded, one opened; the output after them
        steps = browser.find_elements("css selector", "#trajectory details.step")
        lines = [step.find_element("css selector", "summary").text for step in steps]
        assert lines == ['Step 1: search({"query": "bakery opening hours"})',
                         f"Step 2: fetch_page({json.dumps({'url': LONG_URL})[:STEP_ARGUMENTS - 1]}…)",  # cut
                         "Step 3: answer()"], lines
        assert not any(step.get_attribute("open") for step in steps)
        observation = steps[1].find_element("css selector", ".observation")
        assert not observation.is_displayed()
        steps[1].find_element("css selector", "summary").click()
        assert observation.is_displayed() and "closed on Mondays" in observation.text
        assert LONG_URL in steps[1].text  # the whole arguments, inside
        assert [bool(step.get_attribute("open")) for step in steps] == [False, True, False]
        assert _rect(browser, "#output")["top"] > _rect(browser, "#trajectory")["bottom"]
        assert _overflow(browser, width) == []
        save_screenshot(browser, tmp_path, f"annotate-trajectory-{name}.png")
        press(browser, "2")  # the keys work as before, the focus on a step's line
        assert browser.find_elements("id", "done")
        press(browser, "b")  # back: the answer shown, the step folded again
        assert browser.find_element("css selector", ".choice.chosen").get_attribute("value") == "2"
        assert browser.find_elements("css selector", "#trajectory details.step:not([open])")
    assert [(label.item_id, label.value) for label in read_labels(out)] == [("order-v1", 4.0), ("rag-1", 5.0),
                                                                           ("run-1", 2.0)]


def test_markup_in_a_conversation_its_passages_and_steps_shows_as_text(browser, tmp_path):
    closing = "</textarea><img src=x onerror=alert(3)>"
    item = {"id": "x", "messages": [
        {"role": "system", "content": SCRIPT},
        {"role": "user", "content": closing},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "look<b>up</b>", "arguments": IMAGE}}]},
        {"role": "tool", "tool_call_id": "c1", "content": IMAGE},
        {"role": "assistant", "content": f"{SCRIPT} done"}],
        "contexts": [{"id": "<i>1</i>", "title": SCRIPT, "text": closing}],
        "trajectory": [{"tool": "t<b>", "arguments": SCRIPT, "thought": closing, "observation": IMAGE}]}
    data = write_jsonl(tmp_path / "markup.jsonl", [item])
    with AnnotateServer("--data", data, "--aspect", "overall", "--scale", "1-5", "--out",
                        tmp_path / "labels.jsonl", "--annotator", "val") as server:
        browser.get_log("performance")
        open_page(browser, server.url)
        browser.find_element("css selector", "#trajectory summary").click()
        texts = [b.text for b in browser.find_elements("css selector", "#chat .text")]
        assert texts == [SCRIPT, closing, IMAGE, f"{SCRIPT} done"]
        assert browser.find_element("css selector", "#chat .call").text == f"calls look<b>up</b>({IMAGE})"
        assert browser.find_element("css selector", "#passages .passage-head").text == f"[<i>1</i>] {SCRIPT}"
        assert closing in browser.find_element("id", "passages").text
        assert f"Step 1: t<b>({SCRIPT})" in browser.find_element("id", "trajectory").text
        assert browser.execute_script("return document.querySelectorAll('#item script, #item img, #item b, "
                                      "#item i, #item textarea').length") == 0
        assert browser.find_element("id", "note").get_attribute("value") == ""  # the note field is whole
        assert _no_alert(browser)
        assert not [r for r in requests_made(browser) if r["url"].endswith("/x")]
        press(browser, "3")
    assert [label.value for label in read_labels(tmp_path / "labels.jsonl")] == [3.0]


def test_a_faithfulness_judges_claims_mark_the_answer_beside_its_passages(browser, viewport, tmp_path):
    """annotate --show-judge with a faithfulness run: each claim in the judge's panel with its verdict, the
    answer's sentences underlined by the worst verdict of the claims placed on them (colour and line style),
    the answer's text unchanged; labelling works as before."""
    name, (width, _) = viewport
    data = _rich_items(tmp_path)
    claims = [{"claim": "The bakery is open on Saturday from 7:00 to 18:00.", "verdict": "supported"},
              {"claim": "The bakery is open on Sunday from 8:00 to 12:00.", "verdict": "supported"},
              {"claim": "The spelt loaf is baked every morning.", "verdict": "supported"},
              {"claim": "The spelt loaf is gluten-free.", "verdict": "contradicted"},
              {"claim": "The bakery sells rye bread.", "verdict": "not found"}]
    run = write_jsonl(tmp_path / "judgments.jsonl", [
        {"item_id": "rag-1", "score": 0.6, "aspect": "helpfulness", "judge": "faithfulness/x",
         "explanation": "2 of 5 claims not supported", "extra": {"claims": claims}}])
    rag = next(item for item in load_items(data) if item.id == "rag-1")
    ids = tmp_path / "ids.txt"
    ids.write_text("rag-1\n")
    with AnnotateServer("--data", data, "--aspect", "helpfulness", "--scale", "1-5", "--out", tmp_path / "labels.jsonl",
                        "--annotator", "uma", "--ids", ids, "--show-judge", run) as server:
        open_page(browser, server.url)
        assert browser.find_element("id", "output").text == rag.output  # the text as it is, marks or none
        marked = browser.find_elements("css selector", "#output .claim")
        assert [m.get_attribute("class") for m in marked] == ["claim supported", "claim contradicted"]
        styles = [browser.execute_script("const s = getComputedStyle(arguments[0]); return [s.textDecorationLine, "
                                         "s.textDecorationStyle];", m) for m in marked]
        assert styles == [["underline", "solid"], ["underline", "wavy"]]
        listed = browser.find_elements("css selector", "#claims .claim-verdict")
        assert not listed[0].is_displayed()  # folded, as the explanation: the rating buttons stay in view
        browser.find_element("css selector", "#claims summary").click()
        assert [v.text for v in listed] == ["supported", "supported", "supported", "contradicted", "not found"]
        _beside_or_below(browser, name)
        assert _overflow(browser, width) == []
        save_screenshot(browser, tmp_path, f"annotate-claims-{name}.png")
        press(browser, "3")
    assert [label.value for label in read_labels(tmp_path / "labels.jsonl")] == [3.0]
