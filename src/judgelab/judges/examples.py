"""In-context examples (seed Appendix D): labelled items shown with their human rating.

Examples are drawn from labelled (validation) items, stratified by human rating so that low,
middle and high ratings are all shown, and rescaled linearly from the item's aspect scale to
the strategy's 1..N scale. The item being judged is never its own example.

Selection is made once per (pool, aspect, k, seed) and is the same for every judged item: the
paper removes the judged item from a fixed example set; we instead replace it by the next
item of the same rating stratum, so every prompt still shows k examples. Keeping the set fixed
also keeps the prompt prefix identical across items, which the embedded backend reuses.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from judgelab.data.item import Item
from judgelab.errors import ConfigError


@dataclass(frozen=True)
class InContextExample:
    """One labelled example: the item and its human rating on the strategy's scale."""

    item: Item
    rating: float
    human: float

    @property
    def rating_text(self) -> str:
        return f"{self.rating:g}"


def rescale(value: float, source: tuple[float, float], target: tuple[float, float]) -> float:
    """Linear map of ``value`` from the ``source`` range onto the ``target`` range."""
    (s_low, s_high), (t_low, t_high) = source, target
    if s_high <= s_low:
        raise ValueError(f"source scale {source} is empty")
    return t_low + (value - s_low) * (t_high - t_low) / (s_high - s_low)


class ExampleSelector:
    """Stratified, deterministic example selection from a labelled pool for one aspect.

    ``source_scale`` overrides ``Item.aspect_scale(aspect)`` for items that carry no scale.
    ``round_ratings`` rounds rescaled ratings to whole numbers, the form the judge answers in.
    """

    def __init__(
        self,
        pool: Iterable[Item],
        aspect: str,
        *,
        seed: int = 0,
        source_scale: tuple[float, float] | None = None,
        round_ratings: bool = True,
    ):
        self.aspect = aspect
        self.seed = seed
        self.round_ratings = round_ratings
        self._scale_override = source_scale
        labelled = [item for item in pool if item.human_score(aspect) is not None]
        self._strata = self._stratify(labelled)

    @property
    def size(self) -> int:
        return sum(len(stratum) for stratum in self._strata)

    def select(
        self, k: int, scale: int | tuple[float, float], *, exclude: Item | str | Iterable[str] = ()
    ) -> list[InContextExample]:
        """``k`` examples rated on ``scale`` (N meaning 1..N), none of them excluded.

        ``exclude`` is the judged item (its id and any item with the very same texts, as the
        duplicated rows of SF-HOT/SF-RES are, are left out) or ids to leave out.
        """
        if k <= 0:
            return []
        if not isinstance(exclude, Item):
            exclude = frozenset({exclude} if isinstance(exclude, str) else exclude)
        strata = [[item for item in stratum if not _excluded(item, exclude)] for stratum in self._strata]
        strata = [stratum for stratum in strata if stratum]
        available = sum(len(stratum) for stratum in strata)
        if available < k:
            raise ConfigError(
                f"{k} in-context examples asked for {self.aspect!r}, but only {available} labelled items are available"
            )
        chosen = _spread(strata, k)
        random.Random(f"{self.seed}:order").shuffle(chosen)
        target = (1.0, float(scale)) if isinstance(scale, int) else scale
        return [self._example(item, target) for item in chosen]

    def _stratify(self, items: Sequence[Item]) -> list[list[Item]]:
        """One stratum per distinct human rating, low to high, each in a seeded random order."""
        by_rating: dict[float, list[Item]] = {}
        for item in sorted(items, key=lambda it: it.id):
            by_rating.setdefault(round(self._human(item), 6), []).append(item)
        strata = []
        for rating in sorted(by_rating):
            stratum = by_rating[rating]
            random.Random(f"{self.seed}:{rating}").shuffle(stratum)
            strata.append(stratum)
        return strata

    def _human(self, item: Item) -> float:
        score = item.human_score(self.aspect)
        assert score is not None  # filtered in __init__
        return score

    def _example(self, item: Item, target: tuple[float, float]) -> InContextExample:
        source = self._scale_override or item.aspect_scale(self.aspect)
        if source is None:
            raise ConfigError(
                f"item {item.id!r} has no scale for {self.aspect!r}; pass source_scale to rescale its rating"
            )
        human = self._human(item)
        rating = rescale(human, source, target)
        if self.round_ratings:
            rating = float(math.floor(rating + 0.5))  # half up: round() would send 2.5 to 2
        return InContextExample(item=item, rating=rating, human=human)


def _excluded(item: Item, exclude: Item | frozenset[str]) -> bool:
    return same_item(item, exclude) if isinstance(exclude, Item) else item.id in exclude


def same_item(a: Item, b: Item) -> bool:
    """The judged item itself, or a duplicate row with the very same texts (SF-HOT/SF-RES have them)."""
    return a.id == b.id or _texts(a) == _texts(b)


def _texts(item: Item) -> tuple[str | None, ...]:
    return (item.prompt, item.context, item.output, item.output_a, item.output_b, item.passage)


def _spread(strata: list[list[Item]], k: int) -> list[Item]:
    """k items spread evenly over the rating strata (lowest to highest).

    With at least k strata, k of them are picked at evenly spaced ranks (always the lowest and
    the highest) and one item taken from each; with fewer, the strata are visited round-robin.
    """
    if len(strata) >= k:
        if k == 1:
            ranks = [len(strata) // 2]
        else:
            ranks = sorted({round(i * (len(strata) - 1) / (k - 1)) for i in range(k)})
        return [strata[rank][0] for rank in ranks]
    chosen: list[Item] = []
    depth = 0
    while len(chosen) < k:
        for stratum in strata:
            if depth < len(stratum) and len(chosen) < k:
                chosen.append(stratum[depth])
        depth += 1
    return chosen


def select_examples(
    pool: Iterable[Item],
    aspect: str,
    k: int,
    scale: int | tuple[float, float],
    *,
    exclude: Item | str | Iterable[str] = (),
    seed: int = 0,
    source_scale: tuple[float, float] | None = None,
    round_ratings: bool = True,
) -> list[InContextExample]:
    """One-shot form of ``ExampleSelector(pool, aspect, seed=...).select(k, scale, exclude=...)``."""
    selector = ExampleSelector(pool, aspect, seed=seed, source_scale=source_scale, round_ratings=round_ratings)
    return selector.select(k, scale, exclude=exclude)
