"""Several judges' judgments as one judge (judgelab.metrics.combine): classes, methods, missing verdicts, errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

from judgelab.data.judgment import Judgment
from judgelab.errors import ConfigError, DataError
from judgelab.metrics.combine import combine_judgments, read_judges


def _judged(labels: dict[str, object], judge: str | None = None, as_score: bool = False) -> list[Judgment]:
    key = "score" if as_score else "label"
    return [Judgment(item_id=item, judge=judge, **{key: value}) for item, value in labels.items()]


def _write(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_majority_of_comparisons_with_a_split_vote_going_to_tie():
    judges = {"x": _judged({"1": "a", "2": "a", "3": "b"}), "y": _judged({"1": "a", "2": "b", "3": "b"}),
              "z": _judged({"1": "tie", "2": "b"})}
    combined = combine_judgments(judges, "majority")
    by_item = {j.item_id: j for j in combined.judgments}
    assert [by_item[i].label for i in "123"] == ["a", "b", "b"]
    assert by_item["1"].score == pytest.approx((1 + 1 + 0.5) / 3)  # the preference for a, tie = 0.5
    assert by_item["3"].extra["verdicts"] == {"x": "b", "y": "b"}  # z did not judge item 3
    assert combined.coverage == {"x": 3, "y": 3, "z": 2} and combined.classes == ("a", "b", "tie")
    assert combined.name == "majority(x,y,z)" and by_item["1"].judge == "majority(x,y,z)"
    split = combine_judgments({"x": _judged({"1": "a"}), "y": _judged({"1": "b"})}, "majority")
    assert split.judgments[0].label == "tie" and split.judgments[0].score == 0.5


def test_grades_majority_mean_and_dawid_skene_give_int_labels_and_expected_scores():
    judges = {"x": _judged({"1": 0, "2": 3, "3": 1}), "y": _judged({"1": 0, "2": 2, "3": 3}),
              "z": _judged({"1": 1, "2": 3, "3": 2}, as_score=True)}
    majority = {j.item_id: j for j in combine_judgments(judges, "majority").judgments}
    assert majority["1"].label == 0 and majority["2"].label == 3 and majority["3"].label == 2  # 1/3/2 split: the mean
    mean = {j.item_id: j for j in combine_judgments(judges, "mean").judgments}
    assert mean["2"].score == pytest.approx(8 / 3) and mean["2"].label == 3
    assert mean["1"].extra["probabilities"] == {"0": pytest.approx(2 / 3, abs=1e-6), "1": pytest.approx(1 / 3, abs=1e-6),
                                                "2": 0.0, "3": 0.0}
    latent = combine_judgments(judges, "dawid-skene")
    first = latent.judgments[0]
    probabilities = np.array(list(first.extra["probabilities"].values()))
    assert isinstance(first.label, int) and probabilities.sum() == pytest.approx(1, abs=1e-5)
    assert first.score == pytest.approx(probabilities @ [0, 1, 2, 3], abs=1e-5)
    assert latent.fit is not None and latent.summary()["coverage"] == {"x": 3, "y": 3, "z": 3}


def test_an_item_no_judge_could_judge_is_an_error_judgment():
    failed = Judgment(item_id="2", status="error", reason="timeout")
    judges = {"x": [*_judged({"1": "a"}), failed], "y": _judged({"1": "a"})}
    combined = combine_judgments(judges, "dawid-skene")
    second = combined.judgments[1]
    assert second.status == "error" and second.score is None and "no judge" in second.reason
    assert combined.coverage == {"x": 1, "y": 1}


def test_rounding_averaged_ratings_and_refusing_them_unrounded():
    judges = {"x": _judged({"1": 3.6667, "2": 2.5}, as_score=True), "y": _judged({"1": 4.0, "2": 2.0}, as_score=True)}
    with pytest.raises(DataError, match=r"<list>:1: field 'score': 3.6667 is not a class.*round"):
        combine_judgments(judges, "mean")
    rounded = combine_judgments(judges, "mean", round_scores=True)  # 2.5 rounds half up, to 3
    assert [j.extra["verdicts"]["x"] for j in rounded.judgments] == [4, 3]


def test_errors_name_the_judge_the_file_and_the_line(tmp_path):
    grades = _write(tmp_path / "grades.jsonl", [{"item_id": "1", "label": 2}, {"item_id": "2", "label": 0}])
    verdicts = _write(tmp_path / "verdicts.jsonl", [{"item_id": "1", "label": "a", "judge": "pairwise"}])
    with pytest.raises(DataError, match=r"verdicts.jsonl: judge 'pairwise' gives a/b/tie verdicts while judge "
                                        r"'grades' \(.*grades.jsonl\) gives numbers"):
        combine_judgments(read_judges([grades, verdicts]))
    with pytest.raises(ConfigError, match="at least 2 judges; got 1 \\(grades from .*grades.jsonl\\)"):
        combine_judgments(read_judges([grades]))
    odd = _write(tmp_path / "odd.jsonl", [{"item_id": "1", "label": 1}, {}, {"item_id": "2", "label": "maybe"}][::2])
    odd.write_text(odd.read_text().replace("\n", "\n\n", 1))  # a blank line: the bad verdict is on line 3
    with pytest.raises(DataError, match=r"odd.jsonl:3: field 'label': 'maybe' is not a class"):
        combine_judgments(read_judges([grades, odd]))
    twice = _write(tmp_path / "twice.jsonl", [{"item_id": "1", "label": 1}, {"item_id": "1", "label": 2}])
    with pytest.raises(DataError, match=r"twice.jsonl:2: a second verdict of judge 'twice' on item '1'"):
        combine_judgments(read_judges([grades, twice]))
    with pytest.raises(ConfigError, match="unknown method"):
        combine_judgments(read_judges([grades, twice]), "median")


def test_read_judges_from_one_file_by_name_or_prefix_and_apart_when_names_repeat(tmp_path):
    rows = [{"item_id": str(i), "judge": name, "prediction": {"coherence": v}}
            for name, values in {"m/prompt_1": [1, 2, 3], "m/prompt_2": [1, 3, 3], "other": [2, 2, 2]}.items()
            for i, v in enumerate(values)]
    published = _write(tmp_path / "published.jsonl", rows)
    everyone = read_judges([published], field="prediction.coherence")
    assert [j.name for j in everyone] == ["m/prompt_1", "m/prompt_2", "other"]
    picked = read_judges([published], ["m/prompt_2", "oth"], field="prediction.coherence")
    assert [j.name for j in picked] == ["m/prompt_2", "other"] and picked[0].lines == [4, 5, 6]
    with pytest.raises(ConfigError, match="matches 2 judges"):
        read_judges([published], ["m/"], field="prediction.coherence")
    with pytest.raises(ConfigError, match="no judgment from judge 'nobody'"):
        read_judges([published], ["nobody"], field="prediction.coherence")
    with pytest.raises(ConfigError, match="from one judgments file"):
        read_judges([published, published], ["other"])
    same = _write(tmp_path / "again.jsonl", [{"item_id": "0", "judge": "other", "prediction": {"coherence": 2}}])
    names = [j.name for j in read_judges([published, same], field="prediction.coherence")]
    assert "other@again" in names and "other@published" in names


def test_family_members_are_named_and_only_for_the_family_method():
    judges = {n: _judged({str(i): i % 3 for i in range(30)}) for n in ("x", "y", "z")}
    with pytest.raises(ConfigError, match="family-dawid-skene only"):
        combine_judgments(judges, "dawid-skene", families=[["x", "y"]])
    with pytest.raises(ConfigError, match="'w' is not one of the judges"):
        combine_judgments(judges, "family-dawid-skene", families=[["x", "w"]])
    combined = combine_judgments(judges, "family-dawid-skene", families=[["x", "y"]])
    assert combined.families() == [["x", "y"], ["z"]] and combined.summary()["families"] == [["x", "y"], ["z"]]
