"""Per-system intervals from the command line: --intervals, --scale and compare --plan, and their bad input."""

from __future__ import annotations

import json

import numpy as np

from tests.e2e.cli import run_cli, write_jsonl


def items_and_judgments(tmp_path, scale=True):
    rng = np.random.default_rng(0)
    items, judgments = [], []
    for g in range(40):
        for system, shift in (("base", 0.0), ("cand", -0.6)):
            y = float(np.clip(np.round(3 + rng.normal(0, 0.7) + shift), 1, 5))
            row = {"id": f"{system}-{g}", "system_id": system, "group_id": f"g{g}", "output": "o", "scores": {"q": y}}
            if scale:
                row["scale"] = [1, 5]
            items.append(row)
            judgments.append({"item_id": row["id"], "score": y + float(rng.normal(0, 0.5))})
    return write_jsonl(tmp_path / "items.jsonl", items), write_jsonl(tmp_path / "judgments.jsonl", judgments)


def ids_file(tmp_path, n_inputs):
    path = tmp_path / "ids.txt"
    path.write_text("".join(f"{s}-{g}\n" for g in range(n_inputs) for s in ("base", "cand")))
    return path


def test_each_system_interval_is_named_and_stays_on_the_scale(tmp_path):
    items, judgments = items_and_judgments(tmp_path)
    done = run_cli("evaluate", "--data", items, "--judgments", judgments, "--aspect", "q", "--human-ids",
                   ids_file(tmp_path, 4), "--json", "--bootstrap", "50")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["options"]["intervals"] == "auto" and out["options"]["variance"] == "system"
    for name in ("human", "corrected"):
        est = out["estimators"][name]
        assert est["info"]["per_system"] == ["betting", "betting"]  # 4 labels each
        assert all(1 <= est[s]["ci"][0] < est[s]["ci"][1] <= 5 for s in ("base", "cand"))
    assert out["estimators"]["shrunk"]["base"]["ci"] == [None, None] if "shrunk" in out["estimators"] else True


def test_bad_interval_options_exit_2_naming_the_option(tmp_path):
    items, judgments = items_and_judgments(tmp_path, scale=False)
    base = ("evaluate", "--data", items, "--judgments", judgments, "--aspect", "q", "--human-ids", ids_file(tmp_path, 4))
    betting = run_cli(*base, "--intervals", "betting")
    assert betting.returncode == 2 and "betting intervals need the labels' scale" in betting.stderr
    assert betting.stdout == ""
    for bad in ("5,1", "1", "a,b", "1,inf"):
        done = run_cli(*base, "--scale", bad)
        assert done.returncode == 2 and "--scale" in done.stderr, (bad, done.stderr)
    unknown = run_cli(*base, "--intervals", "wide")
    assert unknown.returncode == 2 and "intervals 'wide'" in unknown.stderr
    given = run_cli(*base, "--scale", "1,5", "--intervals", "betting", "--json", "--bootstrap", "50")
    assert given.returncode == 0, given.stderr
    assert json.loads(given.stdout)["estimators"]["human"]["info"]["per_system"] == ["betting", "betting"]


def test_compare_plan_says_how_many_labels_catch_a_regression(tmp_path):
    items, judgments = items_and_judgments(tmp_path)
    base = ("compare", "--data", items, "--judgments", judgments, "--aspect", "q", "--baseline", "base",
            "--candidate", "cand", "--human-ids", ids_file(tmp_path, 12))
    done = run_cli(*base, "--plan", "0.4", "--json")
    assert done.returncode in (0, 1), done.stderr  # the gate's own decision stands
    plan = json.loads(done.stdout)["plan"]
    assert plan["labels"] >= 10 and plan["unit"] == "labelled inputs (both outputs)" and plan["so_far"] == 12
    text = run_cli(*base, "--plan", "0.4")
    assert "plan: to catch a regression of 0.4 (margin 0) with 80% power: about" in " ".join(text.stdout.split())
    bad = run_cli(*base, "--plan", "-1")
    assert bad.returncode == 2 and "--plan" in bad.stderr
    blind = run_cli("compare", "--data", items, "--judgments", judgments, "--aspect", "q", "--baseline", "base",
                    "--candidate", "cand", "--plan", "0.4")
    assert blind.returncode == 2 and "pilot" in blind.stderr


def test_until_decided_exits_3_until_the_labels_decide_and_compare_reads_a_sequence(tmp_path):
    items, judgments = items_and_judgments(tmp_path)
    base = ("evaluate", "--data", items, "--judgments", judgments, "--aspect", "q", "--bootstrap", "50",
            "--until-decided", "best")
    few = run_cli(*base, "--human-ids", ids_file(tmp_path, 3))
    assert few.returncode == 3, few.stderr
    assert "not decided (which system is best; confidence sequences at 0.975 each)" in " ".join(few.stdout.split())
    many = run_cli(*base, "--human-ids", ids_file(tmp_path, 38), "--json", "--target", "items")  # 38 of 40 inputs
    decision = json.loads(many.stdout)["decision"]
    assert many.returncode == 0 and decision["decided"] and decision["answer"].startswith("base is best")
    compare = run_cli("compare", "--data", items, "--judgments", judgments, "--aspect", "q", "--baseline", "base",
                      "--candidate", "cand", "--human-ids", ids_file(tmp_path, 30), "--sequential", "--json")
    result = json.loads(compare.stdout)
    assert result["interval"] == "confidence-sequence" and result["estimator"] == "human"
    blind = run_cli("compare", "--data", items, "--judgments", judgments, "--aspect", "q", "--baseline", "base",
                    "--candidate", "cand", "--sequential")
    assert blind.returncode == 2 and "--sequential" in blind.stderr


def test_monitor_raises_an_alarm_on_a_planted_drop_and_names_a_missing_time(tmp_path):
    rng = np.random.default_rng(0)
    items, judged = [], []
    for day in range(24):
        for system in ("steady", "drops"):
            for k in range(10):
                item_id = f"{system}-{day}-{k}"
                items.append({"id": item_id, "system_id": system, "output": "o", "scale": [1, 5],
                              "extra": {"at": f"2026-11-{day + 1:02d}T09:00:00"}})
                shift = -1.0 if system == "drops" and day >= 14 else 0.0
                judged.append({"item_id": item_id, "score": float(np.clip(np.round(rng.normal(3.5 + shift, 0.7)), 1, 5))})
    data = write_jsonl(tmp_path / "logs.jsonl", items)
    judgments = write_jsonl(tmp_path / "judged.jsonl", judged)
    done = run_cli("evaluate", "--data", data, "--judgments", judgments, "--monitor", "--time-field", "at", "--json")
    assert done.returncode == 1, done.stderr
    watches = {w["system"]: w for w in json.loads(done.stdout)["monitor"]}
    assert watches["steady"]["alarm"] is None and watches["drops"]["alarm"] == "down"
    assert watches["drops"]["alarm_at"] >= "2026-11-15"
    missing = run_cli("evaluate", "--data", data, "--judgments", judgments, "--monitor")  # no field 'time'
    assert missing.returncode == 2 and f"{data}:1: field 'time': no time here" in missing.stderr
    assert missing.stdout == ""
    out = tmp_path / "watch"
    written = run_cli("evaluate", "--data", data, "--judgments", judgments, "--monitor", "--time-field", "at",
                      "--out", out)
    assert written.returncode == 1 and f"report: {out / 'monitor.json'}" in written.stdout.replace("\n", "")
    record = json.loads((out / "monitor.json").read_text())
    assert record["alarm"] is True and {w["system"] for w in record["monitor"]} == {"steady", "drops"}
    assert (out / "monitor.csv").read_text().startswith("system,")
    for extra, flag in ((("--human-ids", "all"), "--human-ids"), (("--until-decided", "best"), "--until-decided")):
        refused = run_cli("evaluate", "--data", data, "--judgments", judgments, "--monitor", "--time-field", "at",
                          *extra)
        assert refused.returncode == 2 and flag in refused.stderr and "--monitor" in refused.stderr
    other_kind = run_cli("evaluate", "--data", data, "--judgments", judgments, "--monitor", "--time-field", "at",
                         "--reference-until", "5")
    assert other_kind.returncode == 2 and "the items' times are dates or times" in other_kind.stderr


def test_human_ids_all_without_any_human_score_is_an_error_not_judge_only(tmp_path):
    rows = [{"id": f"i{k}", "system_id": "ab"[k % 2], "output": "o", "scale": [1, 5]} for k in range(10)]
    data = write_jsonl(tmp_path / "items.jsonl", rows)
    judged = write_jsonl(tmp_path / "judged.jsonl", [{"item_id": f"i{k}", "score": 3.0} for k in range(10)])
    for command in (("evaluate",), ("compare", "--baseline", "a", "--candidate", "b")):
        done = run_cli(*command, "--data", data, "--judgments", judged, "--aspect", "q", "--human-ids", "all")
        assert done.returncode == 2 and "no item has a human score for aspect 'q'" in done.stderr, done.stderr
        assert "scores.q" in done.stderr and done.stdout == ""
