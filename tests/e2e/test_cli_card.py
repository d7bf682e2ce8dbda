"""judgelab meta --card writes a judge's card; judgelab compare --require-card gates only on a judge the card
certifies (docs/cards.md): refused with the misses and a plan when a floor is missed, for a card of another
judge or of a changed config, and for a bad floor; nothing written then."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.cli import run_cli

OWN = Path(__file__).resolve().parents[1] / "data" / "own_small"


def named_judgments(tmp_path: Path, name: str) -> Path:
    rows = [json.loads(line) | {"judge": name} for line in (OWN / "judgments.jsonl").read_text().splitlines()]
    path = tmp_path / f"{name}.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def gate(judged: Path, card: Path, *extra: object):
    return run_cli("compare", "--data", OWN / "answers.jsonl", "--judgments", judged, "--baseline", "alpha",
                   "--candidate", "beta", "--human-ids", "all", "--require-card", card, *extra)


def test_a_card_is_written_and_a_gate_refuses_a_judge_it_does_not_certify(tmp_path):
    judged = named_judgments(tmp_path, "j1")
    card = tmp_path / "card"
    made = run_cli("meta", "--data", OWN / "answers.jsonl", "--judgments", judged, "--bootstrap", "0", "--card", card)
    assert made.returncode == 0, made.stderr
    written = json.loads((card / "card.json").read_text())
    assert written["identity"]["judge"] == "j1" and written["agreement"]["labels"] == 24
    assert [c["n"] for c in written["agreement"]["classes"]] == [5, 5, 7, 5, 2]  # grades 1-5
    assert "Judge card: j1" in (card / "card.html").read_text()

    junit = tmp_path / "ci.xml"
    refused = gate(judged, card, "--floor", "recall=0.3", "--junit", junit)
    assert refused.returncode == 2 and "not certified to gate" in refused.stderr
    assert "recall of '3': 3/7 = 0.429, lower bound 0.129 < 0.3" in refused.stderr
    assert "class '4': 10 labels" in refused.stderr and not junit.exists()  # nothing gated, nothing written

    passed = gate(judged, card, "--floor", "kappa=0.01", "--json")
    assert passed.returncode in (0, 1), passed.stderr
    assert json.loads(passed.stdout)["card"]["certified"] is True


def test_a_card_of_another_judge_or_a_bad_floor_is_refused(tmp_path):
    card = tmp_path / "card"
    assert run_cli("meta", "--data", OWN / "answers.jsonl", "--judgments", named_judgments(tmp_path, "j2"),
                   "--bootstrap", "0", "--card", card).returncode == 0
    other = gate(named_judgments(tmp_path, "j1"), card, "--judge", "j1", "--floor", "kappa=0.01")
    assert other.returncode == 2 and "the card of judge 'j2', not of 'j1'" in other.stderr
    bad = gate(named_judgments(tmp_path, "j2"), card, "--floor", "tpr=1.5")
    assert bad.returncode == 2 and "--floor tpr='1.5': give a number in (0, 1)" in bad.stderr
    missing = gate(named_judgments(tmp_path, "j2"), tmp_path / "nowhere")
    assert missing.returncode == 2 and "nowhere" in missing.stderr
    edited = json.loads((card / "card.json").read_text())
    del edited["agreement"]["classes"][0]["hits"]  # a card edited by hand
    (card / "card.json").write_text(json.dumps(edited))
    broken = gate(named_judgments(tmp_path, "j2"), card, "--floor", "recall=0.3")
    assert broken.returncode == 2 and "not a judge card as judgelab meta --card writes it" in broken.stderr
    assert "internal error" not in broken.stderr


def test_the_pytest_helper_requires_the_card_as_the_cli_does(tmp_path):
    import pytest

    from judgelab.data import load_items, load_judgments
    from judgelab.errors import ConfigError
    from judgelab.report.card import build_card, write_card
    from judgelab.testing import assert_not_worse

    judged = named_judgments(tmp_path, "j1")
    card = write_card(tmp_path / "card", build_card(load_items(OWN / "answers.jsonl"), load_judgments(judged)))
    with pytest.raises(ConfigError, match="not certified to gate"):
        assert_not_worse(OWN / "answers.jsonl", judged, baseline="alpha", candidate="gamma", human_ids="all",
                         require_card=card, floor="recall=0.3")
    assert assert_not_worse(OWN / "answers.jsonl", judged, baseline="gamma", candidate="alpha", human_ids="all",
                            require_card=card, floor="kappa=0.01").passed


def _comparisons(tmp_path: Path, judge: str, texts: tuple[str, str] = ("x", "y")) -> tuple[Path, Path]:
    """Twelve comparisons (one with HTML in a system name) and a judge's verdicts on them in both orders."""
    rows = [{"id": f"c{k}", "instruction": "q", "output_a": texts[0] * (k + 1), "output_b": texts[1],
             "system_a": "<b>m1</b>" if k == 0 else "m1", "system_b": "m2", "label": "ab"[k % 2]} for k in range(12)]
    verdicts = [{"item_id": f"c{k}", "judge": judge, "label": "a" if k % 3 else "b",
                 "extra": {"verdicts": {"original": "a" if k % 3 else "b", "swapped": "b" if k % 4 else "a"}}}
                for k in range(12)]
    data, judged = tmp_path / "pairs.jsonl", tmp_path / f"{judge}.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    judged.write_text("".join(json.dumps(r) + "\n" for r in verdicts))
    return data, judged


def test_audit_writes_the_judges_biases_into_its_card_and_refuses_another_judges(tmp_path):
    data, judged = _comparisons(tmp_path, "j1")
    card = tmp_path / "card"
    made = run_cli("meta", "--data", data, "--judgments", judged, "--bootstrap", "0", "--card", card)
    assert made.returncode == 0, made.stderr
    audited = run_cli("audit", "--data", data, "--judgments", judged, "--bootstrap", "200", "--card", card)
    assert audited.returncode == 0, audited.stderr
    written = json.loads((card / "card.json").read_text())
    assert written["agreement"]["labels"] == 12  # what meta wrote is kept
    rows = {(r["section"], r["name"]) for r in written["biases"]["audit"]["rows"]}
    assert ("position", "flip rate") in rows and written["biases"]["written"]
    page = (card / "card.html").read_text()
    assert "Biases (judgelab audit" in page and "flip rate" in page

    (tmp_path / "o").mkdir()
    _, other = _comparisons(tmp_path / "o", "j2")
    before = (card / "card.json").read_text()
    refused = run_cli("audit", "--data", data, "--judgments", other, "--judge", "j2", "--bootstrap", "200",
                      "--card", card)
    assert refused.returncode == 2 and "the card of judge 'j1', not of 'j2'" in refused.stderr
    assert (card / "card.json").read_text() == before  # nothing written on error
    missing = run_cli("audit", "--data", data, "--judgments", judged, "--card", tmp_path / "nowhere")
    assert missing.returncode == 2 and "meta --card" in missing.stderr


def test_the_card_shows_in_the_run_report_and_only_for_its_judge(tmp_path):
    card, report = tmp_path / "card", tmp_path / "meta"
    judged = named_judgments(tmp_path, "j1")
    made = run_cli("meta", "--data", OWN / "answers.jsonl", "--judgments", judged, "--bootstrap", "0",
                   "--card", card, "--out", report)
    assert made.returncode == 0, made.stderr
    page = (report / "report.html").read_text()
    assert 'id="judge-card"' in page and "Judge card: j1" in page and "card-mismatch" not in page
    assert json.loads((report / "card.json").read_text()) == json.loads((card / "card.json").read_text())

    other = tmp_path / "other"
    assert run_cli("meta", "--data", OWN / "answers.jsonl", "--judgments", named_judgments(tmp_path, "j2"),
                   "--bootstrap", "0", "--card", other).returncode == 0
    before = (report / "report.html").read_bytes()
    refused = run_cli("report", report, "--card", other)
    assert refused.returncode == 2 and "the card of judge 'j2', not of 'j1'" in refused.stderr
    assert (report / "report.html").read_bytes() == before  # nothing rewritten
    assert json.loads((report / "card.json").read_text())["identity"]["judge"] == "j1"

    again = run_cli("meta", "--data", OWN / "answers.jsonl", "--judgments", judged, "--bootstrap", "0", "--out", report)
    assert again.returncode == 0, again.stderr
    assert not (report / "card.json").exists() and 'id="judge-card"' not in (report / "report.html").read_text()
    shown = run_cli("report", report, "--card", card)
    assert shown.returncode == 0, shown.stderr
    assert "Judge card: j1" in (report / "report.html").read_text()
