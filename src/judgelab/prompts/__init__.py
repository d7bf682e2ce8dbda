"""Prompt templates (package data, one folder per task family) and the functions that fill them.

    from judgelab.prompts import render_judge_prompt, AuxiliaryTexts
    rendered = render_judge_prompt(strategy, "dialogue", "coherence", item, AuxiliaryTexts(criteria=...))
    rendered.messages, rendered.assistant_prefix
"""

from judgelab.prompts.criteria import criteria_text, find_auxiliary, load_human_criteria
from judgelab.prompts.render import (
    DATASET_FAMILIES,
    FAMILIES,
    POINTWISE_FAMILIES,
    RATING_PREFIX,
    AuxiliaryTexts,
    RenderedPairwise,
    RenderedPrompt,
    family_for,
    format_checklist,
    has_unrendered_markup,
    render_autocot_prompt,
    render_checklist_prompt,
    render_criteria_prompt,
    render_judge_prompt,
    render_likelihood_prompt,
    render_pairwise_prompt,
    render_reference_prompt,
)

__all__ = [
    "DATASET_FAMILIES",
    "FAMILIES",
    "POINTWISE_FAMILIES",
    "RATING_PREFIX",
    "AuxiliaryTexts",
    "RenderedPairwise",
    "RenderedPrompt",
    "criteria_text",
    "family_for",
    "find_auxiliary",
    "format_checklist",
    "has_unrendered_markup",
    "load_human_criteria",
    "render_autocot_prompt",
    "render_checklist_prompt",
    "render_criteria_prompt",
    "render_judge_prompt",
    "render_likelihood_prompt",
    "render_pairwise_prompt",
    "render_reference_prompt",
]
