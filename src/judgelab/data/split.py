"""Group-aware splits: every item of a group (the outputs for one source, the passages for one
query) lands in the same split, so no split sees another split's sources.

Sizes are measured in items, not groups. scikit-learn's ``GroupShuffleSplit`` sizes splits in
groups and ``GroupKFold`` balances items only without a seed (with ``shuffle=True`` it balances
groups instead), so both use one small assigner: shuffle the groups, give each to the split
furthest below its target, keep the best of a few shuffles. Deterministic for a seed, and
independent of the order of items in the file (groups are sorted by name before shuffling).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from judgelab.data.dataset import Dataset
from judgelab.data.item import Item

_TRIALS = 32  # shuffles tried per split; the closest to the target sizes wins


def split_by_group(dataset: Dataset, fractions: Sequence[float] | Mapping[str, float] = (0.6, 0.2, 0.2),
                   *, seed: int = 0) -> dict[str, Dataset]:
    """Split into named datasets whose sizes in items are as close as possible to ``fractions``.

    ``fractions`` is a mapping ``{"train": 0.7, "test": 0.3}`` or a sequence: 2 values name the
    splits train/test, 3 values train/dev/test. Fractions must sum to 1; a 0 gives an empty split.
    Items keep their dataset order within each split.
    """
    named = _named(fractions)
    group_items = dataset.groups()
    names = sorted(group_items)
    sizes = [len(group_items[g]) for g in names]
    assignment = _assign(sizes, list(named.values()), seed)
    result = {}
    for k, split in enumerate(named):
        chosen = {names[i] for i, a in enumerate(assignment) if a == k}
        part = dataset.filter(_in_groups(chosen))
        result[split] = part.renamed(f"{dataset.name}-{split}" if dataset.name else split)
    return result


def kfold_by_group(dataset: Dataset, k: int = 5, *, seed: int = 0) -> list[tuple[Dataset, Dataset]]:
    """``k`` (train, test) pairs for cross-validation: each group is in exactly one test fold,
    and test folds are balanced in items."""
    if not isinstance(k, int) or k < 2:
        raise ValueError(f"k must be an integer >= 2, got {k!r}")
    group_items = dataset.groups()
    names = sorted(group_items)
    assignment = _assign([len(group_items[g]) for g in names], [1.0 / k] * k, seed)
    folds = []
    for fold in range(k):
        test = {names[i] for i, a in enumerate(assignment) if a == fold}
        folds.append((dataset.filter(_outside_groups(test)), dataset.filter(_in_groups(test))))
    return folds


def _in_groups(groups: set[str]) -> Callable[[Item], bool]:
    return lambda item: item.group in groups


def _outside_groups(groups: set[str]) -> Callable[[Item], bool]:
    return lambda item: item.group not in groups


def _named(fractions: Sequence[float] | Mapping[str, float]) -> dict[str, float]:
    if isinstance(fractions, Mapping):
        named = {str(name): float(f) for name, f in fractions.items()}
    else:
        values = [float(f) for f in fractions]
        labels = {2: ("train", "test"), 3: ("train", "dev", "test")}.get(len(values))
        if labels is None:
            raise ValueError(f"give 2 or 3 fractions (train/test, train/dev/test) or a dict of named "
                             f"fractions, not {len(values)}")
        named = dict(zip(labels, values, strict=True))
    if not named or any(not math.isfinite(f) or f < 0 for f in named.values()):
        raise ValueError(f"fractions must be finite and >= 0, got {named}")
    if not math.isclose(sum(named.values()), 1.0, abs_tol=1e-6):
        raise ValueError(f"fractions must sum to 1, got {sum(named.values()):g} ({named})")
    return named


def _assign(sizes: list[int], fractions: list[float], seed: int) -> list[int]:
    """Split index per group: greedy fill over shuffled groups, the best of ``_TRIALS`` shuffles."""
    wanted = sum(1 for f in fractions if f > 0)
    if len(sizes) < wanted:
        raise ValueError(f"{wanted} non-empty splits need at least {wanted} groups; there are {len(sizes)}")
    total = sum(sizes)
    targets = [f * total for f in fractions]
    open_splits = [k for k, f in enumerate(fractions) if f > 0]
    rng = np.random.default_rng(seed)
    best: list[int] = []
    best_cost = math.inf
    for _ in range(_TRIALS):
        filled = [0] * len(fractions)
        assignment = [0] * len(sizes)
        empty = set(open_splits)
        for position, g in enumerate(rng.permutation(len(sizes)).tolist()):
            # the last groups go to splits still empty, so every non-zero fraction gets a group
            candidates = empty if len(empty) >= len(sizes) - position else open_splits
            k = max(sorted(candidates), key=lambda s: targets[s] - filled[s])
            assignment[g] = k
            filled[k] += sizes[g]
            empty.discard(k)
        cost = sum(abs(f - t) for f, t in zip(filled, targets, strict=True))
        if cost < best_cost:
            best, best_cost = assignment, cost
    return best
