"""`judgelab evaluate --style-control --ties davidson` on a small made-up comparisons file with texts."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.e2e.cli import run_main_captured, run_main_in_process, write_jsonl

SYSTEMS = ("alpha", "beta", "gamma", "delta")
QUALITY = {"alpha": 0.8, "beta": 0.3, "gamma": -0.3, "delta": -0.8}
VERBOSE = {"alpha": 0, "beta": 1, "gamma": 0, "delta": 1}  # beta and delta write long, bulleted answers


def _answer(rng, system: str, k: int) -> str:
    """Words (more from the verbose systems), and markdown drawn alike for every system."""
    words = int(rng.integers(40, 80) if VERBOSE[system] else rng.integers(10, 50))
    text = " ".join(["word"] * words)
    if rng.random() < 0.3:
        text = f"## Answer {k}\n{text}"
    bullets = "\n".join(f"- point {j}" for j in range(int(rng.integers(0, 4))))
    bold = " **key**" if rng.random() < 0.4 else ""
    return f"{text}{bold}\n{bullets}"


@pytest.fixture(scope="module")
def made_up(tmp_path_factory):
    """400 comparisons among four systems, a judge that likes long answers, 150 of them labelled by people."""
    folder = tmp_path_factory.mktemp("style")
    rng = np.random.default_rng(0)
    rows, judged = [], []
    for k in range(400):
        a, b = (str(s) for s in rng.choice(SYSTEMS, 2, replace=False))
        out_a, out_b = _answer(rng, a, k), _answer(rng, b, k)
        length = (len(out_a) - len(out_b)) / (len(out_a) + len(out_b))
        quality = QUALITY[a] - QUALITY[b]
        u = rng.random()
        human = "a" if u < 1 / (1 + np.exp(-quality)) else "b"
        human = "tie" if rng.random() < 0.15 else human
        judge = "a" if u < 1 / (1 + np.exp(-(quality + 3 * length))) else "b"
        if abs(quality + 3 * length) < 0.1:
            judge = "tie"
        rows.append({"id": f"c{k:03d}", "system_a": a, "system_b": b, "instruction": f"Question {k}?",
                     "output_a": out_a, "output_b": out_b, "label": human})
        judged.append({"item_id": f"c{k:03d}", "judge": "toy", "label": judge})
    (folder / "labelled.txt").write_text("".join(f"c{k:03d}\n" for k in range(0, 400, 400 // 150)[:150]))
    return (write_jsonl(folder / "comparisons.jsonl", rows), write_jsonl(folder / "judgments.jsonl", judged),
            folder / "labelled.txt", rows)


def test_style_controlled_board_and_davidson_print_and_land_in_the_json(made_up, capsys):
    data, judgments, labelled, _ = made_up
    args = ("evaluate", "--data", data, "--judgments", judgments, "--human-ids", labelled, "--estimand",
            "bradley-terry", "--style-control", "--ties", "davidson")
    code, out, err = run_main_captured(capsys, *args)
    assert code == 0, err
    shown = " ".join(out.split())
    for text in ("Style coefficients", "Style-controlled Bradley-Terry strengths, ranked by the corrected fit",
                 "Kendall tau between the plain and the style-controlled ranking: judge", "Davidson (judge): tie "):
        assert text in shown, text
    code, out, err = run_main_captured(capsys, *args, "--json")
    assert code == 0, err
    style = json.loads(out)["style"]
    assert set(style["style_controlled"]) == {"judge", "human", "corrected"}
    length = {name: fit["coefficients"]["length"] for name, fit in style["style_controlled"].items()}
    assert length["judge"]["low"] > 0  # the judge prefers the longer answer whatever the system
    assert length["judge"]["value"] > length["human"]["value"]
    assert set(style["davidson"]) == {"judge", "human"}
    assert style["davidson"]["judge"]["tie"]["nu"] > 0


def test_comparisons_without_texts_exit_2_naming_the_file_and_field_and_write_nothing(made_up, tmp_path, capsys):
    _, judgments, _, rows = made_up
    bare = [dict(r) for r in rows]
    for row in bare[5:7]:
        del row["output_a"], row["output_b"]
    data = write_jsonl(tmp_path / "bare.jsonl", bare)
    code, err = run_main_in_process(capsys, "evaluate", "--data", data, "--judgments", judgments, "--style-control",
                                    "--out", tmp_path / "never")
    assert code == 2
    assert len(err.strip().splitlines()) == 1, err
    assert "bare.jsonl" in err and "output_a" in err and "2 of 400" in err
    assert not (tmp_path / "never").exists()
    code, err = run_main_in_process(capsys, "evaluate", "--data", made_up[0], "--judgments", judgments, "--ties",
                                    "rao-kupper")
    assert code == 2 and "rao-kupper" in err


def test_comparisons_sharing_questions_get_clustered_intervals_and_rank_sets(made_up, tmp_path, capsys):
    _, judgments, labelled, rows = made_up
    grouped = [dict(r, group_id=f"q{k // 8}") for k, r in enumerate(rows)]  # 50 questions, 8 comparisons each
    data = write_jsonl(tmp_path / "grouped.jsonl", grouped)
    args = ("evaluate", "--data", data, "--judgments", judgments, "--human-ids", labelled, "--style-control")
    code, out, err = run_main_captured(capsys, *args)
    assert code == 0, err
    shown = " ".join(out.split())
    assert "clustered by 50 questions (group_id)" in shown and "rank (set)" in shown
    code, out, err = run_main_captured(capsys, *args, "--json")
    style = json.loads(out)["style"]
    assert style["clusters"] == {"questions": 50, "from": "group_id"}
    corrected = style["style_controlled"]["corrected"]
    assert corrected["clusters"] == 50 and corrected["intervals"] == "sandwich"
    sets = [one["rank_set"] for one in corrected["strengths"].values()]
    assert all(1 <= best <= worst <= 4 for best, worst in sets)
    code, out, err = run_main_captured(capsys, *args, "--style-intervals", "bootstrap", "--bootstrap", "200", "--json")
    assert code == 0, err
    judge = json.loads(out)["style"]["style_controlled"]["judge"]
    assert judge["intervals"] == "bootstrap" and judge["n_resamples"] == 200 and judge["clusters"] == 50
    code, out, err = run_main_captured(capsys, *args, "--style-intervals", "bootstrap", "--bootstrap", "200")
    assert "intervals: bootstrap, 200 resamples of the 50 questions (group_id)" in " ".join(out.split())


def test_bootstrap_style_intervals_without_resamples_exit_2_and_write_nothing(made_up, tmp_path, capsys):
    data, judgments, _, _ = made_up
    code, err = run_main_in_process(capsys, "evaluate", "--data", data, "--judgments", judgments, "--style-control",
                                    "--style-intervals", "bootstrap", "--bootstrap", "0", "--out", tmp_path / "never")
    assert code == 2 and "--style-intervals bootstrap" in err and "0 bootstrap resample" in err
    assert not (tmp_path / "never").exists()
    code, err = run_main_in_process(capsys, "evaluate", "--data", data, "--judgments", judgments,
                                    "--style-intervals", "bootstrap")
    assert code == 2 and "add --style-control" in err
