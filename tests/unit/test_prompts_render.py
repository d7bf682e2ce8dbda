"""Every strategy renders to a complete prompt for every family; auxiliary-stage prompts render."""

from __future__ import annotations

import random
import re

import pytest

from judgelab.data.item import Item
from judgelab.errors import ConfigError
from judgelab.judges.examples import InContextExample
from judgelab.prompts import (
    FAMILIES,
    POINTWISE_FAMILIES,
    RATING_PREFIX,
    AuxiliaryTexts,
    has_unrendered_markup,
    render_autocot_prompt,
    render_checklist_prompt,
    render_criteria_prompt,
    render_judge_prompt,
    render_pairwise_prompt,
    render_reference_prompt,
)
from judgelab.strategy import Strategy

CRITERIA = "Coherence: the summary should be well-structured and well-organized."
AUTOCOT = "1. Read the input.\n2. Read the text to judge.\n3. Assign a score."
REFERENCE = "A reference text written by the judge."
CHECKLIST = ("Does it keep the key facts?", "Is it easy to follow?")
TASK = "Write a product description from a list of features."


def make_item(family: str, n: int = 0) -> Item:
    if family == "relevance":
        return Item(id=f"r{n}", qid="q1", docid=f"d{n}", query="what is a kiwi", passage=f"Kiwi is a fruit {n}.",
                    label=n % 4, scores={"relevance": n % 4}, scale=(0, 3))
    return Item(id=f"{family}{n}", group_id="g", source=f"Source text number {n}.", context="A fact about it.",
                output=f"The judged output {n}.", scores={"coherence": 1 + n % 5}, scale=(1, 5))


def make_aux(family: str) -> AuxiliaryTexts:
    examples = tuple(InContextExample(item=make_item(family, n), rating=float(n % 5 + 1), human=n % 5 + 1)
                     for n in range(1, 11))
    return AuxiliaryTexts(criteria=CRITERIA, autocot=AUTOCOT, reference=REFERENCE, checklist=CHECKLIST,
                          examples=examples)


# Headers of the three components, to check their order.
TD_MARK, ER_MARK = "[Instruction]", "Here are some rules of the evaluation:"
EMPTY_SECTION = re.compile(r"^\[(?!The End)[^\]\n]+\]\n(?:\n|$)", re.MULTILINE)


def check_prompt(strategy: Strategy, family: str, rendered, item: Item) -> None:
    prompt = rendered.prompt
    assert not has_unrendered_markup(prompt)
    assert "None" not in prompt and "\n\n\n" not in prompt and prompt == prompt.strip()
    assert not EMPTY_SECTION.search(prompt), "a section header with nothing under it"
    # scale bounds and the exact output format
    assert f"on a scale of 1 to {strategy.scale} " in prompt
    assert f'"[[rating]]", for example: "Rating: [[{strategy.scale}]]"' in prompt
    # the factors each show up exactly when chosen
    assert (CRITERIA in prompt) == (strategy.criteria != "none")
    assert ("Evaluation Steps:\n" + AUTOCOT in prompt) == strategy.autocot
    assert (REFERENCE in prompt) == (strategy.reference == "self")
    assert ("1. Does it keep the key facts?" in prompt) == strategy.metrics
    assert ("take into account your own" in prompt) == (strategy.reference == "dialectic")
    shown = prompt.count("\nRating: [[")
    assert shown == strategy.examples
    assert (f"[Example {strategy.examples}]" in prompt) == (strategy.examples > 0)
    assert f"[Example {strategy.examples + 1}]" not in prompt
    # CoT wording and where the rating goes
    cot_phrases = {"prefix": "Begin your evaluation by providing a short explanation.",
                   "none": "without any explanation", "suffix": "And then provide your explanation."}
    assert cot_phrases[strategy.cot] in prompt
    assert rendered.assistant_prefix == (RATING_PREFIX if strategy.rating_first else "")
    assert rendered.pick == ("last" if strategy.cot == "prefix" else "first")
    # component order: TD, ER and IC (the judged text's first line marks IC's end) in strategy order
    judged = (item.passage if family == "relevance" else item.output)
    positions = {"TD": prompt.index(TD_MARK), "ER": prompt.index(ER_MARK), "IC": prompt.rindex(judged)}
    assert sorted(positions, key=positions.get) == list(strategy.components)
    where = "below" if positions["IC"] > positions["TD"] else "above"
    assert f"displayed {where} on its coherence" in prompt


def test_every_strategy_renders_for_summarisation():
    family, item = "summarisation", make_item("summarisation")
    aux = make_aux(family)
    count = 0
    for strategy in Strategy.space():
        check_prompt(strategy, family, render_judge_prompt(strategy, family, "coherence", item, aux), item)
        count += 1
    assert count == 12_960


@pytest.mark.parametrize("family", [f for f in POINTWISE_FAMILIES if f != "summarisation"])
def test_a_sample_of_strategies_renders_for_every_family(family):
    item, aux = make_item(family), make_aux(family)
    sample = random.Random(family).sample(list(Strategy.space()), 300)
    for strategy in [Strategy.mt_bench(), *Strategy.mt_bench().neighbours(), *sample]:
        rendered = render_judge_prompt(strategy, family, "coherence", item, aux, task=TASK)
        check_prompt(strategy, family, rendered, item)


def test_mt_bench_summarisation_prompt_matches_the_hpss_initiation_template():
    item = Item(id="1", source="ARTICLE", output="SUMMARY")
    rendered = render_judge_prompt(Strategy(), "summarisation", "coherence", item, AuxiliaryTexts(criteria="CRIT"))
    assert rendered.messages == ({"role": "user", "content": (
        "[Instruction]\n"
        "Please act as an impartial judge and evaluate the quality of the summary to the news article displayed "
        "below on its coherence. Begin your evaluation by providing a short explanation. After providing your "
        "explanation, you must rate the summary on a scale of 1 to 5 by strictly following this format: "
        "\"[[rating]]\", for example: \"Rating: [[5]]\".\n\n"
        "Here are some rules of the evaluation:\n"
        "1. Your evaluation should consider the coherence of the summary. CRIT\n"
        "2. Be as objective as possible.\n\n"
        "[Article]\nARTICLE\n\n"
        "[The Start of the Summary]\nSUMMARY\n[The End of the Summary]")},)
    assert rendered.assistant_prefix == "" and rendered.bounds == (1, 5)


def test_dialogue_shows_the_fact_only_when_there_is_one():
    with_fact = Item(id="1", source="A: hi \n B: hello", context="Cats purr.", output="Cats purr!")
    no_fact = with_fact.model_copy(update={"context": "_nofact"})
    aux = AuxiliaryTexts(criteria="c")
    shown = render_judge_prompt(Strategy(), "dialogue", "coherence", with_fact, aux).prompt
    hidden = render_judge_prompt(Strategy(), "dialogue", "coherence", no_fact, aux).prompt
    assert "[Corresponding Fact]\nCats purr." in shown and "interesting fact" in shown
    assert "Corresponding Fact" not in hidden and "_nofact" not in hidden and "interesting fact" not in hidden


def test_generic_family_carries_the_users_task_and_works_without_an_input():
    item = Item(id="1", output="Sleek, light, waterproof.")
    rendered = render_judge_prompt(Strategy(cot="none"), "generic", "fluency", item, AuxiliaryTexts(criteria="c"),
                                   task=TASK)
    assert TASK in rendered.prompt and "[Input]" not in rendered.prompt
    assert rendered.prompt.endswith("[The Start of the Output]\nSleek, light, waterproof.\n[The End of the Output]")
    assert rendered.assistant_prefix == "Rating: [["


def test_system_message_is_optional():
    item = make_item("story")
    rendered = render_judge_prompt(Strategy(), "story", "coherence", item, AuxiliaryTexts(criteria="c"),
                                   system="You are a helpful assistant.")
    assert [m["role"] for m in rendered.messages] == ["system", "user"]


@pytest.mark.parametrize("strategy, missing", [
    (Strategy(), "human-written criteria"),
    (Strategy(criteria="none", autocot=True), "auto-CoT"),
    (Strategy(criteria="none", reference="self"), "reference"),
    (Strategy(criteria="none", metrics=True), "checklist"),
    (Strategy(criteria="none", examples=3), "in-context examples"),
])
def test_missing_auxiliary_text_is_named(strategy, missing):
    with pytest.raises(ConfigError, match=missing):
        render_judge_prompt(strategy, "story", "coherence", make_item("story"), AuxiliaryTexts())


def test_missing_item_text_and_unknown_family_are_config_errors():
    with pytest.raises(ConfigError, match="'passage'"):
        render_judge_prompt(Strategy(criteria="none"), "relevance", "relevance",
                            Item(id="1", qid="q", docid="d", query="kiwi"))
    with pytest.raises(ConfigError, match="unknown prompt family"):
        render_judge_prompt(Strategy(), "poetry", "coherence", make_item("story"))
    with pytest.raises(ConfigError, match="render_pairwise_prompt"):
        render_judge_prompt(Strategy(), "pairwise", "coherence", make_item("story"))


# -- auxiliary stages -----------------------------------------------------------------------------


@pytest.mark.parametrize("family", POINTWISE_FAMILIES)
def test_auxiliary_stage_prompts_render(family):
    item = make_item(family)
    criteria = render_criteria_prompt(family, "coherence", 10, task=TASK)
    autocot = render_autocot_prompt(family, "coherence", 10, CRITERIA, task=TASK)
    reference = render_reference_prompt(family, item, task=TASK)
    checklist = render_checklist_prompt(family, "coherence", item, CRITERIA, task=TASK)
    for messages in (criteria, autocot, reference, checklist):
        assert messages[-1]["role"] == "user"
        text = messages[-1]["content"]
        assert text and not has_unrendered_markup(text) and "None" not in text and "\n\n\n" not in text
    assert "1 to 10" in criteria[-1]["content"] and criteria[-1]["content"].endswith("Evaluation Criteria:")
    assert CRITERIA in autocot[-1]["content"] and autocot[-1]["content"].endswith("Evaluation Steps:")
    assert "at most three" in checklist[-1]["content"] and CRITERIA in checklist[-1]["content"]
    source_text = item.query if family == "relevance" else item.source
    assert source_text in reference[-1]["content"] and source_text in checklist[-1]["content"]
    # the judged text is not shown to the reference writer or the checklist writer
    judged = item.passage if family == "relevance" else item.output
    assert judged not in reference[-1]["content"] and judged not in checklist[-1]["content"]


def test_autocot_without_criteria_and_generic_reference_without_anything_to_answer():
    text = render_autocot_prompt("story", "surprise", 5)[-1]["content"]
    assert "of the story.\n2. Be as objective" in text
    with pytest.raises(ConfigError, match="task description"):
        render_reference_prompt("generic", Item(id="1", output="x"))


def test_seed_reference_generation_wording():
    article = render_reference_prompt("summarisation", Item(id="1", source="TEXT", output="o"))
    assert article[-1]["content"] == "Please summarize the following text:\nTEXT\n\nSummary:"
    story = render_reference_prompt("story", Item(id="1", source="PROMPT", output="o"))
    assert story[-1]["content"] == "Please generate a story according to the given prompt:\nPROMPT\n\nStory:"


# -- pairwise -------------------------------------------------------------------------------------

PAIR = Item(id="p1", instruction="Name a fruit.", output_a="Apple.", output_b="A car.", label="a")


def test_pairwise_prompt_in_both_orders():
    straight = render_pairwise_prompt(PAIR)
    swapped = render_pairwise_prompt(PAIR, swap=True)
    assert straight.prompt.index("Apple.") < straight.prompt.index("A car.")
    assert swapped.prompt.index("A car.") < swapped.prompt.index("Apple.")
    assert swapped.swapped and not straight.swapped
    assert straight.messages[0]["role"] == "system"
    assert straight.prompt.endswith('Your response should be either "Output (a)" or "Output (b)":')


def test_pairwise_cot_checklist_reference_and_no_rules():
    rendered = render_pairwise_prompt(PAIR, cot="prefix", checklist=["Is it a fruit?"], reference="Banana.",
                                      rules=False, system=None)
    prompt = rendered.prompt
    assert [m["role"] for m in rendered.messages] == ["user"]
    assert '"Therefore, Output (a) is better."' in prompt and "rules of the evaluation" not in prompt
    assert "# Questions about Outputs:" in prompt and "1. Is it a fruit?" in prompt
    assert "# A reference output generated by a strong AI assistant:\nBanana." in prompt
    assert not has_unrendered_markup(prompt) and "\n\n\n" not in prompt


def test_pairwise_auxiliary_stages_follow_llmbar():
    reference = render_reference_prompt("pairwise", PAIR)
    assert reference == [{"role": "system", "content": "You are a helpful assistant that responds to the user in a "
                                                       "concise way."}, {"role": "user", "content": "Name a fruit."}]
    checklist = render_checklist_prompt("pairwise", "overall", PAIR)
    assert "# Instruction:\nName a fruit." in checklist[-1]["content"]
    with pytest.raises(ConfigError, match="no criteria generation stage"):
        render_criteria_prompt("pairwise", "overall", 10)


def test_every_family_has_a_template_folder():
    from judgelab.prompts.render import TEMPLATE_DIR

    for family in FAMILIES:
        assert (TEMPLATE_DIR / family / "family.j2").is_file()


@pytest.mark.parametrize("dataset, aspect", [("topical_chat", "coherence"), ("sfhot", "naturalness"),
                                             ("hanna", "empathy"), ("trec_dl2019", "relevance")])
def test_real_benchmark_items_render(dataset, aspect, benchmarks_dir):
    import json

    from judgelab.prompts import DATASET_FAMILIES
    from judgelab.prompts.criteria import load_human_criteria

    folder = benchmarks_dir
    with (folder / f"{dataset}.jsonl").open(encoding="utf-8") as handle:
        item = Item.model_validate(json.loads(handle.readline()))
    criteria = "Relevant passages answer the query." if dataset == "trec_dl2019" else load_human_criteria(
        dataset, aspect, 10, path=folder / "auxiliary_prompts.jsonl")
    strategy = Strategy(scale=10, cot="suffix", order="IC-TD-ER")
    rendered = render_judge_prompt(strategy, DATASET_FAMILIES[dataset], aspect, item, AuxiliaryTexts(criteria=criteria))
    assert criteria.strip() in rendered.prompt and not has_unrendered_markup(rendered.prompt)
    assert "\n\n\n" not in rendered.prompt and "_nofact" not in rendered.prompt
