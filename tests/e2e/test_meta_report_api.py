"""`write_meta_report`: the meta report folder from Python, the same as `judgelab meta --out` writes,
and the judge-minus-baseline table of report.html (`meta --baseline`)."""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

import pytest

from judgelab.data.io import load_items, load_judgments
from judgelab.errors import ConfigError
from judgelab.metrics import meta_evaluate
from judgelab.report import meta as meta_report
from judgelab.report import write_meta_report
from tests.e2e.cli import judge_run_folder, run_main_in_process, write_jsonl

ATTACK = "<script>alert('x')</script>"
HOSTILE_NAME = "<img src=x onerror=alert(1)>.jsonl"  # a baseline file name the page must show as text


@pytest.fixture
def files(tmp_path) -> dict[str, Path]:
    """24 items in 6 groups, a judge run folder that judged them, and a worse baseline judge's judgments."""
    items = write_jsonl(tmp_path / "items.jsonl", [
        {"id": f"i{k}", "output": f"{ATTACK} summary {k}", "group_id": f"g{k // 4}", "system_id": f"s{k % 3}",
         "scores": {"overall": (k * 7) % 5 + 1}} for k in range(24)])
    run = judge_run_folder(tmp_path / "judge-run", [  # follows the humans, off by one on every third item
        {"item_id": f"i{k}", "score": float((k * 7) % 5 + 1 + (k % 3 == 0))} for k in range(24)],
        usage={"calls": 24, "cache_hits": 0, "prompt_tokens": 900, "completion_tokens": 40, "wall_s": 2.0})
    baseline = write_jsonl(tmp_path / HOSTILE_NAME, [{"item_id": f"i{k}", "score": float(k % 5 + 1)} for k in range(24)])
    return {"items": items, "judgments": run / "judgments.jsonl", "baseline": baseline, "run": run}


def _meta_cli(capsys, files: dict[str, Path], out: Path, *extra: object) -> dict:
    code, err = run_main_in_process(capsys, "meta", "-d", files["items"], "-j", files["judgments"], "--json",
                                    "--out", out, *extra)
    assert code == 0, err
    return json.loads((out / "metrics.json").read_text())


def _comparison_table(page: str) -> str | None:
    found = re.search(r'<table id="comparison">.*?</table>', page, re.S)
    return found.group(0) if found else None


def _cells(row_html: str) -> list[str]:
    return [re.sub(r"<[^>]+>", "", cell).strip() for cell in re.findall(r"<td[^>]*>(.*?)</td>", row_html, re.S)]


def _three(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _modes(folder: Path) -> dict[str, int]:
    return {p.name: stat.S_IMODE(p.stat().st_mode) for p in [folder, *folder.iterdir()]}


def test_python_api_writes_the_folder_the_cli_writes(capsys, files, tmp_path):
    cli_out, api_out = tmp_path / "cli" / "meta-report", tmp_path / "api" / "meta-report"  # same name: same title
    _meta_cli(capsys, files, cli_out, "--baseline", files["baseline"], "--bootstrap", "50")
    cli_record = json.loads((cli_out / "run.json").read_text())

    items, judged = load_items(files["items"]), load_judgments(files["judgments"])
    report = meta_evaluate(items, judged, n_resamples=50, baseline=load_judgments(files["baseline"]))
    previous = os.umask(0o022)  # a Python caller's common umask: the folder must still be owner-only
    try:
        page = write_meta_report(api_out, items, judged, report, data=files["items"], judgments_file=files["judgments"],
                                 options=cli_record["options"])  # the page names the baseline file from these
    finally:
        os.umask(previous)

    assert page == api_out / "report.html"
    assert _modes(api_out) == {"meta-report": 0o700, **dict.fromkeys(meta_report.META_FILES, 0o600)}
    for name in ("metrics.json", "judgments.jsonl"):
        assert (api_out / name).read_bytes() == (cli_out / name).read_bytes(), name
    api_record = json.loads((api_out / "run.json").read_text())
    assert api_record["model"] == "tiny-test-model" and api_record["usage"]["calls"] == 24
    assert {k: v for k, v in api_record.items() if k != "started"} == \
           {k: v for k, v in cli_record.items() if k != "started"}
    pages = [(out / "report.html").read_text().replace(record["started"], "STARTED")
             for out, record in ((cli_out, cli_record), (api_out, api_record))]
    assert pages[0] == pages[1]


def test_a_run_folder_given_as_judgments_lends_the_report_its_run(capsys, files, tmp_path):
    by_file, by_folder = tmp_path / "by-file", tmp_path / "by-folder"
    _meta_cli(capsys, files, by_file, "--bootstrap", "0")
    _meta_cli(capsys, {**files, "judgments": files["run"]}, by_folder, "--bootstrap", "0")
    records = [json.loads((out / "run.json").read_text()) for out in (by_file, by_folder)]
    assert records[1]["model"] == "tiny-test-model" and records[1]["usage"]["calls"] == 24
    assert {k: v for k, v in records[0].items() if k != "started"} == \
           {k: v for k, v in records[1].items() if k != "started"}


def test_report_shows_the_baseline_differences_measured(capsys, files, tmp_path):
    out = tmp_path / "with-baseline"
    metrics = _meta_cli(capsys, files, out, "--baseline", files["baseline"], "--bootstrap", "200",
                        "--level", "dataset,group,system")
    page = (out / "report.html").read_text()
    table = _comparison_table(page)
    rows = {tuple(cells[:2]): cells for cells in map(_cells, re.findall(r"<tr><td>.*?</tr>", table, re.S))}
    expected = metrics["comparison"]
    assert set(expected) == {"dataset", "group", "system"}
    assert len(rows) == sum(len(by_statistic) for by_statistic in expected.values()) == 9
    for level, by_statistic in expected.items():
        for statistic, c in by_statistic.items():
            lo, hi = c["ci"]
            assert rows[(level, statistic)][2:8] == [
                _three(c["judge"]["value"]), _three(c["baseline"]["value"]), _three(c["difference"]),
                f"[{lo:.3f}, {hi:.3f}]", _three(c["p_value"]), str(c["judge"]["n"])]
    # the judge follows the humans and the baseline does not: a difference that is measured, not zero
    assert expected["dataset"]["spearman"]["difference"] > 0
    assert "95% CI</th>" in table
    assert "&lt;img src=x onerror=alert(1)&gt;.jsonl" in page and "<img src=x" not in page  # the file name, as text
    assert "<script>alert" not in page
    metrics_table = re.search(r'<table id="metrics">.*?</table>', page, re.S).group(0)
    assert "comparison" not in metrics_table  # the a/b estimates are in their own table, not mixed in


def test_without_an_interval_the_table_says_why(capsys, files, tmp_path):
    out = tmp_path / "no-bootstrap"
    metrics = _meta_cli(capsys, files, out, "--baseline", files["baseline"], "--bootstrap", "0")
    spearman = metrics["comparison"]["dataset"]["spearman"]
    assert spearman["ci"] is None and spearman["reason"]
    table = _comparison_table((out / "report.html").read_text())
    row = next(cells for cells in map(_cells, re.findall(r"<tr><td>.*?</tr>", table, re.S))
               if cells[:2] == ["dataset", "spearman"])
    assert row[4] == _three(spearman["difference"]) and row[5] == "—" and row[8] == spearman["reason"]


def test_no_baseline_no_table(capsys, files, tmp_path):
    out = tmp_path / "alone"
    metrics = _meta_cli(capsys, files, out, "--bootstrap", "0")
    page = (out / "report.html").read_text()
    assert "comparison" not in metrics
    assert _comparison_table(page) is None and "Judge minus baseline" not in page


def test_a_failure_while_writing_leaves_no_partial_folder(files, tmp_path, monkeypatch):
    items, judged = load_items(files["items"]), load_judgments(files["judgments"])
    report = meta_evaluate(items, judged, n_resamples=0)
    earlier = tmp_path / "earlier"
    write_meta_report(earlier, items, judged, report)
    assert json.loads((earlier / "run.json").read_text())["options"] == {  # what the MetaReport knows of its call
        "aspect": "overall", "preset": None, "judge": None, "level": None, "bootstrap": 0, "seed": 0,
        "alpha_level": "ordinal"}
    before = {p.name: p.read_bytes() for p in earlier.iterdir()}

    def broken_page(folder, items=None):
        assert (folder / "run.json").is_file()  # the other files were already staged when the page failed
        raise OSError("disk full")

    monkeypatch.setattr(meta_report, "write_report", broken_page)
    for out in (tmp_path / "fresh", earlier):
        with pytest.raises(OSError, match="disk full"):
            write_meta_report(out, items, judged, report)
    assert not (tmp_path / "fresh").exists()
    assert {p.name: p.read_bytes() for p in earlier.iterdir()} == before  # the earlier report is untouched
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []  # no scratch left


def test_the_api_never_writes_into_a_judge_run(files):
    items, judged = load_items(files["items"]), load_judgments(files["judgments"])
    before = {p.name: p.read_bytes() for p in files["run"].iterdir()}
    with pytest.raises(ConfigError, match="another command"):
        write_meta_report(files["run"], items, judged, meta_evaluate(items, judged, n_resamples=0))
    assert {p.name: p.read_bytes() for p in files["run"].iterdir()} == before


def test_the_current_folder_when_empty(files, tmp_path, monkeypatch):
    items, judged = load_items(files["items"]), load_judgments(files["judgments"])
    here = tmp_path / "empty-here"
    here.mkdir()
    monkeypatch.chdir(here)
    page = write_meta_report(Path("."), items, judged, meta_evaluate(items, judged, n_resamples=0))
    assert page == Path("report.html") and sorted(p.name for p in here.iterdir()) == sorted(meta_report.META_FILES)
    assert "<title>judgelab run: empty-here</title>" in page.read_text()
