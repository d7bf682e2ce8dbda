"""The annotate app in process (Starlette's TestClient drives the real ASGI app): security checks, the
labels file it writes and reads back, and how items are shared out among annotators."""

from __future__ import annotations

import json
import re
import warnings

import pytest

pytest.importorskip("starlette", reason="needs the annotate extra")

from starlette.testclient import TestClient  # noqa: E402

from judgelab.annotate.server import CSP, answer_text, choices_class, create_app, next_commands  # noqa: E402
from judgelab.annotate.store import LabelStore  # noqa: E402
from judgelab.annotate.task import AnnotationTask, build_task, scale_from_labels, scale_from_range  # noqa: E402
from judgelab.data import Item  # noqa: E402
from judgelab.data.labels import load_labels  # noqa: E402
from judgelab.errors import ConfigError, DataError, DataWarning  # noqa: E402

ORIGIN = "http://127.0.0.1"


def _task(tmp_path, n=6, **options) -> AnnotationTask:
    items = [Item(id=f"i{k}", source=f"source {k}", output=f"output {k}") for k in range(n)]
    return AnnotationTask(items=items, aspect="coherence", scale=scale_from_range("1-5"), criteria="Be coherent.",
                          out=tmp_path / "labels.jsonl", **options)


def _client(task, **options) -> TestClient:
    return TestClient(create_app(task, **options), base_url=ORIGIN)


def _form(page: str) -> dict[str, str]:
    return dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)"', page))


def _answer(client: TestClient, value: str = "4", **extra) -> tuple[int, dict[str, str]]:
    form = _form(client.get("/").text)
    response = client.post("/answer", data={**form, "value": value, **extra}, headers={"origin": ORIGIN},
                           follow_redirects=False)
    return response.status_code, form


def _lines(task) -> list[dict]:
    return [json.loads(line) for line in task.out.read_text().splitlines()] if task.out.exists() else []


def test_every_response_carries_a_strict_policy(tmp_path):
    response = _client(_task(tmp_path, annotator="ann")).get("/")
    assert response.headers["content-security-policy"] == CSP
    assert "unsafe-inline" not in CSP and "script-src 'self'" in CSP
    assert response.headers["x-content-type-options"] == "nosniff" and response.headers["cache-control"] == "no-store"
    cookie = response.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=strict" in cookie


def test_a_post_without_the_sessions_token_or_from_another_site_is_refused(tmp_path):
    task = _task(tmp_path, annotator="ann")
    client = _client(task)
    form = _form(client.get("/").text)
    for changed, headers in (({"csrf": "forged"}, {}), ({}, {"origin": "http://evil.example"}),
                             ({"csrf": ""}, {})):
        response = client.post("/answer", data={**form, **changed, "value": "3"}, headers=headers, follow_redirects=False)
        assert response.status_code == 403
    stranger = TestClient(create_app(task), base_url=ORIGIN)  # no session cookie at all
    assert stranger.post("/answer", data={**form, "value": "3"}, follow_redirects=False).status_code == 403
    assert _lines(task) == []
    assert _answer(client)[0] == 303 and len(_lines(task)) == 1


def test_other_host_names_are_refused_on_a_local_server(tmp_path):
    # a DNS-rebinding page would reach 127.0.0.1 under its own name
    assert TestClient(create_app(_task(tmp_path)), base_url="http://attacker.example").get("/").status_code == 400
    assert TestClient(create_app(_task(tmp_path)), base_url="http://localhost:8765").get("/").status_code == 200


def test_a_non_local_server_asks_for_its_token(tmp_path):
    app = create_app(_task(tmp_path, annotator="ann"), token="s3cret-token", host="0.0.0.0")
    client = TestClient(app, base_url="http://192.0.2.10:8765")
    assert client.get("/").status_code == 403
    assert client.get("/?token=wrong").status_code == 403
    assert client.get("/static/annotate.css").status_code == 403
    assert client.get("/?token=s3cret-token").status_code == 200
    assert client.get("/").status_code == 200  # the cookie stands for the token from then on


def test_a_resubmitted_form_is_written_once_and_a_skip_is_recorded(tmp_path):
    task = _task(tmp_path, annotator="ann")
    client = _client(task)
    code, form = _answer(client, "2")
    again = client.post("/answer", data={**form, "value": "2"}, headers={"origin": ORIGIN}, follow_redirects=False)
    assert code == again.status_code == 303
    _answer(client, action="skip", note="unreadable")
    lines = _lines(task)
    assert [(line["item_id"], line["value"], line.get("skipped", False)) for line in lines] == [
        ("i0", 2, False), ("i1", None, True)]
    assert lines[1]["note"] == "unreadable" and lines[0]["scale"] == [1.0, 5.0] and lines[0]["seconds"] >= 0
    assert "2 of 6" in client.get("/").text


def test_bad_answers_are_refused_and_nothing_is_written(tmp_path):
    task = _task(tmp_path, annotator="ann")
    client = _client(task)
    assert _answer(client, "7")[0] == 400
    assert _answer(client, "3", item_id="not-an-item")[0] == 400
    assert _lines(task) == []


def test_reopening_continues_where_it_stopped_and_drops_a_line_a_kill_cut_short(tmp_path):
    task = _task(tmp_path, annotator="ann")
    client = _client(task)
    for value in "123":
        _answer(client, value)
    with task.out.open("a") as out:
        out.write('{"item_id": "i3", "aspect": "coher')  # the answer in flight when the server was killed
    with pytest.warns(DataWarning, match="partial last line"):
        reopened = _client(task)
        page = reopened.get("/").text
    assert 'name="item_id" value="i3"' in page and "3 of 6" in page
    assert [label.value for label in load_labels(task.out)] == [1.0, 2.0, 3.0]


def test_a_labels_file_from_another_data_set_or_scale_is_refused(tmp_path):
    task = _task(tmp_path)
    task.out.write_text(json.dumps({"item_id": "elsewhere-7", "aspect": "coherence", "value": 3}) + "\n")
    with pytest.raises(DataError, match="'elsewhere-7'.*another data set"):
        LabelStore(task)
    task.out.write_text(json.dumps({"item_id": "i0", "aspect": "coherence", "value": 9}) + "\n")
    with pytest.raises(DataError, match=r"labels.jsonl:1: field 'value': value 9.0 .* not on this session's scale"):
        LabelStore(task)
    task.out.write_text(json.dumps({"item_id": "i0", "aspect": "fluency", "value": 9}) + "\n")
    LabelStore(task).close()  # another aspect's labels may share the file


def test_back_shows_the_earlier_answer_and_a_new_one_replaces_it(tmp_path):
    task = _task(tmp_path, annotator="ann")
    client = _client(task)
    _answer(client, "2")
    _answer(client, "5")
    page = client.get("/item/0").text
    assert 'name="item_id" value="i0"' in page and re.search(r'value="2"\s+data-key="2"\s+class="choice chosen"', page)
    form = _form(page)
    client.post("/answer", data={**form, "value": "4"}, headers={"origin": ORIGIN})
    assert {label.item_id: label.value for label in load_labels(task.out)} == {"i0": 4.0, "i1": 5.0}
    assert client.get("/item/9", follow_redirects=False).status_code == 303


def test_overlap_items_go_to_everyone_and_the_rest_to_whoever_takes_them_first(tmp_path):
    task = _task(tmp_path, n=10, overlap=0.4, seed=1)
    assert len(task.shared) == 4
    store = LabelStore(task)
    taken: dict[str, list[str]] = {"a": [], "b": []}
    for _ in range(20):  # a and b take turns until neither has anything left
        for annotator in taken:
            item = store.next_item(annotator)
            if item is not None:
                store.record(annotator, item.id, 3.0)
                taken[annotator].append(item.id)
    store.close()
    a, b = set(taken["a"]), set(taken["b"])
    assert a & b == set(task.shared)
    assert a | b == {item.id for item in task.items}
    assert store.progress("a").done == len(a) and store.progress("a").total == len(a)


def test_an_item_being_labelled_is_not_handed_to_a_colleague(tmp_path):
    task = _task(tmp_path, n=3, overlap=0.0)
    store = LabelStore(task)
    first = store.next_item("a", now=100.0)
    assert store.next_item("b", now=101.0).id != first.id
    assert store.next_item("a", now=102.0).id == first.id  # a reload shows a the same item
    store.close()


def test_the_judges_score_shows_only_when_asked(tmp_path):
    from judgelab.data.judgment import Judgment

    plain = _client(_task(tmp_path, annotator="ann")).get("/").text
    assert 'id="judge"' not in plain
    task = _task(tmp_path, annotator="ann", judgments={"i0": Judgment(item_id="i0", score=4.25, explanation="fine")})
    page = _client(task).get("/").text
    assert 'id="judge"' in page and "4.25" in page


def test_a_faithfulness_judges_claims_mark_the_answers_sentences(tmp_path):
    from judgelab.annotate.claims import claims_shown, pieces_of
    from judgelab.data.judgment import Judgment

    output = "The tower was finished in 1889 [1]. It is <b>330</b> metres tall.\nIt was painted blue."
    claims = [{"claim": "The tower was finished in 1889.", "verdict": "supported"},
              {"claim": "The tower is 330 metres tall.", "verdict": "not found"},
              {"claim": "The tower was painted blue.", "verdict": "contradicted"},
              {"claim": "The tower was painted blue in 2020.", "verdict": "supported"},  # the same sentence: worst shown
              {"claim": "Paris hosts an exhibition.", "verdict": "supported"}]  # shares too little: listed only
    judged = Judgment(item_id="i0", score=0.6, extra={"claims": claims})
    shown = claims_shown(output, judged)
    assert "".join(p.text for p in shown.pieces) == output  # nothing of the answer lost or changed
    assert [p.verdict for p in shown.pieces] == ["supported", "not found", "contradicted"]
    assert len(shown.claims) == 5 and len(shown.pieces[2].claims) == 2
    assert claims_shown(output, Judgment(item_id="i0", score=3.0)) is None  # not a faithfulness judgment
    assert pieces_of("One. Two!\n\nThree") == ["One. ", "Two!\n\n", "Three"]

    items = [Item(id="i0", source="How tall is the tower?", output=output)]
    task = AnnotationTask(items=items, aspect="coherence", scale=scale_from_range("1-5"), criteria="Be coherent.",
                          out=tmp_path / "labels.jsonl", annotator="ann", judgments={"i0": judged})
    page = _client(task).get("/").text
    assert '<span class="claim supported" title="supported: The tower was finished in 1889.">' in page
    assert '<span class="claim contradicted"' in page and 'id="claims"' in page
    assert "&lt;b&gt;330&lt;/b&gt;" in page and "<b>330</b>" not in page  # the answer's markup stays text
    assert page.count('class="claim-verdict') == 5
    plain = AnnotationTask(items=items, aspect="coherence", scale=scale_from_range("1-5"), criteria="Be coherent.",
                           out=tmp_path / "plain.jsonl", annotator="ann")
    assert 'class="claim' not in _client(plain).get("/").text  # hidden unless --show-judge


def test_names_are_asked_for_and_checked(tmp_path):
    task = _task(tmp_path)
    client = _client(task)
    page = client.get("/").text
    assert 'id="name"' in page
    csrf = _form(page)["csrf"]
    assert client.post("/login", data={"csrf": csrf, "name": "  "}, headers={"origin": ORIGIN}).status_code == 400
    client.post("/login", data={"csrf": csrf, "name": "Ann  Lee"}, headers={"origin": ORIGIN})
    _answer(client, "3")
    assert _lines(task)[0]["annotator"] == "Ann Lee"


def test_build_task_checks_what_a_user_can_get_wrong(tmp_path):
    data = tmp_path / "items.jsonl"
    rows = [{"id": f"i{k}", "output": f"o{k}", "scale": [0, 3]} for k in range(5)]
    data.write_text("".join(json.dumps(row) + "\n" for row in rows))
    out = tmp_path / "labels.jsonl"
    task = build_task(data, "relevance", out)
    assert [c.value for c in task.scale.choices] == [0.0, 1.0, 2.0, 3.0]  # the items' declared scale
    with pytest.raises(ConfigError, match="unknown aspect 'cohernce'.*with criteria TEXT"):
        build_task(data, "cohernce", out)
    assert build_task(data, "cohernce", out, criteria="Typo or not, defined here.").criteria.startswith("Typo")
    with pytest.raises(ConfigError, match="pairwise needs pairwise items"):
        build_task(data, "coherence", out, pairwise=True)
    ids = tmp_path / "ids.txt"
    ids.write_text("i3\n# comment\ni1\nnope\n")
    with pytest.raises(DataError, match=r"ids.txt:4: item 'nope' is not in the data"):
        build_task(data, "coherence", out, ids=ids)
    ids.write_text("i3\ni1\n")
    assert [item.id for item in build_task(data, "coherence", out, ids=ids).items] == ["i3", "i1"]
    assert len(build_task(data, "coherence", out, sample=3, seed=2).items) == 3
    with pytest.raises(ConfigError, match="one of scale, labels and pairwise"):
        build_task(data, "coherence", out, scale="1-5", labels="0,1")
    with pytest.raises(ConfigError, match="overlap 1.5: give a share"):
        build_task(data, "coherence", out, overlap=1.5)
    judged = tmp_path / "judgments.jsonl"
    judged.write_text("".join(json.dumps({"item_id": f"i{k}", "score": k / 2}) + "\n" for k in range(3)))
    assert sorted(build_task(data, "coherence", out, show_judge=judged).judgments) == ["i0", "i1", "i2"]
    judged.write_text(json.dumps({"item_id": "elsewhere", "score": 1}) + "\n")
    with pytest.raises(DataError, match="none of the 5 items"):
        build_task(data, "coherence", out, show_judge=judged)


def test_scales_and_their_keys():
    assert [(c.value, c.key) for c in scale_from_range("0-3").choices] == [(0, "0"), (1, "1"), (2, "2"), (3, "3")]
    assert [c.key for c in scale_from_range("1-10").choices][-2:] == ["9", "0"]
    assert [(c.value, c.caption) for c in scale_from_labels("0=bad, 2=good").choices] == [(0, "bad"), (2, "good")]
    with pytest.raises(ConfigError, match="more than the 10 keys"):
        scale_from_range("0-10")
    with pytest.raises(ConfigError, match="not a number"):
        scale_from_labels("bad,good")
    with pytest.raises(ConfigError, match="LOW-HIGH"):
        scale_from_range("5-1")


def test_connections_to_the_bound_socket_send_small_writes_at_once():
    """Nagle's algorithm off (TCP_NODELAY) on accepted connections: asyncio sets it only on sockets
    created as TCP, and without it every kept-alive page waited ~40 ms for a delayed ACK."""
    import asyncio
    import socket

    from judgelab.annotate.server import bind

    async def accepted_nodelay() -> int:
        seen: asyncio.Future = asyncio.get_running_loop().create_future()

        async def handle(reader, writer):
            seen.set_result(writer.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        server = await asyncio.start_server(handle, sock=bind("127.0.0.1", 0))
        async with server:
            _, writer = await asyncio.open_connection(*server.sockets[0].getsockname())
            value = await asyncio.wait_for(seen, 10)
            writer.close()
        return value

    assert asyncio.run(accepted_nodelay()) != 0


def test_a_file_posted_as_a_field_is_refused_and_nothing_is_written(tmp_path):
    """A multipart post whose note is a file upload used to write "note": "UploadFile(...)"."""
    task = _task(tmp_path, annotator="ann")
    client = _client(task)
    form = _form(client.get("/").text)
    response = client.post("/answer", data={**form, "value": "4"}, files={"note": ("note.txt", b"hello")},
                           headers={"origin": ORIGIN}, follow_redirects=False)
    assert response.status_code == 400 and "text fields only" in response.text
    assert _lines(task) == []
    assert _answer(client)[0] == 303 and len(_lines(task)) == 1  # the same form as text is saved


def test_a_post_larger_than_a_form_needs_is_refused_before_it_is_read(tmp_path):
    from judgelab.annotate.server import MAX_POST

    task = _task(tmp_path, annotator="ann")
    client = _client(task)
    form = _form(client.get("/").text)
    response = client.post("/answer", data={**form, "value": "4", "note": "x" * MAX_POST},
                           headers={"origin": ORIGIN}, follow_redirects=False)
    assert response.status_code == 413 and "at most 64 KB" in response.text
    chunked = client.post("/answer", content=iter([b"csrf=" + form["csrf"].encode() + b"&note=", b"y" * MAX_POST]),
                          headers={"origin": ORIGIN, "content-type": "application/x-www-form-urlencoded"},
                          follow_redirects=False)  # no Content-Length: counted as it streams in
    assert chunked.status_code == 413
    assert _lines(task) == []


# -- comparisons between systems (annotate --pairwise) ---------------------------------------------------
def _comparisons(tmp_path, n=4, **extra):
    rows = [{"id": f"c{k}", "system_a": "alpha", "system_b": "beta", "instruction": f"Question {k}?",
             "output_a": f"alpha says {k}", "output_b": f"beta says {k}", **extra} for k in range(n)]
    path = tmp_path / "comparisons.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_a_comparison_shows_the_prompt_and_both_responses_blind_with_keys_a_b_t(tmp_path):
    task = build_task(_comparisons(tmp_path), "preference", tmp_path / "labels.jsonl", pairwise=True,
                      annotator="ann")
    assert [(c.value, c.key) for c in task.scale.choices] == [("left", "a"), ("right", "b"), ("tie", "t")]
    client = _client(task)
    page = client.get("/").text
    assert "Question" in page and "Response A" in page and "Response B" in page
    assert "alpha says" in page and "beta says" in page and ">alpha<" not in page and "system" not in page.lower()
    for value in ("right", "tie"):
        assert _answer(client, value)[0] == 303
    page = client.get("/").text
    assert 'data-key="p"' in page and 'data-key="b"' in page  # back is p: b picks response B
    written = _lines(task)
    for line in written:  # the right-hand response is b unless the order was swapped for this item
        assert line["value"] in ("a", "b", "tie") and line["order"] in ("ab", "ba")
    right = written[0]
    assert right["value"] == ("b" if right["order"] == "ab" else "a") and written[1]["value"] == "tie"


def test_pairwise_labels_are_read_back_and_numbers_refused(tmp_path):
    task = build_task(_comparisons(tmp_path), "preference", tmp_path / "labels.jsonl", pairwise=True,
                      annotator="ann")
    _answer(_client(task), "left")
    store = LabelStore(task)  # resumes: c-first answered, the next one is offered
    assert store.progress("ann").done == 1
    store.close()
    with task.out.open("a") as handle:
        handle.write(json.dumps({"item_id": "c1", "aspect": "preference", "value": 3, "annotator": "ann"}) + "\n")
    with pytest.raises(DataError, match="not on this session's scale"):
        LabelStore(task)


def test_comparisons_without_texts_are_refused_and_a_sample_file_selects_them(tmp_path):
    votes = tmp_path / "votes.jsonl"
    votes.write_text("".join(json.dumps({"id": f"v{k}", "system_a": "x", "system_b": "y"}) + "\n" for k in range(3)))
    with pytest.raises(DataError, match=r"3 comparisons have no texts to show \(output_a, output_b\), e.g. 'v0'"):
        build_task(votes, "preference", tmp_path / "labels.jsonl", pairwise=True)
    sample = tmp_path / "sample.txt"  # as judgelab sample writes it
    sample.write_text("# judgelab sample: method=stratified units=comparisons\nc2\t0.5\nc0\t0.5\n")
    task = build_task(_comparisons(tmp_path), "preference", tmp_path / "labels.jsonl", ids=sample)
    assert [item.id for item in task.items] == ["c2", "c0"]


# -- issue #41, items 13-16: what a newcomer meets in the app -------------------------------------------------------
def test_pairwise_keys_pages_and_history_follow_the_session(tmp_path):
    task = build_task(_comparisons(tmp_path), "preference", tmp_path / "labels.jsonl", pairwise=True)
    client = _client(task)
    login = client.get("/").text
    assert "<kbd>a</kbd> <kbd>b</kbd> <kbd>t</kbd>" in login and "<kbd>p</kbd></td><td>back" in login
    assert "<kbd>1</kbd>" not in login and "<kbd>b</kbd></td><td>back" not in login
    form = _form(login)
    client.post("/login", data={"csrf": form["csrf"], "name": "ann"}, headers={"origin": ORIGIN})
    for _ in task.items:
        _answer(client, "left")  # A (the left) is better, every time, whichever order the pair was shown in
    done = client.get("/").text
    assert 'data-key="p"' in done and "<kbd>p</kbd> back" in done and 'data-key="b"' not in done
    history = client.get("/history").text
    assert history.count("A is better") == len(task.items) and "B is better" not in history
    swapped = [label for label in load_labels(task.out) if label.order == "ba"]
    assert swapped and all(label.value == "b" for label in swapped)  # the file keeps the items' own order
    assert answer_text(task, swapped[0].model_copy(update={"order": None})) == "A is better"  # older files: redrawn


def test_choice_layouts_keep_a_scale_in_one_row():
    assert choices_class(scale_from_range("1-5")) == "row"
    assert choices_class(scale_from_range("0-9")) == "row"
    assert choices_class(scale_from_range("1-10")) == "row keyed"  # 0 for 10, shown above it
    assert choices_class(scale_from_labels("0,0.25,0.5,0.75,1")) == "row keyed"
    assert choices_class(scale_from_labels(",".join(f"{k / 10:g}" for k in range(1, 11)))) == "column"  # too long
    assert choices_class(scale_from_labels("0=irrelevant,1=relevant")) == "column captioned"


def test_the_done_page_names_the_files_as_given_quoted_for_a_shell(tmp_path, monkeypatch):
    data = tmp_path / "items.jsonl"
    data.write_text("".join(json.dumps({"id": f"i{k}", "output": f"o {k}"}) + "\n" for k in range(2)))
    monkeypatch.chdir(tmp_path)
    task = build_task("items.jsonl", "coherence", "my labels/labels.jsonl", annotator="ann")
    meta, agreement = next_commands(task)
    assert meta == ["judgelab", "meta", "--data", "items.jsonl", "--judgments", "RUN", "--human",
                    "'my labels/labels.jsonl'"]
    assert agreement == ["judgelab", "agreement", "'my labels/labels.jsonl'"]
    client = _client(task)
    for _ in range(2):
        _answer(client, "3")
    done = client.get("/").text
    assert '<span class="word">&#39;my labels/labels.jsonl&#39;</span>' in done
    several = build_task("items.jsonl", "coherence,fluency", "l.jsonl")
    assert next_commands(several)[1] == ["judgelab", "agreement", "l.jsonl", "--aspect", "coherence"]


def test_text_columns_the_page_would_not_show_are_named_at_start_and_on_the_page(tmp_path):
    rows = [{"id": f"i{k}", "input": f"Summarise article {k} in one line.", "input_id": f"a{k}", "output": f"o {k}"}
            for k in range(3)]
    data = tmp_path / "items.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows))
    with pytest.warns(DataWarning, match=r"3 of 3 items have no source to show with their output, and their column "
                                         r"'input' holds text annotate does not show") as caught:
        task = build_task(data, "coherence", tmp_path / "labels.jsonl", annotator="ann")
    # the loader's own did-you-mean (input -> source, input_id -> group_id) comes first: annotate's is the last
    assert "input_id" not in str(caught[-1].message) and "'source'" in str(caught[-1].message)
    page = _client(task).get("/").text
    assert 'id="unshown"' in page and "<code>input</code>" in page and "<code>source</code>" in page
    with_source = tmp_path / "with-source.jsonl"
    with_source.write_text("".join(json.dumps({**row, "source": "the article"}) + "\n" for row in rows))
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*annotate does not show")  # (input_id -> group_id is the loader's)
        task = build_task(with_source, "coherence", tmp_path / "labels.jsonl", annotator="ann")
    assert 'id="unshown"' not in _client(task).get("/").text


def test_an_answer_the_full_disk_cut_is_refused_and_nothing_of_it_stays(tmp_path, monkeypatch):
    """Issue 50, item 16 (os.write made to fail with ENOSPC after 40 bytes; tests/reliability/test_labelling_app.py
    does it on a real 5 MB tmpfs): the failed write left a partial line and the redirect said saved; once space
    was back, the next answer was glued onto it and every reader refused the file. Now the answer gets an error
    page saying the disk is full, the file is as before, and the next answer is written whole."""
    from tests.doubles import FullDisk

    task = _task(tmp_path, annotator="ann")
    client = _client(task)
    assert _answer(client, "2")[0] == 303
    before = task.out.read_bytes()
    disk = FullDisk(monkeypatch, tmp_path, free=40)
    form = _form(client.get("/").text)
    refused = client.post("/answer", data={**form, "value": "4"}, headers={"origin": ORIGIN}, follow_redirects=False)
    assert refused.status_code == 507
    assert "Not saved" in refused.text and "is full" in refused.text and "nothing of this answer" in refused.text
    assert task.out.read_bytes() == before
    assert 'name="item_id" value="i1"' in client.get("/").text  # still to be answered
    disk.free = None  # space is back: the same form again
    assert client.post("/answer", data={**form, "value": "4"}, headers={"origin": ORIGIN},
                       follow_redirects=False).status_code == 303
    assert [(label.item_id, label.value) for label in load_labels(task.out)] == [("i0", 2.0), ("i1", 4.0)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no partial line to drop on a restart
        assert "2 of 6" in _client(task).get("/").text


def test_a_query_id_names_the_whole_pool_of_that_query(tmp_path):
    data = tmp_path / "pairs.jsonl"
    rows = [{"id": f"q{q}-d{d}", "qid": f"q{q}", "docid": f"d{d}", "query": f"query {q}", "passage": f"p{d}"}
            for q in (1, 2) for d in (1, 2, 3)]
    data.write_text("".join(json.dumps(row) + "\n" for row in rows))
    ids = tmp_path / "queries.txt"
    ids.write_text("q2\tpi=0.5\nq1-d3\nq2\n")  # a query as sample writes it for runs, a pair, a repeat
    task = build_task(data, "relevance", tmp_path / "labels.jsonl", scale="0-3", ids=ids)
    assert [item.id for item in task.items] == ["q2-d1", "q2-d2", "q2-d3", "q1-d3"]
    ids.write_text("q9\n")
    with pytest.raises(DataError, match=r"queries.txt:1: item \(or query\) 'q9' is not in the data"):
        build_task(data, "relevance", tmp_path / "labels.jsonl", scale="0-3", ids=ids)
