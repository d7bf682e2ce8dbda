"""The pairwise (RankNet) training loss and the group batches it needs: pure tensor algebra, no model."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from judgelab.train.model import pairwise_loss
from judgelab.train.trainer import group_batches


def test_pairwise_loss_counts_only_ordered_pairs_of_one_group():
    values = torch.tensor([2.0, 0.0, 5.0, -5.0], requires_grad=True)
    labels = np.array([3.0, 1.0, 1.0, 3.0])
    loss = pairwise_loss(values, labels, ["g", "g", "h", "h"])
    # pairs: (0 over 1) in g, gap +2; (3 over 2) in h, gap -10; cross-group pairs are ignored
    expected = (np.log1p(np.exp(-2.0)) + np.log1p(np.exp(10.0))) / 2
    assert float(loss) == pytest.approx(expected, rel=1e-6)
    loss.backward()
    assert values.grad[3] < 0 < values.grad[2]  # descent raises the better output of h, lowers the worse one


def test_pairwise_loss_is_zero_but_differentiable_without_pairs():
    values = torch.tensor([1.0, 2.0], requires_grad=True)
    loss = pairwise_loss(values, np.array([2.0, 2.0]), ["g", "g"])  # tied labels: no ordered pair
    assert float(loss) == 0.0
    loss.backward()
    assert values.grad is not None


def test_group_batches_keep_groups_whole_and_cover_every_item_once():
    order = [5, 0, 3, 1, 4, 2, 6]
    groups = ["b", "a", "b", "a", "c", "c", "b"]
    batches = group_batches(order, groups, size=3)
    assert sorted(i for batch in batches for i in batch) == sorted(order)
    assert batches == [[5, 3, 6], [0, 1, 4, 2]]  # b (3 items) closes a batch; a then c fill the next
    for batch in batches:
        in_batch = {groups[order.index(i)] for i in batch}
        assert all(sum(groups[order.index(i)] == g for i in batch) == groups.count(g) for g in in_batch)
