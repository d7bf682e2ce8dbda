"""A cascade of judges with a guaranteed agreement: how often the guarantee holds, and what it leaves to people.

    python -m bench.bench_cascade --draws 300 --write

Each draw labels a uniform random calibration set, calibrates the cascade (judgelab.evaluate.cascade) on
it, and measures on every other item: the agreement with people of the verdicts the judges answer
(the guarantee: at least the target in >= 1 - delta of the draws) and the share they answer.

* **Chatbot Arena** (18,833 comparisons, a/b/tie; verdicts only): GPT-3.5 -> GPT-4 -> Claude 3 Opus,
  cheapest first, each verdict's confidence the share of the judges run so far that give it.
* **LLMBar** (293 comparisons, a/b; the authors' published evaluators, each run in both orders):
  ChatGPT -> GPT-4 (Vanilla prompts), each verdict's confidence its consistency across the two orders
  (an inconsistent pair is a tie: a wrong verdict here).

Beside the cascade: each judge alone with the same calibration (its best threshold policy, with the
guarantee; on Arena a judge alone has no confidence to threshold, so it answers everything or nothing),
and "always ask the strongest judge" (no calibration, no guarantee).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from bench.bench_evaluate import SHARED
from bench.common import describe_machine, log, write_doc_section
from judgelab.evaluate.cascade import Stage, agreement_confidence, calibrate

SECTION = "## A cascade of judges with a guaranteed agreement (`bench/bench_cascade.py`)"
DELTA = 0.1
ARENA = {"targets": (0.6, 0.65), "labels": (500, 1000, 2000)}
LLMBAR = {"targets": (0.75, 0.8), "labels": (100, 150)}
LLMBAR_JUDGES = ("ChatGPT/Vanilla", "GPT-4/Vanilla")
PREFERENCE = {"a": 1.0, "b": 0.0, "tie": 0.5}


def arena() -> tuple[list, dict[str, list], dict[str, np.ndarray]]:
    from bench.bench_pairwise import JUDGES, arena_data

    items, _, _, human, verdicts = arena_data()
    order = ["gpt-3.5", "gpt-4", "claude-3-opus"]
    votes = {JUDGES[k]: [PREFERENCE[v] for v in verdicts[k]] for k in order}

    def confidence(names: list[str]) -> dict[str, np.ndarray]:  # agreement among the judges run: these
        return dict(zip(names, agreement_confidence([votes[n] for n in names]), strict=True))

    return [PREFERENCE[h] for h in human], votes, confidence


def llmbar() -> tuple[list, dict[str, list], dict[str, np.ndarray]]:
    items = [json.loads(line) for line in (SHARED / "llmbar.jsonl").open(encoding="utf-8")]
    ids = [item["id"] for item in items]
    rows = {}
    for line in (SHARED / "reference" / "llmbar_evaluator_results.jsonl").open(encoding="utf-8"):
        row = json.loads(line)
        if row["judge"] in LLMBAR_JUDGES:
            rows[(row["judge"], row["item_id"])] = row["prediction"]
    votes, consistency = {}, {}
    for judge in LLMBAR_JUDGES:
        pairs = [rows.get((judge, i)) or {} for i in ids]
        first = [p.get("swap_false") for p in pairs]
        second = [p.get("swap_true") for p in pairs]
        votes[judge] = [PREFERENCE[f] if f == s and f in PREFERENCE else 0.5 if f and s else None
                        for f, s in zip(first, second, strict=True)]
        consistency[judge] = np.array([1.0 if f == s and f else 0.5 if f and s else np.nan
                                       for f, s in zip(first, second, strict=True)])
    return [PREFERENCE[item["label"]] for item in items], votes, lambda names: {n: consistency[n] for n in names}


EMBEDDED_RUN = Path.home() / ".cache" / "judgelab" / "runs" / "llmbar-pairwise-logprob-qwen1.5b" / "run"


def llmbar_embedded() -> tuple[list, dict[str, list], object]:
    """The LLMBar items the embedded qwen2.5-coder-1.5b judged (``score: logprob``; confidence: its probability
    of its verdict), then GPT-4's published Vanilla verdicts (confidence: the two orders agree)."""
    human, votes, confidence = llmbar()
    ids = [json.loads(line)["id"] for line in (SHARED / "llmbar.jsonl").open(encoding="utf-8")]
    judged = {row["item_id"]: row for row in map(json.loads, (EMBEDDED_RUN / "judgments.jsonl").open())
              if row["status"] == "ok"}
    keep = [k for k, i in enumerate(ids) if i in judged]
    own = [judged[ids[k]] for k in keep]
    embedded = "qwen2.5-coder-1.5b (embedded)"
    strong = LLMBAR_JUDGES[1]
    chosen = {embedded: [PREFERENCE[j["label"]] for j in own], strong: [votes[strong][k] for k in keep]}
    sure = {embedded: np.array([j["extra"].get("confidence", np.nan) for j in own], dtype=float),
            strong: confidence([strong])[strong][keep]}
    return [human[k] for k in keep], chosen, lambda names: {n: sure[n] for n in names}


def policies(names: list[str]) -> dict[str, list[str]]:
    return {"cascade": names} | {f"{name} alone": [name] for name in names}


def cell(human, votes, confidence, target: float, labels: int, draws: int) -> list[dict]:
    n, names = len(human), list(votes)
    rng = np.random.default_rng([int(target * 1000), labels])
    found = {policy: {"held": 0, "answered": [], "agreement": []} for policy in policies(names)}
    strongest = names[-1]
    for _ in range(draws):
        labelled = np.zeros(n, dtype=bool)
        labelled[rng.choice(n, labels, replace=False)] = True
        for policy, used in policies(names).items():
            confident = confidence(used)  # a judge alone: only its own confidence (verdicts alone: none)
            stages = [Stage(name, votes[name], confident[name]) for name in used]
            result = calibrate(stages, human, labelled, agreement=target, delta=DELTA)
            new = ~labelled & (result.by >= 0)
            agree = np.mean([result.verdict[i] == human[i] for i in np.flatnonzero(new)]) if new.any() else np.nan
            found[policy]["held"] += bool(not new.any() or agree >= target)
            found[policy]["answered"].append(new.sum() / (~labelled).sum())
            found[policy]["agreement"].append(agree)
    rows = [{"policy": policy, "target": target, "labels": labels, "draws": draws, "held": f["held"] / draws,
             "answered": float(np.mean(f["answered"])), "agreement": float(np.nanmean(f["agreement"]))
             if np.isfinite(f["agreement"]).any() else None} for policy, f in found.items()]
    always = np.mean([v == h for v, h in zip(votes[strongest], human, strict=True) if v is not None])
    rows.append({"policy": f"always {strongest}", "target": target, "labels": labels, "draws": draws,
                 "held": float(always >= target), "answered": 1.0, "agreement": float(always)})
    return rows


def line(data: str, r: dict) -> str:
    agreement = "-" if r["agreement"] is None else f"{r['agreement']:.3f}"
    return (f"| {data} | {r['target']:g} | {r['labels']} | {r['policy']} | {r['held']:.3f} | {r['answered']:.3f} | "
            f"{agreement} |")


HEAD = ("| data | agreement guaranteed | labels | policy | guarantee held (share of draws) | answered without "
        "people | agreement on what the judges answered |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--draws", type=int, default=300)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    started = time.perf_counter()
    lines = []
    cases = [("Chatbot Arena", arena, ARENA), ("LLMBar", llmbar, LLMBAR)]
    if (EMBEDDED_RUN / "judgments.jsonl").exists():  # a run of the embedded model, made as docs/budgets.md says
        cases.append(("LLMBar, embedded model first", llmbar_embedded, {"targets": (0.75, 0.8), "labels": (60, 80)}))
    for data, load, grid in cases:
        human, votes, confidence = load()
        for target in grid["targets"]:
            for labels in grid["labels"]:
                began = time.perf_counter()
                for row in cell(human, votes, confidence, target, labels, args.draws):
                    lines.append(line(data, row))
                    print(lines[-1], flush=True)
                log(f"{data} {target} {labels}: {time.perf_counter() - began:.1f}s")
    if args.write:
        minutes = (time.perf_counter() - started) / 60
        body = [f"Machine: {describe_machine()}. Command: `python -m bench.bench_cascade --draws {args.draws} --write` "
                f"({minutes:.0f} min); delta {DELTA} (split over a cascade's stages); {args.draws} uniform random "
                "calibration sets per row, the rest of the items held out. `guarantee held`: the share of draws "
                "whose judge-answered held-out items agree with people at least as the target (goal: >= 0.9); "
                "`always ...`: the strongest judge on everything, uncalibrated, with no guarantee (held: 1 if its "
                "agreement over all items reaches the target, else 0).", "", HEAD, "|---|---|---|---|---|---|---|",
                *lines]
        write_doc_section("bench_cascade", "\n".join(body), heading=SECTION)


if __name__ == "__main__":
    main()
