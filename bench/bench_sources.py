"""Other tools' published judgments read by judgelab: AlpacaEval 2's leaderboard reproduced, and more.

AlpacaEval 2's leaderboard reproduced from its annotations, then what judgelab adds (intervals, rank
sets, the verbosity audit); Arena-Hard-Auto's excerpt.

    .venv/bin/python -m bench.bench_sources --alpaca-eval DIR   # ~1 min, no model: writes its docs/benchmarks.md section
    .venv/bin/python -m bench.bench_sources --alpaca-eval DIR --no-write

DIR is a copy of github.com/tatsu-lab/alpaca_eval holding `results/<model>/weighted_alpaca_eval_gpt4_turbo/
annotations.json` (every model whose file is under 4 MB: 58 of 221, the copy this was run on could not
hold larger files) and `src/alpaca_eval/leaderboards/data_AlpacaEval_2/weighted_alpaca_eval_gpt4_turbo_leaderboard.csv`
(the published figures). Nothing from it is kept in this repository.

AlpacaEval's figures per model (alpaca_eval.metrics): `win_rate` = 100 x the mean of preference - 1 (a
draw, 0, read as 1.5), `standard_error` its standard error (ddof 1), `discrete_win_rate` = 100 x (wins +
draws / 2) / n, `avg_length` the mean length of the model's outputs in characters. judgelab reads the
same file (judgelab.data.sources.alpaca_eval: the score is preference - 1, the label its side) and
computes each from what it read. `length_controlled_winrate` is AlpacaEval's GLM `length_controlled_v1`:
logit P(model wins) = a tanh(standardised length difference) + b x instruction difficulty + c, fitted with
L1 regularisation towards two "gamed" baselines' annotations (`df_gamed.csv`) and averaged over the 805
instructions at no length difference. Its instruction difficulties (`instruction_difficulty.csv`) and the
gamed annotations are published on the Hugging Face Hub, not in the repository, and are out of reach here;
the released GLM weights (`metrics/weights/.../baseline_gpt4_1106_preview.csv`) need the difficulties to
give a win rate. So the LC column is compared with judgelab's own length control, AlpacaEval's *minimal* GLM
(judgelab.metrics.bias.length_controlled_win_rate: theta + phi tanh(delta / sd), no difficulty, no
regularisation, LC = sigmoid(theta)), not reproduced.
"""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path

import numpy as np

from bench.common import command_line, describe_machine, write_doc_section

SECTION = "## Other tools' judgments: AlpacaEval 2 and Arena-Hard-Auto read by judgelab (`bench/bench_sources.py`)"
ALPACA = Path.home() / ".cache" / "judgelab" / "alpaca_eval"
LEADERBOARD = "src/alpaca_eval/leaderboards/data_AlpacaEval_2/weighted_alpaca_eval_gpt4_turbo_leaderboard.csv"
REFERENCE = "gpt4_1106_preview"
ARENA = Path(__file__).resolve().parents[1] / "tests" / "data" / "sources" / "arena-hard"
#: Arena-Hard-Auto's show_result.py: a game's verdict as the model's battles, >> counting three times.
ARENA_WEIGHT = {"A>B": [1], "A>>B": [1] * 3, "A=B": [0.5], "A<<B": [0] * 3, "A<B": [0], "B>A": [0],
                "B>>A": [0] * 3, "B=A": [0.5], "B<<A": [1] * 3, "B<A": [1]}


def published(folder: Path) -> dict[str, dict[str, float]]:
    with open(folder / LEADERBOARD, encoding="utf-8") as handle:
        return {row[""]: row for row in csv.DictReader(handle)}


def by_model(read) -> dict[str, dict]:
    """Per evaluated model: its judgments' scores and labels, its and the reference's output lengths."""
    items = {item.id: item for item in read.items}
    out: dict[str, dict] = {}
    for judgment in read.judgments:
        item = items[judgment.item_id]
        entry = out.setdefault(item.system_b, {"score": [], "label": [], "len_model": [], "len_reference": [],
                                               "group": []})
        if not judgment.ok:
            continue  # AlpacaEval drops rows without a preference too (counted in the reader's notes)
        entry["score"].append(judgment.score)
        entry["label"].append(judgment.label)
        entry["len_model"].append(len(item.output_b))
        entry["len_reference"].append(len(item.output_a))
        entry["group"].append(item.group)
    return out


def reproduce(entry: dict) -> dict[str, float]:
    score = np.asarray(entry["score"], dtype=float)
    labels = np.asarray(entry["label"])
    return {"win_rate": 100 * score.mean(), "standard_error": 100 * score.std(ddof=1) / np.sqrt(len(score)),
            "discrete_win_rate": 100 * (np.sum(labels == "b") + np.sum(labels == "tie") / 2) / len(labels),
            "n_wins": int(np.sum(labels == "b")), "n_total": len(labels),
            "avg_length": float(np.mean(entry["len_model"]))}


def length_controlled(entry: dict):
    from judgelab.metrics.bias import length_controlled_win_rate

    return length_controlled_win_rate(entry["score"], entry["len_model"], entry["len_reference"], n_resamples=200)


def lc_rank_sets(models: list[str], fits: dict[str, dict], confidence: float = 0.95):
    """Simultaneous rank sets of the LC win rates: each model's GLM intercept (the sigmoid is monotone) with
    its Wald standard error, independent across models (each model's comparisons are its own), max-t
    (judgelab.evaluate.preferences)."""
    from scipy.special import logit
    from scipy.stats import norm

    from judgelab.evaluate.rank_sets import sets_from, simultaneous_critical

    z = norm.ppf(0.5 + confidence / 2)
    theta = np.array([logit(fits[m]["length_controlled_win_rate"].value) for m in models])
    se = np.array([(logit(fits[m]["length_controlled_win_rate"].ci[1]) - logit(fits[m]["length_controlled_win_rate"].ci[0]))
                   / (2 * z) for m in models])
    cov = np.diag(se ** 2)
    critical = simultaneous_critical(cov, 1 - confidence, "max-t", seed=0, n_draws=4000)
    return sets_from(theta, cov, critical)


def alpaca_section(folder: Path) -> str:
    from judgelab.audit import audit
    from judgelab.audit.inputs import comparisons_of, verdicts_of
    from judgelab.data.sources import read_source
    from judgelab.evaluate import evaluate

    read = read_source(folder / "results", "alpaca-eval")
    theirs = published(folder)
    ours = by_model(read)
    models = sorted(ours, key=lambda m: -float(theirs[m]["win_rate"]) if m in theirs else 0)
    missing = [m for m in models if m not in theirs]
    models = [m for m in models if m in theirs]
    rows, diffs = [], {k: [] for k in ("win_rate", "standard_error", "discrete_win_rate", "avg_length", "n_wins")}
    fits = {m: length_controlled(ours[m]) for m in models}
    for m in models:
        mine = reproduce(ours[m])
        for key in diffs:
            diffs[key].append(abs(mine[key] - float(theirs[m][key])))
        lc = fits[m]["length_controlled_win_rate"]
        rows.append((m, float(theirs[m]["win_rate"]), mine["win_rate"], float(theirs[m]["discrete_win_rate"]),
                     mine["discrete_win_rate"], int(float(theirs[m]["avg_length"])), mine["avg_length"],
                     float(theirs[m]["length_controlled_winrate"]), 100 * lc.value,
                     (100 * lc.ci[0], 100 * lc.ci[1]) if lc.ci else None, mine["n_total"]))
    ranked = [item for item in read.items if item.system_b in theirs]  # the published models only
    kept = {item.id for item in ranked}
    report = evaluate(ranked, [j for j in read.judgments if j.item_id in kept], estimand="baseline-win-rate",
                      baseline=REFERENCE, n_resamples=0)
    board = report.to_dict()
    judge = board["estimators"]["judge"]
    sets = lc_rank_sets(models, fits)
    lc_sets = {m: (int(sets[1][k]), int(sets[2][k])) for k, m in enumerate(models)}
    verdicts = verdicts_of(read.judgments)
    audited = audit(verdicts, comparisons_of(read.items), n_resamples=200)
    coefficient = audited.row("length coefficient")

    from scipy.stats import spearmanr

    theirs_lc = [r[7] for r in rows]
    ours_lc = [r[8] for r in rows]
    raw = [r[1] for r in rows]
    lines = [f"**AlpacaEval 2** (annotator `weighted_alpaca_eval_gpt4_turbo`, reference `{REFERENCE}`): "
             f"{len(read.items):,} comparisons of {len(ours)} models read from their `annotations.json`, "
             f"{len(models)} of them on the published leaderboard "
             f"({len(read.notes)} note: the reference's own file compares it with itself and is left out; "
             f"{'not on the published leaderboard, left out of the tables: ' + ', '.join(missing) if missing else ''}).",
             "",
             "Reproduced from the annotations, largest absolute difference over the models (theirs - ours): "
             f"`win_rate` {max(diffs['win_rate']):.2g}, `standard_error` {max(diffs['standard_error']):.2g}, "
             f"`discrete_win_rate` {max(diffs['discrete_win_rate']):.2g}, `n_wins` {max(diffs['n_wins']):.0f}, "
             f"`avg_length` {max(d for d, r in zip(diffs['avg_length'], rows, strict=True) if r[10] == 805):.2g} "
             "for the models whose annotations hold all 805 instructions (the leaderboard rounds it to whole "
             f"characters), up to {max(diffs['avg_length']):.2g} for the "
             f"{sum(r[10] < 805 for r in rows)} whose file holds 802-804 (AlpacaEval averages all 805 outputs, "
             "annotated or not).", "",
             "| model | win rate theirs | ours | discrete theirs | ours | LC theirs (v1 GLM) | LC ours (minimal GLM) "
             "[95%] | LC difference | win-rate rank set (judgelab) | LC rank set | n |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for m, wr_t, wr_o, d_t, d_o, _, _, lc_t, lc_o, lc_ci, n in rows:
        win = judge[m]
        interval = f" [{lc_ci[0]:.1f}, {lc_ci[1]:.1f}]" if lc_ci else ""
        lines.append(f"| {m} | {wr_t:.2f} | {wr_o:.2f} | {d_t:.2f} | {d_o:.2f} | {lc_t:.2f} | {lc_o:.2f}{interval} | "
                     f"{lc_t - lc_o:+.2f} | {int(win['rank_interval'][0])}-{int(win['rank_interval'][1])} | "
                     f"{lc_sets[m][0]}-{lc_sets[m][1]} | {n} |")
    gaps = np.abs(np.array(theirs_lc) - np.array(ours_lc))
    lines += ["", f"LC, theirs against ours: mean |difference| {gaps.mean():.1f} points (largest {gaps.max():.1f}); "
                  f"Spearman between the two LC columns {spearmanr(theirs_lc, ours_lc)[0]:.3f}, between their LC and "
                  f"the raw win rate {spearmanr(theirs_lc, raw)[0]:.3f}, ours and the raw one "
                  f"{spearmanr(ours_lc, raw)[0]:.3f}. The two GLMs differ by the instruction-difficulty term and the "
                  "regularisation towards the gamed baselines, which pulls the verbose and concise variants' "
                  "length coefficients together; the minimal GLM lets each model's own length slope absorb "
                  "more, so where a model's outputs are much shorter than the reference's (most of these: "
                  "avg_length under 2,049) its LC moves further from the raw win rate.",
              "",
              "Rank sets: the win-rate column is judgelab's `evaluate --estimand baseline-win-rate --baseline "
              f"{REFERENCE}` on the discrete verdicts (simultaneous, {board['rank_sets']['judge']['method']}); "
              "the LC column is max-t over the minimal GLMs' intercepts (Wald standard errors, independent "
              "across models).",
              "",
              f"Verbosity audit of the annotator on the real texts (`judgelab audit`, one order, no human labels): "
              f"length coefficient {coefficient.value:.3f} [{coefficient.ci[0]:.3f}, {coefficient.ci[1]:.3f}] "
              f"log-odds of preferring output_1 per SD of len(output_1) - len(output_2), n = {coefficient.n:,}: "
              "the annotator prefers the longer output. Without human labels nothing holds quality fixed, so "
              "this mixes a preference for length with longer answers being better; with labels (`--human`) "
              "the human verdict is the covariate."]
    return "\n".join(lines)


def arena_section() -> str:
    from judgelab.audit import audit
    from judgelab.audit.inputs import comparisons_of, verdicts_of
    from judgelab.data.sources import read_source

    lines = [json.loads(line) for path in sorted(ARENA.rglob("*.jsonl")) for line in path.read_text().splitlines()]
    read = read_source(ARENA, "arena-hard")
    audited = audit(verdicts_of(read.judgments), comparisons_of(read.items), n_resamples=200)
    flips = audited.row("flip rate")
    table = ["| model | questions | Arena-Hard score (their rule) | judgelab two-order verdict |", "|---|---|---|---|"]
    labels = {j.item_id: j.label for j in read.judgments}
    for line in lines:
        battles = ARENA_WEIGHT[line["games"][1]["score"]] + [1 - s for s in ARENA_WEIGHT[line["games"][0]["score"]]]
        table.append(f"| {line['model']} | 1 | {100 * np.mean(battles):.1f} | "
                     f"{labels[line['model'] + '/' + line['uid']]} (a: the baseline {line['baseline']}) |")
    return "\n".join([
        "**Arena-Hard-Auto** (v0.1, judge `gpt-4-1106-preview`, baseline `gpt-4-0314`): the published judgment "
        "files are 7 MB each, beyond what the copies reachable here hold (files of 4 MB and more are left out), "
        "so the fixture is one question per model (tests/data/sources/arena-hard) and **no published score is "
        "reproduced** (theirs: gpt-4-0613 37.9, gpt-3.5-turbo-0125 23.3 on 500 questions). On the excerpt, "
        "Arena-Hard's own scoring rule (show_result.py: both games as battles, `>>` three times, the mean) "
        "against judgelab's reading:", "", *table, "",
        f"Position consistency from the two games (`judgelab audit`): flip rate {flips.value:.2f} "
        f"[{flips.ci[0]:.2f}, {flips.ci[1]:.2f}] over {flips.n} questions. Bradley-Terry with rank sets "
        "(`evaluate --estimand bradley-terry`) needs each model to win and lose somewhere: on one question per "
        "model it reports no finite strength, as it should."])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--alpaca-eval", type=Path, default=ALPACA, help="a copy of tatsu-lab/alpaca_eval")
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)
    body = "\n".join([f"`{command_line('bench.bench_sources', argv)}` on {describe_machine()}.", "",
                      __doc__.split("\n\n", 2)[2].strip(), "", alpaca_section(args.alpaca_eval), "", arena_section()])
    print(body)
    if not args.no_write:
        write_doc_section("bench_sources", body, heading=SECTION)


if __name__ == "__main__":
    main()
