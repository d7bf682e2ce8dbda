"""`judgelab annotate` in a real headless Chromium: the server runs as a user starts it (its own process
on a free port) and the browser labels by keyboard, goes back, reloads, survives a SIGKILL of the server,
and a second annotator labels with overlap; then `meta --human` and `agreement` read the file written."""

from __future__ import annotations

import json
import signal
from importlib.resources import files
from pathlib import Path

import krippendorff
import numpy as np
import pytest
from scipy.stats import spearmanr

from judgelab.annotate.task import build_task
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
