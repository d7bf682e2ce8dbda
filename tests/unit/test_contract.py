"""One contract for every judge kind (``judge_kinds()``) and every optimiser (``METHODS``), in the
spirit of scikit-learn's ``check_estimator``: a new kind or optimiser is checked by adding nothing
but itself. Each judge kind gives its own small example (``JudgeConfig.contract_example``, see
judgelab/judges/contract.py); each optimiser searches from the prompted judge's example, or from
what its own ``Optimizer.contract_example`` says. A kind or optimiser without an example fails
here, saying what to add.

Judges run against a scripted model (tests/doubles.py); every kind also runs end to end with
real models in tests/integration/.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from judgelab.commands.judge import judge_config_from_options
from judgelab.data.item import Item
from judgelab.data.judgment import Judgment
from judgelab.errors import ConfigError, RequestError
from judgelab.judges.base import JudgeConfig, judge_class, judge_kinds, load_judge
from judgelab.judges.contract import ContractExample
from judgelab.llm import Client, CompletionCache, Request
from judgelab.llm.backends.base import Capabilities
from judgelab.optimize.base import Evaluation, JudgeEvaluator, Optimizer, load_trajectory, optimize
from judgelab.optimize.methods import METHODS, make_optimizer
from tests.doubles import ScriptedBackend, scripted_client

#: Checks a kind cannot take, and why: the only place a kind is let off. (Kinds that call no LLM
#: skip the failing-call check by their ``uses_llm``, below.)
EXCLUDED: dict[tuple[str, str], str] = {
    ("trained", "judging"): "running a trained judge needs fine-tuned cross-encoder weights loaded with torch (and "
                            "training even a small one takes minutes); its run is checked end to end in "
                            "tests/integration/test_trained_judge.py. Here: its save/reload/digest and its refusal to "
                            "run unfitted.",
    ("similarity", "independent_verdicts"): "the similarity judge rates an output by its similarity to the other "
                                            "outputs of its group (UCLWI), so a twin added to the group moves its "
                                            "peers' verdicts; the twin and its original still get one verdict.",
}
PROPERTIES = ("judging", "failing_call", "independent_verdicts")
assert {prop for _, prop in EXCLUDED} <= set(PROPERTIES), "EXCLUDED names a property the contract does not check"


def excluded(kind: str, prop: str) -> None:
    """Skip (with the reason, shown by ``pytest -rs``) a check listed in EXCLUDED."""
    if (kind, prop) in EXCLUDED:
        pytest.skip(f"{kind} is not checked for {prop}: {EXCLUDED[kind, prop]}")


# -- building each kind's example -------------------------------------------------------------------


def never_called(request: Request, _: int) -> str:
    raise AssertionError(f"a judge that calls no LLM made a call: {request.messages[-1].content[:80]!r}")


class Kind:
    """One judge kind's example and a way to run it against a fresh scripted model."""

    def __init__(self, kind: str, folder: Path):
        self.kind = kind
        self.cls = judge_class(kind)
        try:
            self.example: ContractExample = self.cls.contract_example(folder)
        except NotImplementedError as exc:
            pytest.fail(str(exc))
        example = self.example
        assert isinstance(example.config, self.cls), f"{kind}: contract_example's config is not a {self.cls.__name__}"
        assert len(example.items) >= 3, f"{kind}: contract_example needs at least three items"
        assert len({item.id for item in example.items}) == len(example.items), f"{kind}: item ids must differ"
        if example.config.uses_llm:
            assert example.reply is not None, f"{kind} calls an LLM: contract_example must give the scripted reply"
        self.backends: list[ScriptedBackend] = []
        self.clients: list[Client] = []

    def client(self, reply=None) -> Client:
        reply = reply or self.example.reply or never_called
        capabilities = self.example.capabilities or Capabilities(
            logprobs=True, max_top_logprobs=20, assistant_prefix=True, json_schema=True)
        backend = ScriptedBackend(reply, capabilities=capabilities)
        self.backends.append(backend)
        self.clients.append(scripted_client(backend))
        return self.clients[-1]

    def run(self, items: Sequence[Item], config: JudgeConfig | None = None, reply=None,
            on_judgment=None) -> list[Judgment]:
        return (config or self.example.config).run(list(items), self.client(reply), on_judgment=on_judgment)

    def close(self) -> None:
        for client in self.clients:
            client.close()


@pytest.fixture(params=judge_kinds())
def kind(request, tmp_path, monkeypatch) -> Kind:
    monkeypatch.setenv("JUDGELAB_HOME", str(tmp_path / "home"))  # embedding caches, default folders
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    made = Kind(request.param, tmp_path / "example")
    yield made
    made.close()


def verdict(judgment: Judgment) -> tuple[Any, ...]:
    return judgment.status, judgment.score, judgment.label


def verdicts_by_id(judgments: Sequence[Judgment]) -> dict[str, tuple[Any, ...]]:
    return {j.item_id: verdict(j) for j in judgments}


def shuffled(items: list[Item]) -> list[Item]:
    """The items in an order that is neither theirs, nor reversed, nor sorted by id."""
    rng = random.Random(0)
    orders = {tuple(i.id for i in items), tuple(i.id for i in reversed(items)), tuple(sorted(i.id for i in items))}
    while True:
        mixed = rng.sample(items, len(items))
        if tuple(i.id for i in mixed) not in orders:
            return mixed


def test_a_kind_or_optimiser_without_an_example_is_told_what_to_add():
    class Unlisted(JudgeConfig):  # no registry_name: never registered, so judge_kinds() stays as it is
        kind: str = "unlisted"

    class Idle(Optimizer):
        method = "idle"

        def run(self, search) -> None:
            return None

    with pytest.raises(NotImplementedError, match=r"define the classmethod Unlisted\.contract_example\(folder\)"):
        Unlisted.contract_example(Path("."))
    with pytest.raises(NotImplementedError, match=r"define the classmethod Idle\.contract_example\(\)"):
        Idle.contract_example()


# -- judges: a config survives its file -------------------------------------------------------------


def reloaded(config: JudgeConfig, path: Path) -> list[JudgeConfig]:
    """The config back from ``path`` as the library and the commands read it (absolute and relative)."""
    config.save(path)
    return [load_judge(path), load_judge(Path("saved") / path.name),
            judge_config_from_options(Path("saved") / path.name, None, None)]


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_a_config_survives_save_and_reload_with_its_digest(kind, suffix, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the relative reads are relative to here
    # A folder of its own, so files the config refers to are reached through "../".
    path = tmp_path / "saved" / f"judge{suffix}"
    configs = [kind.example.config] + ([kind.example.unfitted] if kind.example.unfitted is not None else [])
    for config in configs:
        for loaded in reloaded(config, path):
            assert type(loaded) is type(config)
            assert loaded.digest() == config.digest(), f"{kind.kind}: the digest changed through {suffix}"
            assert loaded.model_dump(mode="json") == config.model_dump(mode="json")
    if (kind.kind, "judging") not in EXCLUDED:  # the reloaded judge judges as the original did
        items = kind.example.items
        expected = verdicts_by_id(kind.run(items))
        for loaded in reloaded(kind.example.config, path):
            assert verdicts_by_id(kind.run(items, loaded)) == expected


# -- judges: one judgment per item, in input order ----------------------------------------------------


def test_one_judgment_per_item_in_input_order(kind):
    excluded(kind.kind, "judging")
    items = kind.example.items
    emitted: list[Judgment] = []
    judgments = kind.run(items, on_judgment=emitted.append)
    assert [j.item_id for j in judgments] == [item.id for item in items]
    assert all(j.ok for j in judgments), f"{kind.kind}: the example's reply should judge every item: " \
        f"{[j.reason for j in judgments if not j.ok]}"
    assert len({verdict(j) for j in judgments}) >= 2, \
        f"{kind.kind}: the example's items should get different verdicts, or a mixed-up order goes unseen"
    assert sorted(emitted, key=lambda j: j.item_id) == sorted(judgments, key=lambda j: j.item_id), \
        "on_judgment is called once with each judgment returned"
    expected = verdicts_by_id(judgments)

    mixed = shuffled(items)
    again = kind.run(mixed)
    assert [j.item_id for j in again] == [item.id for item in mixed]
    assert verdicts_by_id(again) == expected

    # Another item with the very same texts: its own judgment, under its own id, with the same verdict.
    twin = items[0].model_copy(update={"id": f"{items[0].id}-twin"})
    others = [item for item in mixed if item.id != items[0].id]
    with_twin = [items[0], others[0], twin, *others[1:]]
    judged = kind.run(with_twin)
    assert [j.item_id for j in judged] == [item.id for item in with_twin]
    assert verdict(judged[2]) == verdict(judged[0])
    if (kind.kind, "independent_verdicts") not in EXCLUDED:  # and one item's verdict is not moved by another
        assert verdict(judged[0]) == expected[items[0].id]


# -- judges: a failing call is an error judgment, never a number ----------------------------------


def own_texts(target: Item, others: Sequence[Item]) -> list[str]:
    """The texts of ``target`` that no other item has (the calls that show one are that item's calls)."""
    theirs = {value for item in others for value in item.model_dump().values() if isinstance(value, str)}
    return [value for name, value in target.model_dump().items()
            if isinstance(value, str) and name != "id" and value not in theirs and len(value) > 3]


def test_a_failing_call_becomes_that_items_error_judgment(kind):
    if not kind.example.config.uses_llm:
        pytest.skip(f"{kind.kind} calls no LLM: no call of its can fail")
    excluded(kind.kind, "failing_call")
    items = kind.example.items
    expected = verdicts_by_id(kind.run(items))
    target = items[len(items) // 2]
    texts = own_texts(target, [item for item in items if item is not target])
    assert texts, f"{kind.kind}: each example item needs a text of its own"

    def failing(request: Request, sample_index: int):
        shown = request.assistant_prefix + "".join(message.content for message in request.messages)
        if any(text in shown for text in texts):
            raise RequestError("prompt has 5000 tokens; the context window is 4096")
        return kind.example.reply(request, sample_index)

    judgments = kind.run(items, reply=failing)
    assert [j.item_id for j in judgments] == [item.id for item in items]
    failed = judgments[items.index(target)]
    assert failed.status == "error" and failed.reason and "context window" in failed.reason
    assert failed.score is None and failed.label is None, f"{kind.kind} gave a failed call a verdict"
    assert {j.item_id: verdict(j) for j in judgments if j.item_id != target.id} == \
        {item_id: v for item_id, v in expected.items() if item_id != target.id}, "the other items are judged as before"


# -- judges: a kind that learns refuses to run before it has -----------------------------------------


def test_an_unfitted_judge_refuses_to_run_with_a_config_error(kind):
    unfitted = kind.example.unfitted
    if not kind.cls.trainable:
        assert unfitted is None or unfitted.fitted
        pytest.skip(f"{kind.kind} learns nothing (not trainable)")
    assert unfitted is not None, (f"{kind.kind} is trainable: its contract_example must give `unfitted`, the config "
                                  "before fitting")
    assert not unfitted.fitted and kind.example.config.fitted
    with pytest.raises(ConfigError, match=r"fit|train") as raised:
        kind.run(kind.example.items, unfitted)
    assert str(raised.value)
    assert kind.backends[-1].calls == 0, "nothing is paid for before the refusal"


# -- optimisers -------------------------------------------------------------------------------------


class CountingEvaluator:
    """The real objective (the judge run through the scripted client), counting what it evaluates."""

    def __init__(self, inner: JudgeEvaluator):
        self.inner, self.objective, self.evaluated = inner, inner.objective, []

    def evaluate(self, config: JudgeConfig, items=None) -> Evaluation:
        self.evaluated.append(config.digest())
        return self.inner.evaluate(config, items)

    def __getattr__(self, name: str) -> Any:  # items, examples_pool, min_coverage: the real evaluator's
        return getattr(self.inner, name)


class ExampleSearch:
    """One optimiser's example search: the base judge, its dev items, a scripted model and a cache."""

    def __init__(self, method: str, folder: Path):
        self.method = method
        cls = METHODS[method][0]
        try:
            self.example = cls.contract_example()
        except NotImplementedError as exc:
            pytest.fail(str(exc))
        base_kind = judge_class(self.example.base.kind if self.example.base is not None else "prompted")
        judge = base_kind.contract_example(folder / "judge")
        self.base = self.example.base or judge.config
        self.items = judge.items
        self.judge_reply = judge.reply

    def reply(self, request: Request, sample_index: int):
        if self.example.proposal is not None:
            proposed = self.example.proposal(request, sample_index)
            if proposed is not None:
                return proposed
        if len(request.messages[-1].content) % 3 == 0:  # some prompts mislead the judge: configs then differ
            return self.judge_reply(request.model_copy(update={"messages": ()}), sample_index)
        return self.judge_reply(request, sample_index)

    def run(self, budget: int, out: Path, cache: Path) -> tuple[Any, CountingEvaluator, ScriptedBackend]:
        backend = ScriptedBackend(self.reply)
        with scripted_client(backend, cache=CompletionCache(cache)) as client:
            evaluator = CountingEvaluator(JudgeEvaluator(self.items, client, n_resamples=20))
            optimizer = make_optimizer(self.method, client, seed=3, **self.example.options)
            result = optimize(optimizer, self.base, evaluator, budget, out)
        return result, evaluator, backend


def comparable(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Trajectory records without what differs between two runs of one search (clock times)."""
    return [{k: v for k, v in r.items() if k not in ("time", "wall_s")} for r in records]


@pytest.mark.parametrize("method", list(METHODS))
def test_an_optimiser_keeps_its_budget_and_resumes_from_its_trajectory(method, tmp_path, monkeypatch):
    monkeypatch.setenv("JUDGELAB_HOME", str(tmp_path / "home"))
    search = ExampleSearch(method, tmp_path)
    short, full = 3, 6

    whole, whole_evaluator, whole_backend = search.run(full, tmp_path / "whole", tmp_path / "whole.sqlite")
    assert len(whole_evaluator.evaluated) == whole.evaluations == len(whole.trajectory) <= full
    assert whole.evaluations >= short + 1, f"{method}: the example search should spend more than {short} evaluations"

    first, first_evaluator, first_backend = search.run(short, tmp_path / "resumed", tmp_path / "resumed.sqlite")
    assert len(first_evaluator.evaluated) == first.evaluations == short
    resumed, resumed_evaluator, resumed_backend = search.run(full, tmp_path / "resumed", tmp_path / "resumed.sqlite")
    # Finished steps are read from the trajectory (and proposals from the cache), never redone.
    assert len(resumed_evaluator.evaluated) == resumed.evaluations - short
    assert not set(resumed_evaluator.evaluated) & set(first_evaluator.evaluated)
    assert first_backend.calls + resumed_backend.calls == whole_backend.calls
    # The interrupted search ends where the uninterrupted one does.
    assert comparable(resumed.records) == comparable(whole.records)
    assert comparable(load_trajectory(tmp_path / "resumed")) == comparable(load_trajectory(tmp_path / "whole"))
    assert resumed.best == whole.best and resumed.status == whole.status
