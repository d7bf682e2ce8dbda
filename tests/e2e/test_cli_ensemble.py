"""A fitted ensemble as a user moves and reuses it: member files by relative path, rebound per run."""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml

from judgelab.data import load_items, load_judgments, save_items
from judgelab.judges.base import load_judge
from tests.e2e.cli import run_cli, write_jsonl

RATERS = ["Beluga-13B/eval_prompt_1", "Mistral-7B/eval_prompt_1", "ChatGPT/eval_prompt_1"]


def _names(rater: str) -> str:
    return rater.split("/")[0].lower()


def test_a_fitted_ensemble_moves_with_its_files_and_takes_new_member_files(benchmarks_dir, tmp_path):
    items = sorted(load_items(benchmarks_dir / "hanna.jsonl"), key=lambda item: item.group)[:160]
    dev, test = items[:100], items[100:]  # sorted by story prompt: mostly whole prompts on each side
    project = tmp_path / "project"
    save_items(dev, project / "dev.jsonl")
    save_items(test, tmp_path / "test.jsonl")
    rows = [json.loads(line) for line in open(benchmarks_dir / "reference" / "hanna_llm_ratings.jsonl")]
    for part, chosen in (("dev", dev), ("test", test)):
        ids = {item.id for item in chosen}
        for rater in RATERS:  # published layout, one file per rater and split, as a user would keep them
            folder = project / "verdicts" / part
            folder.mkdir(parents=True, exist_ok=True)
            write_jsonl(folder / f"{_names(rater)}.jsonl", [r for r in rows if r["judge"] == rater and r["item_id"] in ids])
    config = {"kind": "ensemble", "aggregate": "weighted", "aspect": "coherence",
              "members": [{"name": _names(r), "judgments": f"verdicts/dev/{_names(r)}.jsonl",
                           "field": "prediction.coherence"} for r in RATERS]}
    (project / "ensemble.yaml").write_text(yaml.safe_dump(config))
    done = run_cli("fit", "--config", project / "ensemble.yaml", "--data", project / "dev.jsonl",
                   "--out", project / "fitted" / "ensemble.yaml")
    assert done.returncode == 0, done.stderr
    text = (project / "fitted" / "ensemble.yaml").read_text()
    assert str(tmp_path) not in text  # no absolute path: relative to the fitted config
    assert [m["judgments"] for m in yaml.safe_load(text)["members"]] == [
        f"../verdicts/dev/{_names(r)}.jsonl" for r in RATERS]

    moved = tmp_path / "elsewhere"
    project.rename(moved)
    fitted = moved / "fitted" / "ensemble.yaml"
    assert load_judge(fitted).members[0].judgments == moved / "fitted" / "../verdicts/dev/beluga-13b.jsonl"
    rebind = [f"--member={_names(r)}={moved / 'verdicts' / 'test' / (_names(r) + '.jsonl')}" for r in RATERS]
    done = run_cli("judge", "--config", fitted, "--data", tmp_path / "test.jsonl", *rebind, "--out", tmp_path / "run")
    assert done.returncode == 0, done.stderr
    judged = load_judgments(tmp_path / "run")
    assert len(judged) == 60 and all(j.ok for j in judged)
    ensemble = load_judge(fitted)
    for r in RATERS:
        ensemble = ensemble.with_member_file(_names(r), moved / "verdicts" / "test" / f"{_names(r)}.jsonl")
    expected = {j.item_id: j.score for j in ensemble.run(test)}
    np.testing.assert_allclose([j.score for j in judged], [expected[j.item_id] for j in judged])
    assert ensemble.learned == load_judge(fitted).learned  # rebinding keeps what was learned

    without = run_cli("judge", "--config", fitted, "--data", tmp_path / "test.jsonl", "--out", tmp_path / "stale")
    # every item an error: exit 1 (issue 41, item 3), the warning naming why
    assert without.returncode == 1 and "has no rows for any of the 60 items" in without.stderr
    assert "every item ended in an error (60 of 60)" in without.stderr
    assert not any(j.ok for j in load_judgments(tmp_path / "stale"))  # the dev files hold no test verdicts


@pytest.mark.parametrize(("spec", "message"), [
    ("nobody=x.jsonl", "has no member 'nobody'"),
    ("beluga-13b", "give NAME=FILE"),
    ("beluga-13b=missing.jsonl", "judgments file not found"),
])
def test_bad_member_rebinding_exits_2(tmp_path, spec, message):
    items = write_jsonl(tmp_path / "items.jsonl", [{"id": "i0", "output": "x", "scores": {"q": 1}}])
    verdicts = write_jsonl(tmp_path / "v.jsonl", [{"item_id": "i0", "score": 1}])
    (tmp_path / "ens.yaml").write_text(yaml.safe_dump(
        {"kind": "ensemble", "members": [{"name": "beluga-13b", "judgments": str(verdicts)}]}))
    done = run_cli("judge", "--config", tmp_path / "ens.yaml", "--data", items, "--member", spec)
    assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr


def test_member_rebinding_needs_an_ensemble(tmp_path):
    items = write_jsonl(tmp_path / "items.jsonl", [{"id": "i0", "output": "x", "scores": {"q": 1}}])
    done = run_cli("judge", "--aspect", "q", "--data", items, "--member", "a=b.jsonl", "--model", "nope")
    assert done.returncode == 2 and "rebinds an ensemble's members" in done.stderr
