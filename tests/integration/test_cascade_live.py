"""`judgelab cascade --config A --config B` runs the judges for real (the embedded test model), each stage
only on the comparisons the earlier left, one run folder a stage; a rerun pays for nothing again."""

from __future__ import annotations

import json
from pathlib import Path

import judgelab
from tests.e2e.cli import run_cli as run

EXAMPLES = Path(judgelab.__file__).parent / "examples"


def config(path: Path, model: str, rules: bool) -> Path:
    path.write_text(f"kind: pairwise\nmodel: {model}\ncot: none\nswap: true\nrules: {str(rules).lower()}\n")
    return path


def test_each_stage_runs_on_what_the_earlier_left(tmp_path, test_model_path):
    data = tmp_path / "comparisons.jsonl"  # 12 of the shipped 30: the mechanism, not the judge, is under test
    data.write_text("".join((EXAMPLES / "comparisons.jsonl").read_text().splitlines(keepends=True)[:12]))
    first = config(tmp_path / "first.yaml", test_model_path, rules=True)
    second = config(tmp_path / "second.yaml", test_model_path, rules=False)
    args = ("cascade", "--data", data, "--config", first, "--config", second,
            "--human-ids", "all", "--agreement", "0.55", "--delta", "0.2", "--out", tmp_path / "out",
            "--confidence", "agreement")
    done = run(*args)
    assert done.returncode == 0, done.stderr
    summary = json.loads((tmp_path / "out" / "cascade.json").read_text())
    stage_one = [json.loads(line) for line in (tmp_path / "out" / "stage-1" / "judgments.jsonl").open()]
    assert len(stage_one) == 12  # the first judge sees every comparison
    left = 12 - summary["stages"][0]["answered"]
    stage_two = tmp_path / "out" / "stage-2" / "judgments.jsonl"
    assert (len(stage_two.read_text().splitlines()) if stage_two.exists() else 0) == left
    assert summary["stages"][0]["answered"] + summary["stages"][1]["answered"] + summary["to_people"] == 12
    again = run(*args)
    assert again.returncode == 0, again.stderr
    for stage in ("stage-1", "stage-2"):
        record = tmp_path / "out" / stage / "run.json"
        if record.exists():  # a rerun resumes every finished judgment: nothing paid again
            usage = json.loads(record.read_text())["usage"]
            assert usage["calls"] == 0, (stage, usage)
