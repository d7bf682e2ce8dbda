"""What a judge kind gives the contract test (``tests/unit/test_contract.py``) to be checked.

Every judge kind defines ``contract_example(folder) -> ContractExample``: a small config, a few
items and the replies of the scripted model that stands in for the LLM. The contract test then
checks every kind the same way, as scikit-learn's ``check_estimator`` checks estimators: a saved
and reloaded config keeps its digest and its verdicts; one judgment per item, in input order
(shuffled, and with an item repeated under another id); a failing LLM call is that item's error
judgment, never a number; a kind that learns refuses to run unfitted with a ConfigError.

Example items write their quality into their own text ("... of quality 2."), and ``quality_in``
reads it back: a scripted reply can then give each item a verdict of its own, so a judge that
hands one item's verdict to another is caught.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from judgelab.data.item import Item
from judgelab.llm.backends.base import Capabilities
from judgelab.llm.types import Completion, Request

if TYPE_CHECKING:
    from judgelab.judges.base import JudgeConfig

#: The scripted model: ``reply(request, sample_index)`` -> the reply text (or a whole Completion).
Reply = Callable[[Request, int], "str | Completion"]


@dataclass(frozen=True)
class ContractExample:
    """A runnable example of one judge kind, small enough for a unit test (no model loading)."""

    #: Ready to run: fitted if the kind needs fitting (its files under the ``folder`` given).
    config: JudgeConfig
    #: At least three items with distinct ids, each with a text no other item has (the test fails
    #: the LLM calls that show it), judged by ``reply`` to at least two different verdicts.
    items: list[Item]
    #: What the scripted model answers; None for kinds that call no LLM.
    reply: Reply | None = None
    #: What the scripted backend can do (None: everything the test's scripted backend offers).
    capabilities: Capabilities | None = None
    #: For kinds that learn (``trainable``): this config before fitting, which must refuse to run.
    unfitted: JudgeConfig | None = None


def quality_in(text: str | None) -> int:
    """The last "quality N" written in ``text`` (1 when there is none)."""
    found = re.findall(r"quality (\d)", text or "")
    return int(found[-1]) if found else 1


def user_text(request: Request) -> str:
    return "\n".join(message.content for message in request.messages)


def rating_reply(request: Request, _: int) -> str:
    """A prompted judge's reply: the quality of the last item the prompt shows, as its rating."""
    rating = quality_in(user_text(request))
    if request.assistant_prefix.endswith("[["):  # rating-first strategies continue "Rating: [["
        return f"{rating}]]"
    return f"The text reads well enough.\nRating: [[{rating}]]"


def pointwise_items(aspect: str, qualities: tuple[int, ...] = (3, 1, 2, 2, 3, 1),
                    per_group: int = 3) -> list[Item]:
    """Summaries of two articles, each of a stated quality, with that quality as the human score."""
    return [Item(id=f"c{k}", dataset="summeval", group_id=f"g{k // per_group}", system_id=f"s{k % per_group}",
                 source=f"Article {k // per_group}: the council met on Monday and voted on the budget.",
                 output=f"Summary {k} of quality {q}.", scores={aspect: float(q)}, scale=(1, 5))
            for k, q in enumerate(qualities)]
