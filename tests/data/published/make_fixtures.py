"""Writes the made-up fixtures of this folder: `python tests/data/published/make_fixtures.py` (scikit-learn for
LLMBar's kappas, as LLMBar computes them). Every text, verdict and number is invented; only the formats are the
tools'."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from sklearn.metrics import cohen_kappa_score

OUT = Path(__file__).resolve().parent


def dump(path: Path, obj, lines: bool = False) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(r) + "\n" for r in obj) if lines else json.dumps(obj, indent=2) + "\n"
    path.write_text(text, encoding="utf-8")


# -- LLMBar: two subsets, one evaluator ---------------------------------------------------------------
SUBSETS = {  # (gold label, winner as shown, winner swapped); "" an unparsable verdict
    "Natural": [(1, "1", "1"), (2, "2", "1"), (1, "2", "2"), (2, "2", "2"), (1, "", "1"), (2, "1", "2")],
    "Adversarial/Manual": [(1, "1", "2"), (2, "2", "2"), (1, "1", "1"), (2, "1", "1")],
}


def llmbar_statistics(data: list[dict]) -> dict:
    """LLMBar's LLMEvaluator/evaluate.py, lines 524-552, as it writes statistics.json."""
    n = len(data)
    right_false = right_true = right_both = equal = 0
    code_false, code_true, gold = [], [], []
    for inst in data:
        label = str(inst["label"])
        out_false = inst["results"][-1]["swap = False"]["winner"]
        out_true = inst["results"][-1]["swap = True"]["winner"]
        right_false += out_false == label
        right_true += out_true == label
        right_both += (out_false == label) and (out_true == label)
        equal += out_true == out_false
        code_false.append(int(out_false) if out_false in ("0", "1") else 0)
        code_true.append(int(out_true) if out_true in ("0", "1") else 0)
        gold.append(inst["label"])
    stats = {"correct_False": f"{right_false} / {n} = {right_false / n * 100}%",
             "correct_True": f"{right_true} / {n} = {right_true / n * 100}%",
             "correct_average": f"{(right_false + right_true) / 2 / n * 100}%",
             "correct_both": f"{right_both} / {n} = {right_both / n * 100}%",
             "equal": f"{equal} / {n} = {equal / n * 100}%",
             "kappa_False": cohen_kappa_score(code_false, gold), "kappa_True": cohen_kappa_score(code_true, gold)}
    stats["kappa_average"] = (stats["kappa_False"] + stats["kappa_True"]) / 2
    stats["kappa_agreement"] = cohen_kappa_score(code_false, code_true)
    return stats


def llmbar() -> None:
    shared_items, shared_verdicts = [], []
    name = {"1": "a", "2": "b"}
    for subset, rows in SUBSETS.items():
        data = []
        for k, (label, first, second) in enumerate(rows):
            data.append({"input": f"Toy instruction {subset} {k}", "output_1": f"first answer {k}",
                         "output_2": f"second answer {k}", "label": label,
                         "results": [{"swap = False": {"completion": ["...", "stop"], "winner": first},
                                      "swap = True": {"completion": ["...", "stop"], "winner": second}}]})
            item_id = f"toy-{subset.split('/')[-1].lower()}-{k}"
            shared_items.append({"id": item_id, "dataset": "llmbar", "subset": subset, "instruction": data[-1]["input"],
                                 "output_a": data[-1]["output_1"], "output_b": data[-1]["output_2"],
                                 "label": name[str(label)]})
            shared_verdicts.append({"dataset": "llmbar", "item_id": item_id, "judge": "Toy/Vanilla", "raw": None,
                                    "prediction": {"swap_false": name.get(first), "swap_true": name.get(second)}})
        folder = OUT / "llmbar" / "Dataset" / "LLMBar" / subset / "evaluators" / "Toy" / "Vanilla"
        dump(folder / "result.json", data)
        dump(folder / "statistics.json", llmbar_statistics(data))
    dump(OUT / "llmbar" / "shared" / "llmbar.jsonl", shared_items, lines=True)
    shared_verdicts[0]["prediction"]["swap_true"] = "b"  # one verdict pair that differs from the result files
    dump(OUT / "llmbar" / "shared" / "llmbar_evaluator_results.jsonl", shared_verdicts, lines=True)


# -- AlpacaEval: the evaluators leaderboard, one model's annotations and the reference's own file ----------
COLUMNS = ["", "Human agreement", "Price [$/1000 examples]", "Time [seconds/1000 examples]", "Spearman corr.",
           "Pearson corr.", "Bias", "Variance", "Proba. prefer longer", "Proba. prefer lists", "Proba. prefer 1",
           "# parsed", "mode"]


def annotation(instruction, first, second, preference, price, time, model="toy-model") -> dict:
    return {"instruction": instruction, "output_1": first, "generator_1": "toy-reference", "dataset": "toy",
            "output_2": second, "generator_2": model, "annotator": "weighted_alpaca_eval_gpt4_turbo",
            "preference": preference, "price_per_example": price, "time_per_example": time}


def alpaca_eval() -> None:
    board = OUT / "alpaca_eval" / "src" / "alpaca_eval" / "leaderboards" / "evaluators" / "evaluators_leaderboard.csv"
    board.parent.mkdir(parents=True, exist_ok=True)
    with board.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(COLUMNS)
        writer.writerow(["weighted_alpaca_eval_gpt4_turbo", 65.7, 4.3, 227.7, 0.78, 0.77, 33.9, 23.7, 0.61, 0.57,
                         0.53, 2592, "minimal"])
        writer.writerow(["humans", 65.7, 300.0, 36800.0, 1.0, 1.0, 0.0, 34.3, 0.64, 0.60, 0.52, 2592, "minimal"])
    rows = [annotation("Name a colour.", "Blue.",
                       "Blue is a colour that many people like very much, as the sky is blue.", 1.9, 0.004, 0.2),
            annotation("Add 2 and 2.", "2 + 2 = 4, because adding two to two gives four, as counting shows.", "4",
                       1.2, 0.006, 0.3),
            annotation("Say hi.", "Hi!", "Hello!", 1.7, 0.005, 0.25),
            annotation("Spell cat.", "C-A-T, which spells the word cat, a small domestic animal.", "c a t", 1.6,
                       0.002, 0.1)]
    results = OUT / "alpaca_eval" / "results"
    dump(results / "toy-model" / "weighted_alpaca_eval_gpt4_turbo" / "annotations.json", rows)
    dump(results / "toy-reference" / "weighted_alpaca_eval_gpt4_turbo" / "annotations.json",
         [annotation("Say hi.", "Hi!", "Hi!", 1.5, 0.001, 0.1, model="toy-reference")])


# -- Arena-Hard-Auto v0.1 layout: two models, three questions, both games each --------------------------
GAMES = {"toy-strong": [("A<<B", "A>>B"), ("A<B", "A=B"), ("A>B", "A>B")],
         "toy-weak": [("A>>B", "B>>A"), ("A>B", "B>A"), ("A=B", "A<B")]}


def judge_prompt(question: str, first: str, second: str) -> str:
    return (f"<|User Prompt|>\n{question}\n\n<|The Start of Assistant A's Answer|>\n{first}\n"
            f"<|The End of Assistant A's Answer|>\n\n<|The Start of Assistant B's Answer|>\n{second}\n"
            "<|The End of Assistant B's Answer|>")


def arena_hard() -> None:
    for model, games in GAMES.items():
        lines = []
        for k, (game_1, game_2) in enumerate(games):
            question, base, mine = f"Toy question {k}?", f"Baseline answer {k}.", f"{model} answer {k}."
            lines.append({"uid": f"q{k}", "category": "arena-hard-v0.1", "judge": "toy-judge", "model": model,
                          "baseline": "toy-baseline",
                          "games": [{"user_prompt": judge_prompt(question, base, mine), "judgment": "...",
                                     "score": game_1},
                                    {"user_prompt": judge_prompt(question, mine, base), "judgment": "...",
                                     "score": game_2}]})
        folder = OUT / "arena-hard" / "data" / "arena-hard-v0.1" / "model_judgment" / "toy-judge"
        dump(folder / f"{model}.jsonl", lines, lines=True)
    board = OUT / "arena-hard" / "leaderboard" / "arena_hard_leaderboard_20240731.csv"
    board.parent.mkdir(parents=True, exist_ok=True)
    board.write_text("model,score,rating_q025,rating_q975,CI,avg_tokens,date\n"
                     'toy-strong,70.0,60.0,80.0,"(-10.0, +10.0)",300.0,2024-07-31\n'
                     'toy-baseline,50.0,50.0,50.0,"(0.0, 0.0)",300.0,2024-07-31\n'
                     'toy-weak,20.0,10.0,30.0,"(-10.0, +10.0)",300.0,2024-07-31\n', encoding="utf-8")


# -- JudgeBench outputs: an arena_hard judge (two games) and a reward model (one game) on four pairs -------
PAIRS = [("p1", "mmlu-pro-law", "A>B"), ("p2", "livebench-math", "B>A"), ("p3", "livebench-reasoning", "A>B"),
         ("p4", "livecodebench", "B>A")]


def outputs(judge_name: str, model: str, decisions: list[tuple]) -> list[dict]:
    rows = []
    for (pair, source, label), games in zip(PAIRS, decisions, strict=True):
        rows.append({"pair_id": pair, "original_id": pair, "source": source, "question": f"Toy question {pair}?",
                     "response_model": "toy-writer", "response_A": f"Answer A to {pair}.",
                     "response_B": f"Answer B to {pair}.", "label": label, "judge_name": judge_name,
                     "judgments": [None if d == "failed" else
                                   {"judgment": {"judge_model": model, "prompt": "...", "response": "..."},
                                    "decision": d} for d in games]})
    return rows


def judgebench() -> None:
    folder = OUT / "judgebench" / "outputs"
    stem = "dataset=judgebench,response_model=toy-writer"
    # game 2's decision names the swapped order: "B>A" there is a vote for the item's output A
    dump(folder / f"{stem},judge_name=arena_hard,judge_model=toy-judge.jsonl",
         outputs("arena_hard", "toy-judge", [("A>B", "B>A"), ("A=B", "A>B"), ("B>A", None), ("failed", None)]),
         lines=True)
    dump(folder / f"{stem},judge_name=reward_model,judge_model=toy_rm.jsonl",
         outputs("reward_model", "toy/rm", [("A>B",), ("A>B",), ("A>B",), ("B>A",)]), lines=True)


if __name__ == "__main__":
    llmbar()
    alpaca_eval()
    arena_hard()
    judgebench()
