"""`judgelab meta --out DIR`: the meta-evaluation as a report folder with a self-contained report.html."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.e2e.cli import judge_run_folder, run_cli, run_main_in_process, write_jsonl

ATTACK = "<script>alert('x')</script>"


@pytest.fixture
def judge_run(tmp_path) -> tuple[Path, Path]:
    """Items with hostile texts, and a judge run folder (run.json + judgments.jsonl) that judged them."""
    items = write_jsonl(tmp_path / "items.jsonl", [
        {"id": f"i{k}", "output": f"{ATTACK} summary {k}", "group_id": f"g{k // 4}", "scores": {"overall": k % 5 + 1}}
        for k in range(12)])
    run = judge_run_folder(tmp_path / "judge-run", [
        {"item_id": f"i{k}", "score": float(5 - k % 5), "explanation": f'<img src=x onerror="alert({k})">'}
        for k in range(11)] + [{"item_id": "i11", "status": "unparsable", "raw": "<b>no number</b>",
                               "reason": "no rating in the reply"}],
        usage={"calls": 11, "cache_hits": 1, "prompt_tokens": 900, "completion_tokens": 40, "cost_usd": None,
               "wall_s": 2.0})
    return items, run


def _metrics_table(page: str) -> str:
    return re.search(r'<table id="metrics">.*?</table>', page, re.S).group(0)


def test_meta_out_writes_a_report_folder(capsys, judge_run, tmp_path):
    items, run = judge_run
    out = tmp_path / "meta-report"
    done = run_cli("meta", "-d", items, "-j", run / "judgments.jsonl", "--bootstrap", "50", "--json", "--out", out)
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)  # the report's path goes to stderr: stdout stays one JSON object
    assert "report.html" in done.stderr
    assert sorted(p.name for p in out.iterdir()) == ["judgments.jsonl", "metrics.json", "report.html", "run.json"]
    assert json.loads((out / "metrics.json").read_text()) == printed
    record = json.loads((out / "run.json").read_text())
    assert record["command"] == "meta" and record["model"] == "tiny-test-model"
    assert record["items"] == 12 and record["counts"] == {"ok": 11, "unparsable": 1}
    assert record["usage"]["calls"] == 11 and record["data"] == str(items.resolve())

    page = (out / "report.html").read_text()
    table = _metrics_table(page)
    spearman = printed["dataset"]["spearman"]
    row = re.search(r"<td>dataset</td><td>spearman</td>\s*<td class=\"num\">([^<]+)</td>\s*<td class=\"num\">([^<]+)</td>",
                    table)
    assert row.group(1) == f"{spearman['value']:.3f}"
    assert row.group(2) == f"[{spearman['ci'][0]:.3f}, {spearman['ci'][1]:.3f}]"
    assert "tiny-test-model" in page and "11 of 12 items used" in page
    assert "<script>alert" not in page and "<img src=x" not in page and "<b>no number" not in page
    assert "&lt;script&gt;alert(" in page and "&lt;img src=x onerror=" in page

    (out / "report.html").unlink()  # the folder is a run folder the report command reads
    code, err = run_main_in_process(capsys, "report", out)
    assert code == 0, err
    assert _metrics_table((out / "report.html").read_text()) == table


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_only_the_chosen_judges_judgments_are_kept(capsys, judge_run, tmp_path):
    items, _ = judge_run
    judgments = write_jsonl(tmp_path / "two-judges.jsonl", [
        {"item_id": f"i{k}", "score": float(k % 5 + 1), "judge": name} for name in ("a", "b") for k in range(12)])
    out = tmp_path / "only-b"
    code, err = run_main_in_process(capsys, "meta", "-d", items, "-j", judgments, "--judge", "b", "--bootstrap", "0",
                                    "--out", out)
    assert code == 0, err
    kept = [json.loads(line) for line in (out / "judgments.jsonl").read_text().splitlines()]
    assert len(kept) == 12 and {row["judge"] for row in kept} == {"b"}
    record = json.loads((out / "run.json").read_text())
    assert record["model"] == "not recorded" and record["judge"] == {"aspect": "overall", "judge": "b"}
    assert record["options"]["judge"] == "b" and record["source_run"] is None


def test_bad_input_writes_nothing(capsys, judge_run, tmp_path):
    items, run = judge_run
    judgments = run / "judgments.jsonl"
    fresh = tmp_path / "fresh"
    code, err = run_main_in_process(capsys, "meta", "-d", items, "-j", judgments, "--preset", "geval", "--out", fresh)
    assert code == 2 and "unknown preset" in err
    assert not fresh.exists() and not list(tmp_path.glob(".fresh.*"))  # no scratch folder left behind

    before = _snapshot(run)  # a judge's run folder is never overwritten by a meta report
    code, err = run_main_in_process(capsys, "meta", "-d", items, "-j", judgments, "--out", run)
    assert code == 2 and "another command" in err and _snapshot(run) == before

    stray = tmp_path / "stray"
    stray.mkdir()
    (stray / "judgments.jsonl").write_text("user's own file\n")
    code, err = run_main_in_process(capsys, "meta", "-d", items, "-j", judgments, "--out", stray)
    assert code == 2 and "judgments.jsonl" in err and _snapshot(stray) == {"judgments.jsonl": b"user's own file\n"}


def test_rerun_into_a_meta_folder_replaces_it(capsys, judge_run, tmp_path):
    items, run = judge_run
    out = tmp_path / "meta"
    for preset, section in ((None, "dataset"), ("hpss", "pairwise_agreement")):
        code, err = run_main_in_process(capsys, "meta", "-d", items, "-j", run / "judgments.jsonl", "--bootstrap", "0",
                                        "--out", out, *(("--preset", preset) if preset else ()))
        assert code == 0, err
        metrics = json.loads((out / "metrics.json").read_text())
        assert metrics["preset"] == preset and section in metrics
    assert json.loads((out / "run.json").read_text())["options"]["preset"] == "hpss"
