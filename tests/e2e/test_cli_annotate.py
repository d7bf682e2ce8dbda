"""`judgelab annotate`, `agreement` and `--human` given bad input: one clear line and exit 2, nothing written."""

from __future__ import annotations

import json
import socket

import httpx
import pytest

from judgelab.errors import DataError
from tests.e2e.annotate_server import AnnotateServer
from tests.e2e.cli import run_cli, run_main_in_process, write_jsonl

pytest.importorskip("starlette", reason="needs the annotate extra")


@pytest.fixture()
def items(tmp_path):
    return write_jsonl(tmp_path / "items.jsonl", [{"id": f"i{k}", "output": f"summary {k}", "scale": [1, 5],
                                                   "scores": {"coherence": 1 + k % 5}} for k in range(6)])


def _annotate(capsys, items, out, *more):
    return run_main_in_process(capsys, "annotate", "--data", items, "--aspect", "coherence", "--out", out, *more)


def test_an_unknown_aspect_is_named_with_the_way_out(capsys, items, tmp_path):
    code, err = run_main_in_process(capsys, "annotate", "--data", items, "--aspect", "coherance",
                                    "--out", tmp_path / "labels.jsonl")
    assert code == 2 and "unknown aspect 'coherance'" in err and "--criteria" in err and "coherence" in err
    assert not (tmp_path / "labels.jsonl").exists()


def test_an_item_without_the_output_field_is_located(capsys, tmp_path):
    data = write_jsonl(tmp_path / "items.jsonl", [{"id": "i0", "output": "fine"}, {"id": "i1", "source": "no output"}])
    code, err = _annotate(capsys, data, tmp_path / "labels.jsonl")
    assert code == 2 and f"{data}:2: field 'output'" in err
    blank = write_jsonl(tmp_path / "blank.jsonl", [{"id": "i0", "output": "fine"}, {"id": "i1", "output": "  "}])
    code, err = _annotate(capsys, blank, tmp_path / "labels.jsonl")
    assert code == 2 and "1 items have nothing to rate ('i1')" in err


def test_a_port_in_use_is_a_clear_error(capsys, items, tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        code, err = _annotate(capsys, items, tmp_path / "labels.jsonl", "--port", port)
    assert code == 2 and f"port {port} on 127.0.0.1 is in use" in err and "--port" in err
    assert len(err.strip().splitlines()) == 1


def test_a_labels_file_from_another_data_set_is_refused_naming_the_ids(capsys, items, tmp_path):
    out = write_jsonl(tmp_path / "labels.jsonl", [{"item_id": f"news-{k}", "aspect": "coherence", "value": 3,
                                                   "annotator": "a"} for k in range(3)])
    before = out.read_bytes()
    code, err = _annotate(capsys, items, out, "--port", 0)
    assert code == 2 and "3 labelled item ids are not in the data ('news-0', 'news-1', 'news-2')" in err
    assert out.read_bytes() == before
    judgments = write_jsonl(tmp_path / "judgments.jsonl", [{"item_id": f"i{k}", "score": k} for k in range(6)])
    code, err = run_main_in_process(capsys, "meta", "--data", items, "--judgments", judgments, "--human", out)
    assert code == 2 and "'news-0'" in err and "another data set" in err


def test_a_human_file_on_another_scale_is_refused(capsys, items, tmp_path):
    labels = write_jsonl(tmp_path / "labels.jsonl", [{"item_id": "i0", "aspect": "coherence", "value": 9}])
    judgments = write_jsonl(tmp_path / "judgments.jsonl", [{"item_id": f"i{k}", "score": k} for k in range(6)])
    code, err = run_main_in_process(capsys, "meta", "--data", items, "--judgments", judgments, "--human", labels)
    assert code == 2 and "outside the scale [1, 5]" in err and "another scale" in err
    code, err = _annotate(capsys, items, labels, "--port", 0)
    assert code == 2 and "not on this session's scale" in err


def test_agreement_needs_two_annotators(capsys, tmp_path):
    labels = write_jsonl(tmp_path / "labels.jsonl", [{"item_id": "i0", "aspect": "c", "value": 2, "annotator": "solo"}])
    code, err = run_main_in_process(capsys, "agreement", labels)
    assert code == 2 and "only one annotator" in err


def test_meta_with_the_labels_of_one_annotator_compares_on_the_labelled_items(items, tmp_path):
    labels = write_jsonl(tmp_path / "labels.jsonl", [{"item_id": f"i{k}", "aspect": "coherence", "value": 5 - k,
                                                      "annotator": "a"} for k in range(4)])
    judgments = write_jsonl(tmp_path / "judgments.jsonl", [{"item_id": f"i{k}", "score": k} for k in range(6)])
    result = run_cli("meta", "--data", items, "--judgments", judgments, "--human", labels, "--json", "--bootstrap", "0")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["coverage"]["n_used"] == 4 and report["coverage"]["n_no_human"] == 2
    assert report["dataset"]["spearman"]["value"] == pytest.approx(-1.0)  # the labels' order, not the items' scores
    assert report["human_labels"] == {"file": str(labels), "annotators": 1, "labelled_items": 4}
    text = run_cli("meta", "--data", items, "--judgments", judgments, "--human", labels, "--bootstrap", "0").stdout
    assert "human labels:" in text and "4 items, 1 annotator" in text


def test_a_non_local_host_needs_the_printed_token(items, tmp_path):
    # 127.0.0.2 is a loopback address, yet not "127.0.0.1": the server treats it as a network address
    with AnnotateServer("--data", items, "--aspect", "coherence", "--out", tmp_path / "labels.jsonl",
                        "--host", "127.0.0.2", "--annotator", "ann") as server:
        assert "?token=" in server.url
        base = server.url.split("?")[0]
        assert httpx.get(base).status_code == 403
        assert httpx.get(base + "?token=guess").status_code == 403
        page = httpx.get(server.url)
        assert page.status_code == 200 and "summary 0" in page.text
    assert "needs the token" in server.output


def test_optimize_reads_dev_and_test_labels_from_one_human_file(tmp_path):
    from judgelab.commands.optimize import _dev_and_test

    dev = write_jsonl(tmp_path / "dev.jsonl", [{"id": f"d{k}", "output": "x"} for k in range(4)])
    test = write_jsonl(tmp_path / "test.jsonl", [{"id": f"t{k}", "output": "y"} for k in range(3)])
    labels = write_jsonl(tmp_path / "labels.jsonl", [{"item_id": i, "aspect": "coherence", "value": 2, "annotator": a}
                                                     for i in ("d0", "d2", "t1") for a in ("x", "y")])
    dev_items, test_items = _dev_and_test(dev, test, labels, "coherence", None)
    assert [item.id for item in dev_items] == ["d0", "d2"] and [item.id for item in test_items] == ["t1"]
    assert dev_items[0].scores == {"coherence": 2.0}
    assert _dev_and_test(dev, test, labels, "coherence", 1) == (dev_items[:1], test_items)
    with pytest.raises(DataError, match="'t1'"):  # without --test, a test item's label belongs to no item given
        _dev_and_test(dev, None, labels, "coherence", None)


def test_fit_learns_from_the_human_file_only(benchmarks_dir, tmp_path):
    from judgelab.data import load_items, save_items

    items = [item for item in load_items(benchmarks_dir / "topical_chat.jsonl")][:48]
    data = save_items([item.model_copy(update={"scores": {}}) for item in items], tmp_path / "data.jsonl")
    labels = write_jsonl(tmp_path / "labels.jsonl", [
        {"item_id": item.id, "aspect": "coherence", "value": item.scores["coherence"], "annotator": "a"}
        for item in items[:40]])
    result = run_cli("fit", "--method", "similarity", "--data", data, "--human", labels, "--out", tmp_path / "sim.yaml")
    assert result.returncode == 0, result.stderr
    assert "fitted similarity judge on 40 items" in result.stdout


def test_the_start_line_says_the_scale_and_the_aspects(items, tmp_path):
    with AnnotateServer("--data", items, "--aspect", "coherence", "--out", tmp_path / "labels.jsonl") as server:
        pass
    assert "6 items, aspect 'coherence', scale 1-5; answers appended to" in server.output
    with AnnotateServer("--data", items, "--aspect", "coherence,fluency", "--labels", "0=bad,1=good",
                        "--out", tmp_path / "two.jsonl") as server:
        pass
    assert ("aspects 'coherence' (scale 0-1 (0 bad, 1 good)), 'fluency' (scale 0-1 (0 bad, 1 good))"
            in server.output)


def test_several_criteria_must_match_the_aspects(capsys, items, tmp_path):
    code, err = run_main_in_process(capsys, "annotate", "--data", items, "--aspect", "coherence,fluency",
                                    "--out", tmp_path / "labels.jsonl", "--criteria", "Only one")
    assert code == 2 and "1 --criteria for 2 aspects (coherence, fluency)" in err
