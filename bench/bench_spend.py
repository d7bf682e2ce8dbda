"""The spend planner: the width it predicts against the width a plan carried out gets.

    python -m bench.bench_spend --draws 300 --write
    python -m bench.bench_spend --sets hanna:coherence --draws 50      # a quick look
    python -m bench.bench_spend --sets arena --draws 300 --write      # comparisons only

HANNA's five LLM raters (one prompt each) with a stated price per call by rater size (7B $0.0002,
13B $0.0004, ChatGPT $0.002; so running ChatGPT on all 737 stories costs $1.47) and $0.50 a human
label. A pilot of 10% of the stories, drawn stratified as ``judgelab sample`` draws, is what the plan
reads; ``plan_spend`` then chooses the judges and the number of labels for the budget. Carrying a plan
out: ``--draws`` fresh stratified draws of its number of labels, each estimated with its judges
(``intervals="auto"``, the CLI's population target), the mean width over systems averaged over the
draws. For the plan chosen, humans alone and the best single judge with humans at the same spend:
predicted width, measured width, their ratio (goal: within 15%), and the worst system's coverage of
the measured intervals (of the mean over all the data's stories).

Chatbot Arena (``arena``): its 18,833 comparisons and three judges at published API prices per comparison
(:data:`ARENA_PRICES`: 1,000 prompt and 300 completion tokens a call at each model's list price), human
labels at $0.50 and at $2; pilots of 200 and 500 uniformly drawn labelled comparisons; each plan carried
out with fresh uniform draws of its labels, the win probability's corrected estimate with its judges
(``plan_spend_comparisons``).

TREC DL 2019 runs (``trec``): the 37 runs' nDCG@10 over the 30 judged queries (5,353 query-passage pairs),
TREMA's Llama-3-8B and Llama-3.3-70B judges (four-prompts, published labels) at a stated price per pair
judged (:data:`TREC_PRICES`), a human label at $0.10 a pair, so labelling a query costs its pool (178 pairs
on average, $17.84); a labelled query serves every run. Pilots of 5 and 8 random queries; each plan carried
out with fresh random queries, the corrected (or human-only) estimate of every run.
"""

from __future__ import annotations

import argparse
import functools
import itertools
import json
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from bench.bench_evaluate import item_problem, judges_of, truth_of
from bench.bench_per_system import scale_of
from bench.common import describe_machine, log, table_head, table_row, write_doc_section
from judgelab.evaluate import draw
from judgelab.evaluate.estimators import corrected, human_only
from judgelab.evaluate.spend import SpendOption, plan_spend

SECTION = "## Many judges, one budget: the spend planner (`bench/bench_spend.py`)"
SETS = ("hanna:coherence", "hanna:relevance", "hanna:engagement", "arena", "trec")
PRICES = {"Mistral-7B": 0.0002, "Llama-13B": 0.0004, "Beluga-13B": 0.0004, "OrcaPlatypus": 0.0004, "ChatGPT": 0.002}
LABEL_COST = 0.5
BUDGETS = (60.0, 100.0, 200.0)
PILOT_SHARES = (0.10, 0.20)
PILOTS = 10
RESULTS = Path.home() / ".cache" / "judgelab" / "bench_spend.jsonl"
#: $ per comparison: 1,000 prompt + 300 completion tokens at the list prices per million tokens of each model
#: (GPT-4 Turbo 0125 $10/$30, Claude 3 Opus $15/$75, GPT-3.5 Turbo 0125 $0.50/$1.50).
ARENA_PRICES = {"gpt-4-0125-preview": 0.019, "claude-3-opus-20240229": 0.0375, "gpt-3.5-turbo": 0.00095}
#: (label cost, budgets): at $0.50 a label running GPT-4 on every comparison costs 716 labels; at $2, 179
ARENA_BUDGETS = ((0.5, (300.0, 1200.0)), (2.0, (2000.0, 6000.0)))
ARENA_PILOTS = (200, 500)
ARENA_PILOT_DRAWS = 5
#: $ per query-passage pair judged: TREMA's four prompts, four calls a pair, at $0.0002 (8B) and $0.001 (70B) a call
TREC_PRICES = {"TREMA-4prompts/llama3-8b": 0.0008, "TREMA-4prompts/llama3.3-70b": 0.004}
TREC_LABEL_COST = 0.1  # $ per pair a person labels
TREC_BUDGETS = (200.0, 300.0, 450.0)  # about 11, 16 and 25 labelled queries of the 30
TREC_PILOTS = (5, 8)  # labelled queries
TREC_PILOT_DRAWS = 10


def arena_panel():
    """Chatbot Arena's comparisons with its three judges' preferences (every human verdict kept: the truth)."""
    from bench.bench_pairwise import JUDGES, arena_data
    from judgelab.evaluate.comparisons import comparisons, preferences

    _, a, b, human, verdicts = arena_data()
    full = comparisons(a, b, verdicts[next(iter(JUDGES))], human)
    judges = np.array([preferences(verdicts[short], len(a), short) for short in JUDGES]).T
    return replace(full, judges=judges, judge_names=tuple(JUDGES.values()))


def arena_carried_out(panel, option: SpendOption, draws: int, truth: np.ndarray) -> tuple[float, float]:
    """(mean width over systems and draws, worst system's coverage) of ``option`` on Arena, ``draws`` times."""
    from judgelab.evaluate.preferences import estimate

    keep = [panel.judge_names.index(j) for j in option.judges]
    if len(keep) == 1:
        data = replace(panel, judge=panel.judges[:, keep[0]], judges=None, judge_names=())
    else:
        data = replace(panel, judges=panel.judges[:, keep] if keep else None,
                       judge_names=option.judges if keep else ())
    rng = np.random.default_rng(7)
    widths, hits = [], []
    for k in range(draws):
        mask = np.zeros(panel.n, dtype=bool)
        mask[rng.choice(panel.n, option.labels, replace=False)] = True
        est = estimate(replace(data, human=np.where(mask, panel.human, np.nan)), "corrected" if keep else "human",
                       seed=k)
        widths.append(np.mean(est.ci[:, 1] - est.ci[:, 0]))
        hits.append((est.ci[:, 0] <= truth + 1e-9) & (truth - 1e-9 <= est.ci[:, 1]))
    return float(np.mean(widths)), float(np.mean(hits, axis=0).min())


def arena_cell(label_cost: float, budget: float, pilot_size: int, pilot_seed: int, draws: int) -> list[dict]:
    from judgelab.evaluate.preferences import estimate
    from judgelab.evaluate.spend import plan_spend_comparisons

    panel = arena_panel()
    truth = estimate(panel, "human", target="items").value
    mask = np.zeros(panel.n, dtype=bool)
    mask[np.random.default_rng([pilot_seed, pilot_size]).choice(panel.n, pilot_size, replace=False)] = True
    pilot = replace(panel, human=np.where(mask, panel.human, np.nan))
    plan = plan_spend_comparisons(pilot, budget=budget, judge_costs=ARENA_PRICES, label_cost=label_cost,
                                  seed=pilot_seed)
    return _roles(plan, lambda option: arena_carried_out(panel, option, draws, truth),
                  {"set": f"arena (${label_cost:g} a label)", "budget": budget, "share": pilot_size,
                   "pilot": pilot_seed})


def _roles(plan, carry_out, key: dict) -> list[dict]:
    """The plan chosen, humans alone and the best single judge (on the pilot) at the same spend, carried out."""
    singles = [o for o in plan.options if len(o.judges) == 1]
    chosen = {"plan": plan.best, "humans alone": next(o for o in plan.options if not o.judges),
              **({"best single judge": min(singles, key=lambda o: o.width)} if singles else {})}
    rows = []
    for role, option in chosen.items():
        measured, worst = carry_out(option)
        rows.append(key | {"role": role, "judges": list(option.judges), "labels": option.labels, "cost": option.cost,
                           "predicted": option.width, "range": list(option.range), "measured": measured,
                           "worst": worst})
    return rows


@functools.cache
def trec_panel():
    """TREC DL 2019's runs with the TREMA judges of :data:`TREC_PRICES`, and each query's judged pairs."""
    from collections import Counter

    from bench.bench_evaluate import SHARED, query_problem
    from judgelab.data import load_items

    singles = [query_problem(name) for name in TREC_PRICES]
    panel = singles[0].with_judges(np.stack([p.judge for p in singles], axis=-1), list(TREC_PRICES))
    per_query = Counter(str(item.qid) for item in load_items(SHARED / "trec_dl2019.jsonl"))
    return panel, np.array([per_query[q] for q in panel.units])


def trec_cell(budget: float, pilot_size: int, pilot_seed: int, draws: int) -> list[dict]:
    panel, pairs = trec_panel()
    truth = truth_of(panel)
    pilot = draw(panel, pilot_size, seed=100 * pilot_size + pilot_seed).design
    plan = plan_spend(panel, pilot, budget=budget, judge_costs=TREC_PRICES, label_cost=TREC_LABEL_COST,
                      seed=pilot_seed, pairs=pairs)
    return _roles(plan, lambda option: carried_out(panel, option, draws, truth),
                  {"set": "trec_dl2019 runs", "budget": budget, "share": pilot_size, "pilot": pilot_seed})


def panel_problem(spec: str):
    dataset, aspect = spec.split(":")
    names = [n for n in judges_of(dataset) if "eval_prompt_1" in n]
    scale = scale_of(dataset, aspect)
    singles = [replace(item_problem(dataset, aspect, n), scale=scale) for n in names]
    return singles[0].with_judges(np.stack([p.judge for p in singles], axis=-1), names)


def carried_out(panel, option: SpendOption, draws: int, truth: np.ndarray) -> tuple[float, float]:
    """(mean width over systems and draws, worst system's coverage) of ``option`` carried out ``draws`` times."""
    names = panel.judge_names
    keep = [names.index(j) for j in option.judges]
    if len(keep) == 1:
        problem = replace(panel, judge=panel.judges[..., keep[0]], judges=None, judge_names=())
    elif keep:
        problem = panel.with_judges(panel.judges[..., keep], list(option.judges))
    else:
        problem = panel
    widths, hits = [], []
    for k in range(draws):
        design = draw(problem, option.labels, seed=1000 + k).design
        known = problem.with_human(np.where(design.labelled[:, None], problem.human, np.nan))
        est = corrected(known, design, seed=k) if keep else human_only(known, design, seed=k)
        widths.append(np.mean(est.ci[:, 1] - est.ci[:, 0]))
        hits.append((est.ci[:, 0] <= truth + 1e-9) & (truth - 1e-9 <= est.ci[:, 1]))
    return float(np.mean(widths)), float(np.mean(hits, axis=0).min())


def cell(spec: str, budget: float, share: float, pilot_seed: int, draws: int) -> list[dict]:
    panel = panel_problem(spec)
    truth = truth_of(panel)
    costs = {n: PRICES[n.split("/")[0]] for n in panel.judge_names}
    pilot = draw(panel, share, seed=pilot_seed).design
    plan = plan_spend(panel, pilot, budget=budget, judge_costs=costs, label_cost=LABEL_COST, seed=pilot_seed)
    return _roles(plan, lambda option: carried_out(panel, option, draws, truth),
                  {"set": spec, "budget": budget, "share": share, "pilot": pilot_seed})


def cells(spec: str):
    """(the results file's key without draws, the function giving its rows) for every cell of ``spec``."""
    if spec == "trec":
        for budget, size, pilot in itertools.product(TREC_BUDGETS, TREC_PILOTS, range(TREC_PILOT_DRAWS)):
            yield (("trec_dl2019 runs", budget, size, pilot),
                   lambda draws, b=budget, n=size, p=pilot: trec_cell(b, n, p, draws))
        return
    if spec == "arena":
        for label_cost, budgets in ARENA_BUDGETS:
            for budget, size, pilot in itertools.product(budgets, ARENA_PILOTS, range(ARENA_PILOT_DRAWS)):
                yield ((f"arena (${label_cost:g} a label)", budget, size, pilot),
                       lambda draws, c=label_cost, b=budget, n=size, p=pilot: arena_cell(c, b, n, p, draws))
        return
    for budget, share, pilot in itertools.product(BUDGETS, PILOT_SHARES, range(PILOTS)):
        yield (spec, budget, share, pilot), lambda draws, b=budget, s=share, p=pilot: cell(spec, b, s, p, draws)


def run(sets, draws: int, results: Path, fresh: bool) -> list[dict]:
    done = {}
    if results.exists() and not fresh:
        for line in results.open(encoding="utf-8"):
            row = json.loads(line)
            done.setdefault((row["set"], row["budget"], row["share"], row["pilot"], row.get("draws")), []).append(row)
    results.parent.mkdir(parents=True, exist_ok=True)
    out = []
    with results.open("w" if fresh else "a", encoding="utf-8") as sink:
        for spec in sets:
            for base, rows_of in cells(spec):
                key = (*base, draws)
                if key not in done:
                    started = time.perf_counter()
                    done[key] = [dict(r, draws=draws) for r in rows_of(draws)]
                    for row in done[key]:
                        sink.write(json.dumps(row) + "\n")
                    sink.flush()
                    log(f"{' '.join(map(str, base))}: {time.perf_counter() - started:.1f}s")
                out += done[key]
    return out


def summary(rows: list[dict]) -> list[dict]:
    """One line per (set, budget, pilot share, plan role), over the pilots."""
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        groups.setdefault((r["set"], r["budget"], r["share"], r["role"]), []).append(r)
    out = []
    for (spec, budget, share, role), members in groups.items():
        ratio = np.array([r["measured"] / r["predicted"] for r in members])
        inside = np.mean([r["range"][0] <= r["measured"] <= r["range"][1] for r in members])
        judges = sorted({", ".join(map(_short, r["judges"])) or "-" for r in members})
        out.append({"set": spec, "budget": budget, "share": share, "role": role, "pilots": len(members),
                    "judges": "; ".join(judges), "labels": float(np.mean([r["labels"] for r in members])),
                    "measured": float(np.mean([r["measured"] for r in members])),
                    "ratio_median": float(np.median(ratio)), "ratio_low": float(ratio.min()),
                    "ratio_high": float(ratio.max()), "within": float(np.mean(np.abs(ratio - 1) <= 0.15)),
                    "inside": float(inside), "worst": float(min(r["worst"] for r in members))})
    return out


def _short(judge: str) -> str:
    """A judge's name in the table: HANNA's rater without its prompt, TREMA's model without its prompt set."""
    prompts, _, model = judge.partition("/")
    return model if prompts.startswith("TREMA") else prompts


def line(r: dict) -> str:
    unit = "queries" if r["set"].startswith("trec") else "labels"
    pilot = f"{r['share']:.0%}" if r["share"] < 1 else f"{r['share']:g} {unit}"
    cells = [r["set"], f"${r['budget']:g}", pilot, r["role"], r["judges"], f"{r['labels']:.0f}",
             f"{r['measured']:.3f}", f"{r['ratio_median']:.3f}", f"{r['ratio_low']:.3f}-{r['ratio_high']:.3f}",
             f"{r['within']:.0%}", f"{r['inside']:.0%}", f"{r['worst']:.3f}"]
    return table_row(cells)


HEAD = ["set", "budget", "pilot", "plan", "judges run (over the pilots)", "labels", "measured width",
        "measured / predicted, median", "its range", "plans within 15%", "measured inside the 80% range",
        "worst system's coverage"]


def doc(rows: list[dict], args, minutes: float) -> str:
    lines = summary(rows)
    out = [f"Machine: {describe_machine()}. Command: `python -m bench.bench_spend --draws {args.draws} --write` "
           f"({f'{minutes:.0f} min' if minutes >= 1 else 'rows reused from the results file'}; a cell already in "
           "the results file is not run again, `--fresh` runs every cell). HANNA, "
           "the five LLM raters on `eval_prompt_1` at a stated price per call (7B "
           "$0.0002, 13B $0.0004, ChatGPT $0.002), $0.50 a human label; pilots of 10% and 20% of the stories "
           f"({PILOTS} pilot draws each); each plan carried out {args.draws} times with fresh stratified labels, "
           "the CLI's defaults. `plan`: the planner's choice; `humans alone` and `best single judge` (chosen on "
           "the pilot) with humans, at the same spend. Chatbot Arena: its three judges at list prices "
           f"(${ARENA_PRICES['gpt-4-0125-preview']:g} GPT-4, ${ARENA_PRICES['claude-3-opus-20240229']:g} Claude 3 "
           f"Opus, ${ARENA_PRICES['gpt-3.5-turbo']:g} GPT-3.5 a comparison: 1,000 prompt and 300 completion tokens), "
           f"$0.50 or $2 a human label, pilots of 200 and 500 labelled comparisons ({ARENA_PILOT_DRAWS} draws each), "
           "the win probability (ties half). TREC DL 2019: the 37 runs' nDCG@10 over 30 queries, TREMA's Llama-3-8B "
           f"and Llama-3.3-70B judges at ${TREC_PRICES['TREMA-4prompts/llama3-8b']:g} and "
           f"${TREC_PRICES['TREMA-4prompts/llama3.3-70b']:g} a query-passage pair (four calls), ${TREC_LABEL_COST:g} a "
           f"pair a person labels (a query's pool: 178 pairs on average); pilots of 5 and 8 random queries "
           f"({TREC_PILOT_DRAWS} draws each); `labels` are labelled queries, each serving every run; `worst "
           "system`: the worst run.", "",
           *table_head(HEAD)]
    out += [line(r) for r in lines]
    for family in ("hanna", "arena", "trec"):
        mine = [r for r in rows if r["set"].startswith(family)]
        if mine:
            out += ["", _closing(family, mine)]
    return "\n".join(out)


def _closing(family: str, rows: list[dict]) -> str:
    chosen = {(r["set"], r["budget"], r["share"], r["pilot"]): r["measured"] for r in rows if r["role"] == "plan"}
    humans = [chosen[k] / r["measured"] for k, r in _by_role(rows, "humans alone").items()]
    single = [chosen[k] / r["measured"] for k, r in _by_role(rows, "best single judge").items()]
    within = np.mean([abs(r["measured"] / r["predicted"] - 1) <= 0.15 for r in rows])
    title = {"hanna": "HANNA", "arena": "Chatbot Arena", "trec": "TREC DL 2019 runs"}[family]
    return (f"{title}: plans whose measured width is within 15% of the "
            f"predicted one: {within:.0%} of {len(rows)}. The plan chosen, measured, over humans alone at the same "
            f"spend: {min(humans):.3f}-{max(humans):.3f}; over the best single judge with humans: "
            + (f"{min(single):.3f}-{max(single):.3f}." if single else "no single judge fits the budget."))


def _by_role(rows: list[dict], role: str) -> dict[tuple, dict]:
    return {(r["set"], r["budget"], r["share"], r["pilot"]): r for r in rows if r["role"] == role}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sets", nargs="*", default=list(SETS))
    parser.add_argument("--draws", type=int, default=300)
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument("--fresh", action="store_true")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    started = time.perf_counter()
    rows = run(args.sets, args.draws, args.results, args.fresh)
    for r in summary(rows):
        print(line(r), flush=True)
    if args.write and rows:
        write_doc_section("bench_spend", doc(rows, args, (time.perf_counter() - started) / 60), heading=SECTION)


if __name__ == "__main__":
    main()
