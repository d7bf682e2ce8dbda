"""Every benchmark file in ../shared/benchmarks loads as-is, with the README's kinds and counts."""

from __future__ import annotations

import time
from collections import Counter

import numpy as np
import pytest

from judgelab.data import load_items, save_items, split_by_group
from judgelab.data.arena import load_arena

# file: (kind, rows, groups, aspects) from benchmarks/README.md
EXPECTED = {
    "topical_chat": ("pointwise", 252, 42, {"understandability", "naturalness", "coherence", "engagingness",
                                             "groundedness", "overall"}),
    "sfhot": ("pointwise", 614, 279, {"informativeness", "naturalness", "overall"}),
    "sfres": ("pointwise", 830, 406, {"informativeness", "naturalness", "overall"}),
    "hanna": ("pointwise", 737, 67, {"relevance", "coherence", "empathy", "surprise", "engagement",
                                      "complexity"}),
    "qags_cnndm": ("pointwise", 165, 165, {"consistency"}),
    "qags_xsum": ("pointwise", 167, 167, {"consistency"}),
    "llmbar": ("pairwise", 293, 292, set()),  # two comparisons share one instruction: one input (Item.group)
    "llmjudge_dev": ("relevance", 7263, 25, {"relevance"}),
    "trec_dl2019": ("relevance", 5353, 30, {"relevance"}),
}


@pytest.fixture(scope="module")
def datasets(benchmarks_dir):
    return {name: load_items(benchmarks_dir / f"{name}.jsonl") for name in EXPECTED}


def test_every_items_file_is_covered(benchmarks_dir):
    files = {p.stem for p in benchmarks_dir.glob("*.jsonl")} - {"auxiliary_prompts"}
    assert files == set(EXPECTED)


@pytest.mark.parametrize("name", list(EXPECTED))
def test_loads_with_readme_counts(datasets, name):
    kind, rows, groups, aspects = EXPECTED[name]
    ds = datasets[name]
    assert ds.name == name
    assert ds.kind == kind
    assert len(ds) == rows
    assert len(ds.groups()) == groups
    assert set(ds.aspects()) == aspects
    for aspect in aspects:
        scores = ds.human_scores(aspect)
        assert scores.shape == (rows,) and np.isfinite(scores).any()


def test_dataset_specific_facts(datasets):
    topical = datasets["topical_chat"]
    assert topical[0].aspect_scale("naturalness") == (1.0, 3.0)
    assert topical[0].aspect_scale("groundedness") == (0.0, 1.0)
    assert all(len(items) == 6 for items in topical.groups().values())
    assert Counter(i.subset for i in datasets["llmbar"]) == {
        "Natural": 70, "Adversarial/Neighbor": 94, "Adversarial/GPTInst": 64, "Adversarial/GPTOut": 33,
        "Adversarial/Manual": 32}
    assert {i.label for i in datasets["llmbar"]} == {"a", "b"}
    assert Counter(i.label for i in datasets["llmjudge_dev"]) == {0: 4538, 1: 1403, 2: 625, 3: 697}
    trec = datasets["trec_dl2019"]
    assert Counter(i.label for i in trec) == {0: 3192, 1: 988, 2: 822, 3: 351}
    assert all(i.passage for i in trec)
    assert sum(i.passage != i.passage.strip() for i in trec) == 8  # whitespace kept exactly
    assert all(i.system_id for i in datasets["hanna"]) and "annotator_scores" in datasets["hanna"][0].extra


def test_llmjudge_dev_loads_fast(benchmarks_dir):
    start = time.perf_counter()
    load_items(benchmarks_dir / "llmjudge_dev.jsonl")
    assert time.perf_counter() - start < 2.0  # ~0.2 s here; generous for slow CI machines


@pytest.mark.parametrize("name", ["topical_chat", "llmbar", "llmjudge_dev"])
@pytest.mark.parametrize("fmt", ["csv", "parquet", "jsonl.gz"])
def test_benchmarks_convert_losslessly(datasets, tmp_path, name, fmt):
    ds = datasets[name]
    back = load_items(save_items(ds, tmp_path / f"{name}.{fmt}"))
    assert back == ds


def test_benchmark_splits_keep_groups_apart(datasets):
    for name in ("topical_chat", "hanna", "trec_dl2019"):
        splits = split_by_group(datasets[name], seed=0)
        seen: set[str] = set()
        for part in splits.values():
            groups = set(part.groups())
            assert not groups & seen
            seen |= groups


def test_chatbot_arena_loads_with_readme_counts(benchmarks_dir):
    comparisons, judgments = load_arena(benchmarks_dir / "chatbot_arena")
    assert comparisons.kind == "pairwise" and len(comparisons) == 18833
    assert all(item.output_a is None and item.system_a != item.system_b for item in comparisons)
    assert len({s for item in comparisons for s in (item.system_a, item.system_b)}) == 20
    assert {item.label for item in comparisons} == {"a", "b", "tie"}
    bothbad = sum(item.extra.get("label_as_published") == "tie (bothbad)" for item in comparisons)
    assert 0 < bothbad < sum(item.label == "tie" for item in comparisons)
    assert len(judgments) == 56499
    assert Counter(j.judge for j in judgments) == {
        "gpt-4-0125-preview": 18833, "claude-3-opus-20240229": 18833, "gpt-3.5-turbo": 18833}
    assert {j.label for j in judgments} <= {"a", "b", "tie"}
    # the README's figure: GPT-3.5 picks the first-shown answer in 86% of comparisons, humans in 35%
    gpt35 = [j.label for j in judgments if j.judge == "gpt-3.5-turbo"]
    assert round(gpt35.count("a") / len(gpt35), 2) == 0.86
    assert round(sum(item.label == "a" for item in comparisons) / len(comparisons), 2) == 0.35
    only_gpt4 = load_arena(benchmarks_dir / "chatbot_arena", judge="gpt-4")[1]
    assert {j.judge for j in only_gpt4} == {"gpt-4-0125-preview"}
