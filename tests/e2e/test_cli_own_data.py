"""A newcomer's own items and comparisons on the command line (issue 41, items 1 and 3): a file in its own
vocabulary is named before the model loads, comparisons are judged pairwise without being told, and a run
that judged nothing does not exit 0."""

from __future__ import annotations

import json

from tests.conftest import TEST_MODEL
from tests.e2e.cli import read_jsonl, run_main_captured, run_main_in_process, write_jsonl

MINE = [{"id": f"i{k}", "input": f"What is {k} + {k}?", "output": str(2 * k), "human_score": 3, "system": "v1",
         "question_id": f"q{k}"} for k in range(2)]
PAIRS = [{"id": "cmp00", "instruction": "Write the word yes.", "output_a": "yes", "output_b": "The sky is green.",
          "label": "a"},
         {"id": "cmp01", "instruction": "Write the word no.", "output_a": "Bananas are blue.", "output_b": "no",
          "label": "b"}]


def flat(text: str) -> str:
    return " ".join(text.split())


def test_judge_names_the_unread_columns_before_the_model_loads(tmp_path, capsys):
    data = write_jsonl(tmp_path / "mine.jsonl", MINE)
    # a model that cannot load: whatever is said before its error is said before any call could be paid
    code, err = run_main_in_process(capsys, "judge", "--data", data, "--aspect", "helpfulness",
                                    "--model", tmp_path / "missing.gguf")
    err = flat(err)
    assert code == 2 and "GGUF file not found" in err
    renames = err.index("did you mean input -> source, human_score -> scores.ASPECT, system -> system_id, "
                        "question_id -> group_id?")
    no_source = err.index(f"{data}: no item has 'source', the input each output answers: each output is judged "
                          "without it (or is an error where the judge's prompt needs it) (text the file holds under "
                          "input goes unread)")
    assert renames < no_source < err.index("GGUF file not found")


def test_judge_warns_when_the_examples_it_learns_from_have_no_human_value(tmp_path, capsys):
    rows = [{"id": f"i{k}", "source": "q", "output": "a", "scores": {"coherence": 3}} for k in range(3)]
    data = write_jsonl(tmp_path / "items.jsonl", rows)
    code, err = run_main_in_process(capsys, "judge", "--data", data, "--aspect", "helpfulness", "--strategy",
                                    "examples=3", "--criteria", "helpful", "--model", tmp_path / "missing.gguf")
    err = flat(err)
    assert code == 2 and err.index(f"{data}: no item has a human value for aspect 'helpfulness': human values go in "
                                   "each item's scores.helpfulness; the items carry scores for coherence; the "
                                   "in-context examples are drawn from them") < err.index("GGUF file not found")


def test_meta_names_the_file_and_where_human_values_go(tmp_path, capsys):
    data = write_jsonl(tmp_path / "mine.jsonl", MINE)
    judgments = write_jsonl(tmp_path / "j.jsonl", [{"item_id": row["id"], "score": 3.0} for row in MINE])
    code, err = run_main_in_process(capsys, "meta", "--data", data, "--judgments", judgments, "--aspect", "helpfulness")
    assert code == 2
    assert (f"error: {data}: field 'scores.helpfulness': no item has a human value for aspect 'helpfulness': human "
            "values go in each item's scores.helpfulness") in flat(err)


def test_comparisons_are_judged_pairwise_without_a_method(tmp_path, capsys, test_model_path):
    data = write_jsonl(tmp_path / "comparisons.jsonl", PAIRS)
    code, out, err = run_main_captured(capsys, "judge", "--data", data, "--model", TEST_MODEL, "--out", tmp_path / "run",
                                       "--cache-path", tmp_path / "cache.sqlite", "--limit", "1")
    assert code == 0, err
    assert f"{data}: pairwise items (output_a, output_b): judged with the pairwise judge" in flat(err)
    judgments = read_jsonl(tmp_path / "run" / "judgments.jsonl")
    assert [j["item_id"] for j in judgments] == ["cmp00"]  # one pair, in both orders: a few seconds on a CPU
    assert all(j["judge"].startswith("pairwise/") and "verdicts" in j["extra"] for j in judgments)
    assert json.loads((tmp_path / "run" / "run.json").read_text())["judge"]["kind"] == "pairwise"
    assert "accuracy" in flat(out) and "positional_consistency" in flat(out)  # the pairwise table


def test_a_pointwise_option_on_comparisons_gives_the_command_to_type(tmp_path, capsys):
    data = write_jsonl(tmp_path / "comparisons.jsonl", PAIRS)
    code, err = run_main_in_process(capsys, "judge", "--data", data, "--aspect", "preference", "--model", TEST_MODEL,
                                    "--limit", "1")
    assert code == 2
    assert (f"error: {data} holds pairwise items (output_a, output_b): the pairwise judge asks which output better "
            f"follows the instruction and takes no --aspect; run: judgelab judge --data {data} --model {TEST_MODEL} "
            "--limit 1") in flat(err)


def test_a_run_whose_every_item_is_an_error_exits_1_naming_the_field(tmp_path, capsys):
    """The docs' pairwise.yaml on comparisons asking a 'question': the field to fill is 'instruction'."""
    config = tmp_path / "pairwise.yaml"
    config.write_text("kind: pairwise\ncot: none\n")
    rows = [{"id": row["id"], "question": row["instruction"], "output_a": row["output_a"], "output_b": row["output_b"],
             "verdict": row["label"]} for row in PAIRS]
    data = write_jsonl(tmp_path / "comparisons.jsonl", rows)
    code, out, err = run_main_captured(capsys, "judge", "--config", config, "--data", data, "--model", TEST_MODEL)
    err = flat(err)
    assert code == 1 and "2 judgments: 0 ok, 0 unparsable, 2 errors" in flat(out)
    assert "did you mean question -> instruction, verdict -> label?" in err
    assert ("error: every item ended in an error (2 of 2), e.g. item 'cmp00' has no 'instruction' text, which the "
            "'pairwise' prompt shows") in err and "'prompt'" not in err


def test_every_item_an_error_exits_1_for_a_prompted_judge_too(tmp_path, capsys):
    data = write_jsonl(tmp_path / "summaries.jsonl", [{"id": "s1", "output": "A short summary."}])
    code, err = run_main_in_process(capsys, "judge", "--data", data, "--aspect", "coherence", "--family",
                                    "summarisation", "--criteria", "Is it coherent?", "--model", TEST_MODEL)
    assert code == 1
    assert "every item ended in an error (1 of 1), e.g. item 's1' has no 'source' text" in flat(err)


def test_optimize_and_fit_refuse_unlabelled_items_before_the_model_loads(tmp_path, capsys):
    """A search or a fit on items with no human value for the aspect cannot learn anything: exit 2 naming the
    file and where the values go, before a model that cannot even load is tried."""
    rows = [{"id": f"i{k}", "source": "q", "output": "a", "scores": {"coherence": 3}} for k in range(3)]
    data = write_jsonl(tmp_path / "items.jsonl", rows)
    missing = tmp_path / "missing.gguf"
    code, err = run_main_in_process(capsys, "optimize", "hpss", "--data", data, "--aspect", "helpfulness",
                                    "--budget", "2", "--out", tmp_path / "search", "--model", missing)
    assert code == 2 and "GGUF file not found" not in err
    assert f"{data}" in flat(err) and "scores.helpfulness" in flat(err) and "coherence" in flat(err)
    config = tmp_path / "critic.yaml"
    config.write_text("kind: active-critic\naspect: helpfulness\n", encoding="utf-8")
    code, err = run_main_in_process(capsys, "fit", "--config", config, "--data", data, "--out", tmp_path / "f.yaml",
                                    "--model", missing)
    assert code == 2 and "GGUF file not found" not in err and "scores.helpfulness" in flat(err)
