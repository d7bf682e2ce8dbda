"""Audit a judge's biases (docs/audit.md).

* :func:`audit` measures them from verdicts at hand (one or both orders, human labels, texts,
  systems), each with a confidence interval: the statistics are in :mod:`judgelab.metrics.bias`;
* :func:`run_probes` perturbs items (swap the order, pad an output with content-free text,
  reformat it) and runs any pairwise judge on the originals and the perturbed copies.

This package sits above ``judges/`` (the probes run a judge) and below ``commands/``.
"""

from judgelab.audit.inputs import Pair, Verdicts, read_comparisons, read_human_labels, read_verdicts
from judgelab.audit.table import AuditReport, Row, audit

__all__ = ["AuditReport", "Pair", "Row", "Verdicts", "audit", "read_comparisons", "read_human_labels",
           "read_verdicts"]
