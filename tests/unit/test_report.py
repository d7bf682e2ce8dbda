"""The report page from run-folder files: sections, escaping, sampling, bad files.

The page from a real model run is checked in a real browser in tests/e2e/test_report_browser.py.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from pathlib import Path

import pytest

from judgelab.data import Item, Judgment
from judgelab.data.io import save_judgments
from judgelab.errors import ConfigError, DataError
from judgelab.report import render_report, write_report
from judgelab.report.html import SAMPLE, TEXT_LIMIT


def _run_folder(tmp: Path, judgments: list[Judgment], judge: dict | None = None) -> Path:
    folder = tmp / "run"
    folder.mkdir()
    (folder / "run.json").write_text(json.dumps({
        "judge": judge or {"kind": "prompted", "aspect": "quality", "strategy": {"scale": 5}},
        "model": "m", "backend": "b", "status": "finished", "items": len(judgments),
        "usage": {"calls": 3, "cache_hits": 2, "prompt_tokens": 10, "completion_tokens": 5, "cost_usd": None,
                  "wall_s": 1.5}}))
    save_judgments(judgments, folder / "judgments.jsonl")
    return folder


def _pairwise(tmp: Path) -> tuple[Path, list[Item]]:
    humans = ["a", "a", "b", "tie", "b", "a"]
    verdicts = ["a", "b", "b", "a", "b", "a"]
    items = [Item(id=f"p{i}", group_id=f"g{i}", output_a="x", output_b="y", label=h) for i, h in enumerate(humans)]
    judgments = [Judgment(item_id=f"p{i}", label=v, criteria={"accuracy": i % 3, "style": 4 - i % 2})
                 for i, v in enumerate(verdicts)]
    return _run_folder(tmp, judgments, {"kind": "pairwise"}), items


def test_pairwise_run_has_confusion_matrix_and_criteria(tmp_path):
    folder, items = _pairwise(tmp_path)
    page = render_report(folder, items)
    confusion = re.search(r'<figure id="figure-confusion">(.*?)</figure>', page, re.S).group(1)
    cells = [int(n) for n in re.findall(r'text-anchor="middle"(?: class="[^"]*")?>(\d+)</text>', confusion)]
    # rows human a, b, tie; columns judge a, b, tie
    assert cells == [2, 1, 0, 0, 2, 0, 1, 0, 0]
    criteria = re.search(r'<table id="criteria".*?</table>', page, re.S).group(0)
    assert "accuracy" in criteria and "style" in criteria
    disagreements = re.search(r'<table id="disagreements".*?</table>', page, re.S).group(0)
    assert disagreements.count("<code>") == 2  # p1 (a vs b) and p3 (tie vs a)


def test_optimizer_trajectory_and_advantages(tmp_path):
    folder, items = _pairwise(tmp_path)
    (folder / "trajectory.jsonl").write_text("".join(
        json.dumps({"step": i, "score": s, "best": b}) + "\n" for i, s, b in ((1, 0.2, 0.2), (2, 0.1, 0.2), (3, 0.4, 0.4))))
    (folder / "optimizer.json").write_text(json.dumps({"method": "hpss", "advantages": {"cot": {"none": 0.1, "prefix": -0.1}}}))
    page = render_report(folder, items)
    trajectory = re.search(r'<figure id="figure-trajectory">(.*?)</figure>', page, re.S).group(1)
    assert trajectory.count('class="dot"') == 3 and 'class="best"' in trajectory
    assert "cot=none" in page and "cot=prefix" in page and "hpss" in page


def test_bad_trajectory_line_is_named(tmp_path):
    folder, items = _pairwise(tmp_path)
    (folder / "trajectory.jsonl").write_text('{"step": 1, "score": 0.2, "best": 0.2}\n{oops\n')
    with pytest.raises(DataError, match=r"trajectory.jsonl:2"):
        render_report(folder, items)


def test_dataset_and_model_text_is_escaped(tmp_path):
    attack = '<script>alert(1)</script>'
    items = [Item(id=f"i{i}", group_id="g", output=f"{attack} {i}", scores={"quality": i}) for i in range(1, 5)]
    judgments = [Judgment(item_id=f"i{i}", score=6 - i, explanation=f'<img src=x onerror="alert({i})">',
                          raw=attack) for i in range(1, 5)]
    page = render_report(_run_folder(tmp_path, judgments), items)
    assert "<script>alert" not in page and "<img src=x" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "&lt;img src=x onerror=" in page
    assert page.count("<script>") == 1  # the page's own table sorter


def test_long_texts_are_clipped_on_the_page(tmp_path):
    """A 2-million-character output and reply (a 200 MB item once made a 205 MB page): the page shows
    the first TEXT_LIMIT characters of each and says how much more the run's files hold."""
    long_text = "word " * 400_000
    items = [Item(id=f"i{i}", group_id="g", output=long_text if i == 1 else f"o{i}", scores={"quality": i})
             for i in range(1, 5)]
    judgments = [Judgment(item_id=f"i{i}", score=6 - i, raw=long_text, explanation=long_text) for i in range(1, 5)]
    page = render_report(_run_folder(tmp_path, judgments), items)
    assert len(page) < 30 * TEXT_LIMIT
    assert f"… [{len(long_text) - TEXT_LIMIT:,} more characters, in the run&#39;s files]" in page


def test_only_the_pages_own_script_may_run(tmp_path):
    """The policy names the page's one script by its hash: no 'unsafe-inline', so a script that slipped
    through escaping would not run (checked in a real browser in tests/e2e/test_report_browser.py)."""
    folder, items = _pairwise(tmp_path)
    page = render_report(folder, items)
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page).group(1)
    scripts = re.search(r"script-src ([^;]+);", policy).group(1)
    [body] = re.findall(r"<script>(.*?)</script>", page, re.S)
    assert scripts == f"'sha256-{base64.b64encode(hashlib.sha256(body.encode()).digest()).decode()}'"
    assert "sortable" in body


def test_page_fetches_nothing(tmp_path):
    items = [Item(id=f"i{i}", output="o", scores={"quality": i % 5 + 1}) for i in range(20)]
    judgments = [Judgment(item_id=f"i{i}", score=(i * 7) % 5 + 1) for i in range(20)]
    page = render_report(_run_folder(tmp_path, judgments), items)
    assert "default-src 'none'" in page
    assert not re.search(r'(src|href)\s*=\s*"(https?:)?//', page)
    assert re.findall(r'<figure id="figure-([a-z-]+)">', page) == ["scatter", "judge-histogram", "human-histogram"]


def test_large_run_is_drawn_from_a_sample_but_counted_whole(tmp_path):
    n = SAMPLE + 2000
    judgments = [Judgment(item_id=f"i{i}", score=i % 5 + 1) if i % 10 else
                 Judgment(item_id=f"i{i}", status="unparsable", reason="no rating", raw="?") for i in range(n)]
    folder = _run_folder(tmp_path, judgments)
    page = render_report(folder, [Item(id=f"i{i}", output="o", scores={"quality": 3}) for i in range(n)])
    assert f"uniform sample of {SAMPLE} of {n} judgments" in page
    assert re.search(rf'<b class="status-unparsable">{n // 10}</b>', page)
    assert "Spearman per group" not in page  # groups would be cut apart by the sample


def test_write_report_replaces_the_file_and_needs_run_json(tmp_path):
    folder, items = _pairwise(tmp_path)
    (folder / "report.html").write_text("old")
    assert write_report(folder, items).read_text().startswith("<!doctype html>")
    with pytest.raises(ConfigError, match="not a run folder"):
        render_report(tmp_path)


def test_a_comparison_written_with_the_old_names_still_renders(tmp_path):
    """metrics.json files from before the judge/baseline names said "b" (the judge) and "a" (the baseline)."""
    folder = _run_folder(tmp_path, [Judgment(item_id=f"i{k}", score=float(k)) for k in range(4)])
    old = {"statistic": "spearman", "level": "dataset", "a": {"value": 0.25, "n": 4}, "b": {"value": 0.75, "n": 4},
           "difference": 0.5, "ci": [0.1, 0.9], "p_value": 0.04}
    (folder / "metrics.json").write_text(json.dumps({"comparison": {"dataset": {"spearman": old}}}))
    table = re.search(r'<table id="comparison">.*?</table>', render_report(folder), re.S).group(0)
    assert re.search(r'>0\.750</td><td class="num">0\.250</td><td class="num">0\.500</td>', table), table


def test_runs_are_listed_in_the_guided_order_when_evaluate_gives_one():
    """For TREC runs `evaluate` recommends the guided ranking (evaluate/guided.py): the report's rows
    follow it, not the corrected values, which it overrules where the labels are not significant."""
    from judgelab.report.systems_view import systems_section

    def estimate(value):
        return {"value": value, "ci": [None, None], "rank_interval": [None, None]}

    systems = {"kind": "queries", "systems": ["r1", "r2", "r3"], "pairs": {}, "labels": {"n_labelled": 3},
               "estimators": {"judge": {"r1": estimate(0.3), "r2": estimate(0.5), "r3": estimate(0.4)},
                              "corrected": {"r1": estimate(0.6), "r2": estimate(0.5), "r3": estimate(0.4)},
                              "guided": {"r1": estimate(0), "r2": estimate(2), "r3": estimate(1)}}}
    assert [row["system"] for row in systems_section(systems)["rows"]] == ["r2", "r3", "r1"]


def test_items_and_comparisons_alike_show_the_recommended_point_rank_with_corrected_rank_interval():
    """As in the terminal, one rank column for both boards (issue 45, item 6): rows in the recommended
    estimate's order, its point rank and, in brackets, corrected's rank interval (shrunk has none).
    Comparisons kept corrected's order with the recommended point rank in a column of its own, and the
    page showed "—" in the rank column of items ranked by shrunk."""
    from judgelab.report.systems_view import systems_section

    def estimate(value, rank, interval=None):
        return {"value": value, "ci": [None, None], "rank_interval": interval or [None, None], "rank": rank}

    estimators = {"judge": {"x": estimate(0.3, 3, [2, 3]), "y": estimate(0.5, 1, [1, 2]), "z": estimate(0.4, 2, [1, 3])},
                  "corrected": {"x": estimate(0.6, 1, [1, 2]), "y": estimate(0.5, 2, [1, 3]),
                                "z": estimate(0.4, 3, [2, 3])},
                  "shrunk": {"x": estimate(0.45, 2), "y": estimate(0.5, 1), "z": estimate(0.4, 3)}}
    pairs = {"judge": [], "corrected": []}
    recommended = {"estimator": "shrunk", "reason": "on 30 random halvings"}
    items = {"kind": "items", "systems": ["x", "y", "z"], "pairs": pairs, "labels": {"n_labelled": 9},
             "estimators": estimators, "recommended": recommended}
    for kind in ("items", "comparisons"):
        section = systems_section(items | {"kind": kind})
        assert [row["system"] for row in section["rows"]] == ["y", "x", "z"] and section["ranking"] == "shrunk (EB)"
        assert [row["rank"] for row in section["rows"]] == ["1 (1-3)", "2 (1-2)", "3 (2-3)"]
        assert section["rank_legend"] == ("rank: shrunk's point rank (recommended); in brackets, corrected's rank "
                                          "interval")
    judge_only = systems_section(items | {"estimators": {"judge": estimators["judge"]}, "recommended": None})
    assert [row["rank"] for row in judge_only["rows"]] == ["1 (1-2)", "2 (1-3)", "3 (2-3)"]
    assert judge_only["rank_legend"] == "rank: judge's point rank; in brackets, its rank interval"


# -- issue 41, item 10: what a first reader of the demo and evaluate reports could not tell ------------
def _logprob_run(tmp: Path, judge_score: str = "logprob") -> str:
    items = [Item(id=f"i{i}", group_id="g", output="o", scores={"quality": i}) for i in range(1, 5)]
    judgments = [Judgment(item_id=f"i{i}", score=3.2 + i / 10, raw="Rating: [[5]]") for i in range(1, 5)]
    judge = {"kind": "prompted", "model": None, "aspect": "quality", "strategy": {"scale": 5}, "score": judge_score}
    return render_report(_run_folder(tmp, judgments, judge), items)


def test_a_logprob_score_is_called_the_expected_rating_where_it_is_shown(tmp_path):
    """A reply "Rating: [[5]]" beside a score of 3.6 reads as a bug unless the page says what the score is."""
    page = _logprob_run(tmp_path)
    judgments = page[page.index("<h2>Judgments</h2>"):]
    note = re.search(r'<p class="muted score-note" id="score-note">(.*?)</p>', judgments, re.S).group(1)
    assert "expected rating" in note and "1-5" in note and "probability" in note
    assert judgments.index('id="score-note"') < judgments.index('<table id="judgments"')
    assert ">judge (expected)</th>" in judgments
    parsed = _logprob_run(tmp_path / "parsed", "parsed") if (tmp_path / "parsed").mkdir() is None else ""
    assert "score-note" not in parsed and ">judge</th>" in parsed


def test_the_judge_block_names_the_runs_model_when_the_config_leaves_it_open(tmp_path):
    page = _logprob_run(tmp_path)
    block = re.search(r"<h2>Judge</h2>\s*<pre>(.*?)</pre>", page, re.S).group(1)
    assert "model: null" not in block
    assert "model: m  # the run&#39;s model: the config names none" in block


def test_numeric_columns_have_right_aligned_headers(tmp_path):
    """The metrics table's numbers are right-aligned: so are their headers, or `groups` sits a column
    width away from its figures (the browser test measures the edges)."""
    folder = _run_folder(tmp_path, [Judgment(item_id=f"i{k}", score=float(k)) for k in range(4)])
    (folder / "metrics.json").write_text(json.dumps({"dataset": {"spearman": {
        "value": 0.5, "ci": [0.1, 0.8], "n": 4, "n_groups": 2}}}))
    table = re.search(r'<table id="metrics">.*?</table>', render_report(folder), re.S).group(0)
    for name in ("value", "CI", "n", "groups"):
        assert f'<th class="num">{name}</th>' in table
    assert "th.num" in render_report(folder)


def test_a_tie_from_verdicts_that_changed_with_the_order_is_explained_as_such(tmp_path):
    """A tie made by the two orders disagreeing showed the original order's reply, "Output (a)", as
    its explanation."""
    items = [Item(id="p0", group_id="g", output_a="x", output_b="y", label="a")]
    tie = Judgment(item_id="p0", label="tie", raw="Output (a)",
                   extra={"verdicts": {"original": "a", "swapped": "b"}, "raw_swapped": "Output (a)", "consistent": False})
    page = render_report(_run_folder(tmp_path, [tie], {"kind": "pairwise"}), items)
    explained = re.search(r'<table id="disagreements".*?</table>', page, re.S).group(0)
    assert "A tie: the verdict changed when the two outputs swapped places (original order: a, swapped order: b)" \
        in explained
    assert "Output (a)" not in explained
    shown = re.search(r'<table id="judgments".*?</table>', page, re.S).group(0)
    assert "A tie: the verdict changed" in shown and "reply, outputs swapped" in shown


def _evaluate_items() -> tuple[list[Item], list[Judgment]]:
    items = [Item(id=f"g{g}-s{s}", group_id=f"g{g}", system_id=f"s{s}", output="o", scores={"quality": 1 + (g + s) % 5})
             for g in range(8) for s in range(3)]
    judgments = [Judgment(item_id=item.id, score=item.scores["quality"] + 0.5 * ((k % 3) - 1))
                 for k, item in enumerate(items)]
    return items, judgments


def test_an_evaluate_report_from_a_judge_runs_files_shows_that_runs_model_and_usage(tmp_path):
    from judgelab.evaluate import evaluate
    from judgelab.report.systems import write_systems_report

    items, judgments = _evaluate_items()
    run = _run_folder(tmp_path, judgments, {"kind": "prompted", "model": None, "aspect": "quality",
                                            "strategy": {"scale": 5}, "score": "logprob"})
    report = evaluate(items, judgments, aspect="quality", human_ids="all", n_resamples=100)
    for given in (run, run / "judgments.jsonl"):  # --judgments names the folder or its file
        out = tmp_path / f"systems-{given.name}"
        page = write_systems_report(out, items, judgments, report, judgments_file=given).read_text()
        header = re.search(r'<p class="muted">model (.*?)</p>', page, re.S).group(1)
        assert "<code>m</code> (b)" in header and "not recorded" not in page
        cards = re.search(r'<div class="cards" id="accounting">.*?</div>\n</div>', page, re.S).group(0)
        assert "<b>3</b>paid calls" in cards and "<b>2</b>cache hits" in cards and "<b>15</b>tokens" in cards
        assert "<b>1.5 s</b>wall time" in cards
        assert f"the judge run's, in <code>{run.resolve()}</code>" in page
        assert json.loads((out / "run.json").read_text())["model"] == "m"


def test_an_evaluate_report_without_a_judge_run_says_usage_was_not_recorded(tmp_path):
    from judgelab.evaluate import evaluate
    from judgelab.report.systems import write_systems_report

    items, judgments = _evaluate_items()
    loose = tmp_path / "published.jsonl"
    save_judgments(judgments, loose)
    report = evaluate(items, judgments, aspect="quality", human_ids="all", n_resamples=100)
    page = write_systems_report(tmp_path / "systems", items, judgments, report, judgments_file=loose).read_text()
    cards = re.search(r'<div class="cards" id="accounting">.*?</div>\n</div>', page, re.S).group(0)
    assert "paid calls" not in cards and "0.0 s" not in cards and "<b>0</b>tokens" not in cards
    assert '<div class="card" id="usage-unknown"><b>not recorded</b>calls, tokens, time</div>' in cards


def test_comparisons_show_no_guided_ranking_column(tmp_path):
    """The guided ranking counts the TREC runs ranked below a run: for comparisons its column said
    "runs ranked below" beside the systems' win probabilities."""
    from judgelab.data import load_items
    from judgelab.evaluate import evaluate
    from judgelab.report.systems import write_systems_report
    from judgelab.report.systems_view import LABELS

    items = list(load_items(Path(__file__).parents[2] / "src" / "judgelab" / "examples" / "comparisons.jsonl"))
    flipped = {"a": "b", "b": "a", "tie": "tie"}
    judgments = [Judgment(item_id=item.id, label=flipped[item.label] if k % 5 == 0 else item.label)
                 for k, item in enumerate(items)]
    report = evaluate(items, judgments, human_ids="all", n_resamples=100)
    assert "guided" in report.to_dict()["estimators"]  # systems.json keeps it
    page = write_systems_report(tmp_path / "leaderboard", items, judgments, report).read_text()
    table = re.search(r'<table id="systems".*?</table>', page, re.S).group(0)
    assert LABELS["guided"] not in table and LABELS["corrected"] in table
    assert '</span> <span class="muted">n=20</span>' in table  # "[0.494, 0.956] n=20", not "...]n=20"


def test_reading_notes_survive_a_hand_edited_info_and_mark_betting_cells():
    """The Systems section reads each estimator's info (interval kinds, the guided rule): a hand-edited
    systems.json with odd values there draws the page without them, not a traceback."""
    from judgelab.report.systems_view import SystemsFile, systems_section

    def estimate(value, rank):
        return {"value": value, "ci": [value - 1, value + 1], "rank_interval": [1, 2], "rank": rank}

    estimators = {"judge": {"x": estimate(3.0, 1), "y": estimate(2.0, 2), "info": {}},
                  "human": {"x": estimate(3.5, 1), "y": estimate(2.5, 2), "info": {"per_system": ["betting", "t"]}},
                  "corrected": {"x": estimate(3.4, 1), "y": estimate(2.4, 2), "info": {"per_system": [["odd"], 7]}},
                  "guided": {"x": estimate(1, 1), "y": estimate(0, 2), "info": {"level": "high"}}}
    systems = {"kind": "queries", "systems": ["x", "y"], "pairs": {"judge": [], "human": [], "corrected": []},
               "labels": {"n_labelled": 4}, "estimators": estimators, "options": {"intervals": "auto"}}
    section = systems_section(SystemsFile.model_validate(systems).model_dump())
    assert [mark for _, _, mark in section["rows"][0]["cells"]] == [None, "b", None]
    assert section["rank_legend"] == "rank: the guided ranking (recommended for runs), without a rank interval"
    assert not any(note.startswith("guided ranking:") for note in section["notes"])
