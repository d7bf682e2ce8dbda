"""Certifying a judge before it gates: how often judges of known TPR and TNR are certified.

Simulated judges (each label of a class judged right with probability TPR for the positive class, TNR for
the negative one) are carded on n labels per class, 1,000 draws per cell, and certified by the card's rule
(``judgelab.metrics.card.certify``: exact one-sided 95% lower bounds of TPR and TNR both at least 0.80). A
judge below a floor should be certified in at most 5% of draws; one well above it should be certified once
the labels suffice. No model runs: this is the rule's own error rate. Then the card of each published judge
with classes in ``../shared/benchmarks/reference/`` (LLMBar's evaluators: verdicts a/b; TREMA's judges on
LLMJudge dev: relevance grades 0-3), and whether it is certified at recall >= 0.8 for every class.

    .venv/bin/python -m bench.bench_card           # written to docs/benchmarks.md
    .venv/bin/python -m bench.bench_card --quick   # 200 draws, printed
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import numpy as np

from bench.common import command_line, describe_machine, log, table_head, table_row, write_doc_section
from judgelab.metrics.card import agreement, certify, labels_to_certify

FLOORS = {"tpr": 0.8, "tnr": 0.8}
JUDGES = ((0.70, 0.95), (0.75, 0.95), (0.78, 0.95), (0.80, 0.95), (0.82, 0.95), (0.85, 0.95), (0.90, 0.95),
          (0.95, 0.95), (0.85, 0.78))
PER_CLASS = (30, 100, 300, 1000)


def certified_share(tpr: float, tnr: float, per_class: int, draws: int, rng: np.random.Generator) -> float:
    human = np.repeat([0, 1], per_class)
    right_rate = np.where(human == 1, tpr, tnr)
    certified = 0
    for _ in range(draws):
        right = rng.random(len(human)) < right_rate
        judge = np.where(right, human, 1 - human)
        certified += certify(agreement(human, judge), FLOORS).certified
    return certified / draws


SHARED = Path(os.environ.get("JUDGELAB_SHARED", Path(__file__).resolve().parents[2] / "shared")) / "benchmarks"
PUBLISHED = (("llmbar.jsonl", "llmbar_evaluator_results.jsonl", "prediction.swap_false"),
             ("llmjudge_dev.jsonl", "trema_outputs.jsonl", "prediction"))


def _published(path: Path, field: str) -> list:
    """The judges' single verdicts (a label a/b or a grade) at ``field``; TREMA's per-criterion records, whose
    verdict is a dict of criteria, are left out (their final grade is another judge's row)."""
    import json

    from judgelab.data import Judgment

    out = []
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            row = json.loads(line)
            value = row
            for part in field.split("."):
                value = value.get(part) if isinstance(value, dict) else None
            if isinstance(value, str):
                out.append(Judgment(item_id=row["item_id"], judge=row["judge"], label=value))
            elif isinstance(value, (int, float)) and not isinstance(value, bool):
                out.append(Judgment(item_id=row["item_id"], judge=row["judge"], score=float(value)))
    return out


def published_cards() -> list[list[str]]:
    """One row per published judge: its classes' recalls with their exact lower bounds, kappa, certified."""
    from judgelab.data import load_items
    from judgelab.report.card import build_card

    folder = SHARED
    rows = []
    for data, judged, field in PUBLISHED:
        items = load_items(folder / data)
        judgments = _published(folder / "reference" / judged, field)
        ids = {item.id for item in items}
        for judge in sorted({j.judge for j in judgments if j.judge and j.item_id in ids}):
            card = build_card(items, judgments, judge=judge)
            found = card["agreement"]
            classes = found["classes"] or []
            recalls = ", ".join(f"{c['label']}: {c['recall']:.2f} (>= {c['lower_bound']:.2f}, n={c['n']})"
                                for c in classes)
            certified = all(c["lower_bound"] >= 0.8 for c in classes) if classes else False
            rows.append([data.removesuffix(".jsonl"), judge, str(found["labels"]), recalls,
                         "-" if found["kappa"] is None else f"{found['kappa']:.3f}", f"{found['base_rate']:.2f}",
                         "yes" if certified else "no"])
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="200 draws, printed only")
    parser.add_argument("--draws", type=int, default=1000)
    args = parser.parse_args(argv)
    draws = 200 if args.quick else args.draws
    rng = np.random.default_rng(0)
    rows, worst_below = [], 0.0
    for tpr, tnr in JUDGES:
        below = tpr < FLOORS["tpr"] or tnr < FLOORS["tnr"]
        shares = [certified_share(tpr, tnr, n, draws, rng) for n in PER_CLASS]
        if below:
            worst_below = max(worst_below, *shares)
        plan = labels_to_certify(round(tpr * 100), 100, FLOORS["tpr"], 0.05) if tpr > FLOORS["tpr"] else None
        rows.append([f"{tpr:.2f}", f"{tnr:.2f}", "yes" if below else "no", *(f"{s:.3f}" for s in shares),
                     "-" if plan is None else f"{plan:,}"])
        log(" | ".join(rows[-1]))
    head = ["TPR", "TNR", "below a floor", *(f"certified, {n} per class" for n in PER_CLASS),
            "labels per class the rule asks for at this TPR (from 100)"]
    body = "\n".join([
        f"Machine: {describe_machine()}. Command: `{command_line('bench.bench_card', argv)}`; {draws} draws per "
        "cell, floors TPR >= 0.80 and TNR >= 0.80 on exact one-sided 95% lower bounds (`metrics.card.certify`). "
        f"Judges below a floor were certified in at most {worst_below:.3f} of draws (the rule's bound: 0.05).", "",
        *table_head(head), *map(table_row, rows)])
    cards = published_cards()
    body += "\n\n" + "\n".join([
        "The card of each published judge with classes (`build_card` on the shared data and the judges' published "
        "verdicts; LLMBar: the first order's verdict). Certified: every class's recall has an exact lower bound of "
        f"at least 0.80. {sum(r[-1] == 'yes' for r in cards)} of {len(cards)} are.", "",
        *table_head(["data", "judge", "labels", "recall per human class (exact 95% lower bound, labels)", "kappa",
                     "base rate", "certified at recall >= 0.8"]), *map(table_row, cards)])
    print(body)
    if not args.quick:
        write_doc_section("bench_card", body, heading="## Certifying a judge before it gates (`bench/bench_card.py`)")


if __name__ == "__main__":
    main()
