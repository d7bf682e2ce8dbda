"""`judgelab compare` as a CI job runs it: HANNA's systems answer the same 67 prompts, one published
LLM rater is the judge, and both outputs of 24 prompts carry their human coherence as the labels."""

from __future__ import annotations

import json
from xml.etree import ElementTree

import pytest

from tests.e2e.cli import run_cli, run_main_in_process, write_jsonl

HANNA_JUDGE = "Mistral-7B/eval_prompt_1"


@pytest.fixture(scope="module")
def hanna(benchmarks_dir):
    return benchmarks_dir / "hanna.jsonl"


@pytest.fixture(scope="module")
def hanna_judge(benchmarks_dir, tmp_path_factory):
    with open(benchmarks_dir / "reference" / "hanna_llm_ratings.jsonl", encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle]
    chosen = [{"item_id": r["item_id"], "score": r["prediction"]["coherence"]} for r in rows if r["judge"] == HANNA_JUDGE]
    return write_jsonl(tmp_path_factory.mktemp("judge") / "judgments.jsonl", chosen)


@pytest.fixture(scope="module")
def labelled_ids(hanna, tmp_path_factory):
    """Both outputs of the first 24 prompts, for every system (compare keeps the two it compares)."""
    with open(hanna, encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle]
    prompts = sorted({r["group_id"] for r in rows})[:24]
    path = tmp_path_factory.mktemp("ids") / "ids.txt"
    path.write_text("".join(r["id"] + "\n" for r in rows if r["group_id"] in prompts), encoding="utf-8")
    return path


def compare(hanna, judge, *args):
    return run_cli("compare", "--data", hanna, "--judgments", judge, "--aspect", "coherence", *args, timeout=300)


def test_a_regression_fails_with_junit_and_markdown(hanna, hanna_judge, labelled_ids, tmp_path):
    junit, summary = tmp_path / "ci" / "compare.xml", tmp_path / "ci" / "summary.md"
    done = compare(hanna, hanna_judge, "--baseline", "GPT-2 (tag)", "--candidate", "HINT", "--human-ids", labelled_ids,
                   "--margin", "0.2", "--junit", junit, "--markdown", summary)
    assert done.returncode == 1, done.stderr
    text = " ".join(done.stdout.split())
    # the judge would widen this difference's interval: corrected is the labels' own (-1.111), and says so
    assert text.startswith("FAIL HINT - GPT-2 (tag) = -1.111") and "corrected, paired, n=67, 24 labelled" in text
    assert "prediction-powered" in text and "67 inputs" in text
    assert text.count("warning") == 1 and "warning: corrected is the labels' own estimate here" in text
    suite = ElementTree.parse(junit).getroot().find("testsuite")
    assert suite.get("tests") == "1" and suite.get("failures") == "1"
    case = suite.find("testcase")
    assert case.get("name") == "HINT not worse than GPT-2 (tag) (margin 0.2)"
    assert "worse by more than the margin" in case.find("failure").get("message")
    properties = {p.get("name"): p.get("value") for p in suite.find("properties")}
    assert properties["estimator"] == "corrected" and properties["decision"] == "worse"
    assert float(properties["difference"]) < -0.6
    table = dict(line.strip("|").split("|")[:2] for line in summary.read_text().splitlines()
                 if line.startswith("| ") and "|---" not in line)
    assert table[" decision "].strip() == ":x: worse" and table[" estimator "].strip().startswith("corrected:")
    assert summary.read_text().startswith("### judgelab compare: HINT vs GPT-2 (tag) (coherence)")  # names escaped, no code span


def test_no_regression_passes_and_markdown_appends(hanna, hanna_judge, labelled_ids, tmp_path):
    junit, summary = tmp_path / "compare.xml", tmp_path / "summary.md"
    summary.write_text("# CI\n", encoding="utf-8")
    done = compare(hanna, hanna_judge, "--baseline", "GPT-2 (tag)", "--candidate", "GPT-2", "--human-ids",
                   labelled_ids, "--junit", junit, "--markdown", summary, "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["passed"] and out["decision"] == "not worse" and out["ci"][0] < 0 < out["ci"][1]
    suite = ElementTree.parse(junit).getroot().find("testsuite")
    assert suite.get("failures") == "0" and suite.find("testcase").find("failure") is None
    text = summary.read_text()
    assert text.startswith("# CI\n### judgelab compare") and ":white_check_mark: not worse" in text


def test_judge_only_false_alarm_is_warned_and_the_labels_clear_it(hanna, hanna_judge, labelled_ids):
    """The rater marks XLNet below CTRL; the humans rate them alike (2.92 vs 2.88 over all 67 prompts)."""
    alone = compare(hanna, hanna_judge, "--baseline", "CTRL", "--candidate", "XLNet")
    assert alone.returncode == 1 and "judge-only has no bias correction" in " ".join(alone.stdout.split())
    assert "no human labels: the judge's verdicts alone" in " ".join(alone.stdout.split())
    fixed = compare(hanna, hanna_judge, "--baseline", "CTRL", "--candidate", "XLNet", "--human-ids", labelled_ids)
    assert fixed.returncode == 0, fixed.stdout


@pytest.fixture
def unshared(tmp_path):
    """Two systems that answer different prompts, and their judgments."""
    items = [{"id": f"{s}-{k}", "system_id": s, "group_id": f"{s}-p{k}", "source": "p", "output": "o"}
             for s in ("a", "b") for k in range(5)]
    write_jsonl(tmp_path / "items.jsonl", items)
    write_jsonl(tmp_path / "j.jsonl", [{"item_id": r["id"], "score": k % 3} for k, r in enumerate(items)])
    return tmp_path / "items.jsonl", tmp_path / "j.jsonl"


@pytest.mark.parametrize(("args", "message"), [
    (("--baseline", "nope", "--candidate", "b"), "system 'nope' is not in the data (systems come from each item's system_id, or system_a/system_b of comparisons; here: a, b)"),
    (("--baseline", "a", "--candidate", "a"), "--baseline and --candidate are both 'a'"),
    (("--baseline", "a", "--candidate", "b", "--margin", "-0.1"), "--margin -0.1: input should be greater than or equal to 0"),
    (("--baseline", "a", "--candidate", "b", "--pairing", "paired"),
     "--pairing paired: the two systems share 0 input(s) (group_id); pairing needs 2"),
    (("--baseline", "a", "--candidate", "b", "--estimator", "human"), "--estimator human needs human labels"),
])
def test_bad_input_exits_2_with_one_line_and_writes_nothing(unshared, tmp_path, capsys, args, message):
    data, judgments = unshared
    junit, summary = tmp_path / "out" / "c.xml", tmp_path / "out" / "s.md"
    code, err = run_main_in_process(capsys, "compare", "--data", data, "--judgments", judgments, *args,
                                    "--junit", junit, "--markdown", summary)
    assert code == 2 and message in " ".join(err.split()) and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "out").exists()


def test_unpaired_fallback_is_said(unshared):
    data, judgments = unshared
    done = run_cli("compare", "--data", data, "--judgments", judgments, "--baseline", "a", "--candidate", "b",
                   "--bootstrap", "200")
    assert done.returncode == 0, done.stderr
    assert "pairing: unpaired: the two systems share 0 input(s)" in " ".join(done.stdout.split())


def test_fail_undecided_fails_a_gate_its_few_labels_cannot_decide():
    """A newcomer's 8 questions: beta is 2.4 points worse by the humans, but 8 labelled pairs give a betting
    interval that reaches above the margin. The default passes with a 'not decided' warning; --fail-undecided
    (a non-inferiority gate) exits 1 and says why."""
    from pathlib import Path

    own = Path(__file__).resolve().parents[1] / "data" / "own_small"
    args = ("compare", "--data", own / "answers.jsonl", "--judgments", own / "judgments.jsonl", "--human-ids", "all",
            "--baseline", "alpha", "--candidate", "beta", "--margin", "0.1")
    default = run_cli(*args)
    assert default.returncode == 0 and "not decided" in " ".join(default.stdout.split())
    strict = run_cli(*args, "--fail-undecided")
    text = " ".join(strict.stdout.split())
    assert strict.returncode == 1, strict.stderr
    assert "FAIL" in text and "not shown within the margin" in text and "--fail-undecided passes only" in text
