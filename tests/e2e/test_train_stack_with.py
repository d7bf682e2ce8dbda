"""`judgelab train --stack --stack-with JUDGMENTS`: judgments a judge gave elsewhere (here the published
HANNA LLM raters) become one more member of the stacked judge, copied into the folder, and
`judgelab judge --config` reads them from there. Real MiniLM, 1 epoch, short window, HANNA slice."""

from __future__ import annotations

import json
from itertools import islice

import numpy as np
import pytest
import yaml

from judgelab.data import load_items, load_judgments, save_items
from tests.e2e.cli import run_cli, run_main_in_process

FAST = ["--epochs", "1", "--max-length", "64", "--batch-size", "8", "--train-layers", "2", "--val-fraction", "0.4"]
GROUPS = ("hanna-p00", "hanna-p05", "hanna-p06", "hanna-p07")  # whole groups: 44 stories


@pytest.fixture(scope="module")
def hanna(benchmarks_dir, tmp_path_factory):
    folder = tmp_path_factory.mktemp("stack_with")
    items = [item for item in load_items(benchmarks_dir / "hanna.jsonl") if item.group in GROUPS]
    return save_items(items, folder / "hanna44.jsonl"), benchmarks_dir / "reference" / "hanna_llm_ratings.jsonl"


@pytest.fixture(scope="module")
def stacked(hanna, tmp_path_factory):
    items, raters = hanna
    out = tmp_path_factory.mktemp("stacked") / "judge"
    result = run_cli("train", "--data", items, "--aspect", "coherence", "--out", out, *FAST, "--stack",
                     "--stack-with", f"raters={raters}", timeout=600)
    assert result.returncode == 0, result.stderr + result.stdout
    return out


def _mean_rater_scores(raters, aspect="coherence") -> dict[str, float]:
    """What the member should hold: the mean over the 20 published raters, per story (read independently)."""
    by_item: dict[str, list[float]] = {}
    for line in raters.read_text().splitlines():
        row = json.loads(line)
        by_item.setdefault(row["item_id"], []).append(row["prediction"][aspect])
    return {item_id: float(np.mean(values)) for item_id, values in by_item.items()}


def _by_hand(judgment, learned: dict[str, np.ndarray]) -> float:
    """The ridge over the three members as fitted; a member with no score gets the imputed mean."""
    members = judgment.extra["members"]
    row = np.array([np.nan if members[n] is None else members[n] for n in ("cross-encoder", "similarity", "raters")])
    row = np.where(np.isnan(row), learned["impute"], row)
    return float((row - learned["mean"]) / learned["scale"] @ learned["coef"] + learned["intercept"][0])


def test_stack_with_member_is_saved_moved_and_its_scores_used_by_judge_config(stacked, hanna, tmp_path):
    items, raters = hanna
    config = yaml.safe_load((stacked / "judge.yaml").read_text())
    assert [m["name"] for m in config["members"]] == ["cross-encoder", "similarity", "raters"]
    assert config["members"][2]["judgments"] == "members/raters.jsonl"  # relative: the folder is movable
    assert len(config["learned"]["coef"]) == 3 and config["learned"]["coef"][2] != 0
    expected = _mean_rater_scores(raters)
    copied = {j.item_id: j.score for j in load_judgments(stacked / "members" / "raters.jsonl")}
    assert copied == pytest.approx(expected)  # every story of the file, not only the 44 trained on
    assert json.loads((stacked / "members" / "sources.json").read_text())["raters"]["file"] == str(raters)

    moved = tmp_path / "moved"
    stacked.rename(moved)
    subset = save_items(list(islice(load_items(items), 8)), tmp_path / "eight.jsonl")
    before = _judge(moved, subset, tmp_path / "run1")
    learned = {k: np.asarray(v, dtype=float) for k, v in config["learned"].items()}
    for judgment in before:
        assert judgment.extra["members"]["raters"] == pytest.approx(expected[judgment.item_id])
        assert judgment.score == pytest.approx(_by_hand(judgment, learned))

    # Change the member's scores (reversed on the 1-5 scale) and drop one story: the verdicts follow.
    member_file = moved / "members" / "raters.jsonl"
    rows = [json.loads(line) for line in member_file.read_text().splitlines()]
    dropped = before[0].item_id
    member_file.write_text("".join(json.dumps({**row, "score": 6 - row["score"]}) + "\n"
                                   for row in rows if row["item_id"] != dropped))
    after = {j.item_id: j for j in _judge(moved, subset, tmp_path / "run2")}
    assert after[dropped].extra["members"]["raters"] is None  # a story the file lacks: imputed, still judged
    for judgment in before[1:]:
        assert after[judgment.item_id].extra["members"]["raters"] == pytest.approx(6 - expected[judgment.item_id])
    for judgment in after.values():
        assert judgment.ok and judgment.score == pytest.approx(_by_hand(judgment, learned))
    assert not np.allclose([j.score for j in before], [after[j.item_id].score for j in before])


def _judge(folder, items, out):
    result = run_cli("judge", "--config", folder / "judge.yaml", "--data", items, "--out", out, timeout=300)
    assert result.returncode == 0, result.stderr + result.stdout
    return load_judgments(out / "judgments.jsonl")


def _bad_files(folder):
    missing = folder / "missing.jsonl"
    malformed = folder / "malformed.jsonl"
    malformed.write_text('{"item_id": "hanna-0000", "score": 3}\n{"item_id": "hanna-0005", "score": \n'
                         '{"item_id": "hanna-0006", "score": 2}\n')  # not the last line: that one may be a crash's cut
    elsewhere = folder / "elsewhere.jsonl"
    elsewhere.write_text('{"item_id": "tc-1", "score": 3}\n{"item_id": "tc-2", "score": 2}\n')
    fluency = folder / "fluency.jsonl"
    fluency.write_text('{"item_id": "hanna-0000", "score": 3, "aspect": "fluency"}\n')
    return {"missing": (missing, "--stack-with missing: judgments file not found"),
            "malformed": (malformed, "malformed.jsonl:2: bad JSON"),
            "elsewhere": (elsewhere, "stacked member 'elsewhere' scores none of the 44 labelled items"),
            "aspect": (fluency, "stacked member 'fluency' has no score for aspect 'coherence'"),
            "clash": (f"similarity={elsewhere}", "the name 'similarity' is taken"),
            "no-stack": (elsewhere, "--stack-with adds members to the stacked judge: give --stack as well")}


@pytest.mark.parametrize("case", ["missing", "malformed", "elsewhere", "aspect", "clash", "no-stack"])
def test_bad_stack_with_input_exits_2_and_writes_nothing(hanna, tmp_path, capsys, case):
    items, _ = hanna
    stack_with, message = _bad_files(tmp_path)[case]
    out = tmp_path / "out"
    stack = [] if case == "no-stack" else ["--stack"]
    code, stderr = run_main_in_process(capsys, "train", "--data", items, "--aspect", "coherence", "--out", out, *FAST,
                                       *stack, "--stack-with", stack_with)
    assert code == 2, stderr
    assert message in " ".join(stderr.split())
    assert not out.exists() and not list(tmp_path.glob(".out*"))  # no staging folder left


def test_member_without_validation_items_is_refused_before_writing(hanna, tmp_path):
    """Checked after training, before anything is written: the stacker learns a member's weight on
    the validation groups only."""
    from judgelab.errors import DataError
    from judgelab.judges.trained import TrainedJudge
    from judgelab.train import human_targets
    from judgelab.train.stack import ExtraMember, save_stacked
    from judgelab.train.trainer import Trained

    items, _ = hanna
    targets = human_targets(list(load_items(items)), "coherence")
    train_ids = [i.id for i in targets.items if i.group != "hanna-p07"]
    val_ids = [i.id for i in targets.items if i.group == "hanna-p07"]
    spec = TrainedJudge(aspect="coherence", select_on_validation=False)
    trained = Trained(spec, scorer=None, tokenizer=None, train_ids=train_ids, val_ids=val_ids)
    member = ExtraMember("training-only", {item_id: 3.0 for item_id in train_ids}, tmp_path / "t.jsonl")
    with pytest.raises(DataError, match=f"scores none of the {len(val_ids)} validation items"):
        save_stacked(trained, targets, tmp_path / "out", {}, extra_members=[member])
    assert not (tmp_path / "out").exists() and not list(tmp_path.glob(".out*"))  # no staging folder left
