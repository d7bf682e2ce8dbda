"""``human_ids=`` given in a form it does not take (issue 45): ``human_ids="5"`` or ``human_ids=5``, meant as
"label 5", said "5: no such file" or raised a TypeError; the refusal now names the argument (not the
command line's flag) and the forms it takes. The command line's side: tests/e2e/test_cli_ids_messages.py."""

from __future__ import annotations

from pathlib import Path

import pytest

import judgelab as jl
from judgelab.errors import ConfigError

EXAMPLES = Path(jl.__file__).parent / "examples"
ITEMS, JUDGED = EXAMPLES / "answers.jsonl", EXAMPLES / "answers_judgments.jsonl"
FORMS = "give \"all\" (every item's own human score is a label), the ids (a list, or a file with one id per line) " \
        "or jl.sample's draw"


def test_a_human_ids_file_that_is_not_there_names_the_forms_human_ids_takes():
    with pytest.raises(ConfigError) as refused:
        jl.evaluate(ITEMS, JUDGED, aspect="helpfulness", human_ids="5")
    message = str(refused.value)
    assert message.startswith(f"human_ids='5': no such file; {FORMS}") and "jl.sample(data, 5) draws 5" in message
    assert "--" not in message  # the argument, not the command line's flag


def test_a_count_given_as_human_ids_is_refused_with_the_forms_not_a_type_error():
    with pytest.raises(ConfigError, match=r"^human_ids=5: give \"all\" .*jl\.sample\(data, 5\) draws 5 to label"):
        jl.compare(ITEMS, JUDGED, baseline="v1", candidate="v2", human_ids=5)
    with pytest.raises(ConfigError, match=r"^human_ids='ids\.txt': no such file; .*jl\.sample\(data, 20\)"):
        jl.evaluate(ITEMS, JUDGED, aspect="helpfulness", human_ids="ids.txt")


def test_sample_names_its_own_argument_exclude():
    with pytest.raises(ConfigError, match=r"^exclude='labelled\.txt': no such file; give the ids \(a list, or a file"):
        jl.sample(ITEMS, 5, exclude="labelled.txt")


def test_the_forms_it_names_are_taken(tmp_path):
    ids = tmp_path / "ids.txt"
    drawn = jl.sample(ITEMS, 6, seed=0)
    ids.write_text("".join(f"{unit}\n" for unit in drawn.ids), encoding="utf-8")
    for given in (ids, str(ids), list(drawn.ids), drawn):
        assert jl.evaluate(ITEMS, JUDGED, aspect="helpfulness", human_ids=given, bootstrap=0).labels["n_labelled"] == 6
    assert jl.evaluate(ITEMS, JUDGED, aspect="helpfulness", human_ids="all", bootstrap=0).labels["n_labelled"] == 30
