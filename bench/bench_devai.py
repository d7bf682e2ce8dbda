"""DevAI: the published Agent-as-a-Judge verdicts and judgelab's requirements judge against the human evaluators.

    .venv/bin/python -m bench.bench_devai --devai DIR              # ~10 s, no model: writes its docs/benchmarks.md section
    .venv/bin/python -m bench.bench_devai --devai DIR --model qwen2.5-coder-1.5b   # and judgelab's own judge (minutes)
    .venv/bin/python -m bench.bench_devai --devai DIR --no-write

DIR is a clone of github.com/metauto-ai/agent-as-a-judge (or a copy of its `benchmark/` folder, with
`reports/aaaj_full_report.html` beside it for the repository's own figures); nothing from it is kept in this
repository. judgelab reads it with `--from devai` (judgelab.data.sources.devai): one item per requirement per
developer agent, the human value the evaluators' consensus, each judge folder a judge.

The measure is the paper's *alignment rate*: the share of requirements on which a judge's verdict
(satisfied / not) equals the human evaluators' consensus, per developer agent; here `meta`'s label accuracy,
with its 95% bootstrap interval (1000 resamples of requirements, seed 0) and Cohen's kappa. The published
figures beside it are the repository's own report (`reports/aaaj_full_report.html`, written by
`scripts/generate_report.py` from the same files: matches over the requirements both judged), read from the
clone. The repository publishes only the gray-box Agent-as-a-Judge verdicts and the human consensus: the
paper's black-box and LLM-as-a-Judge verdicts and the three evaluators' individual verdicts (its "majority
vote" rows) are not in it, so those rows of the paper cannot be recomputed. "All unsatisfied" is the constant
judge: the share of requirements the humans found unmet, the floor any judge must clear.

judgelab's own `kind: requirements` judge (`--model`) needs the developer agent's workspace, and the
repository holds one run's: OpenHands on task 39 (7 requirements); the other 164 runs' items have no output
to judge. It is run black-box on that run (the task, the workspace's file listing and its code and text
files, each cut to 1500 characters, CSV data left out; the 34-step trajectory does not fit the embedded
model's 4096-token window), one requirement per call. The run folder and the completion cache make it
resumable: rerun the same command. Its time was measured with other jobs running on the machine (load
average 6 to 8 on its 2 cores): read it as an upper bound.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

from bench.common import command_line, describe_machine, log, table_head, table_row, write_doc_section

SECTION = "## DevAI: published agent judges and the requirements judge against the humans (`bench/bench_devai.py`)"
RUNS = Path(os.environ.get("JUDGELAB_BENCH_RUNS", Path.home() / ".cache" / "judgelab")) / "bench_devai"
AGENTS = ("MetaGPT", "GPT-Pilot", "OpenHands")
REPORT = Path("reports") / "aaaj_full_report.html"
#: What judgelab's judge is shown of a workspace file: code and text, cut short.
SHOWN_SUFFIXES, SHOWN_CHARS = (".py", ".md", ".txt", ".yaml", ".yml", ".sh"), 1500


def read(folder: Path):
    from judgelab.data.sources import read_source

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the reader's notes are printed below
        return read_source(folder, "devai")


def published(folder: Path) -> dict[str, float]:
    """The repository's report's alignment per developer agent (its chart's data), {} when absent."""
    report = next((p / REPORT for p in (folder, folder.parent) if (p / REPORT).is_file()), None)
    if report is None:
        return {}
    text = report.read_text(encoding="utf-8")
    start = text.index("const alnData = ") + len("const alnData = ")
    chart = json.loads(text[start:text.index(";\n", start)])
    return dict(zip(chart["labels"], chart["datasets"][0]["data"], strict=True))


def agreement(items, judgments, bootstrap: int = 1000) -> dict:
    """meta's label agreement of ``judgments`` with the items' human value."""
    import judgelab as jl

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        found = jl.meta(list(items), list(judgments), aspect="satisfied", levels="dataset",
                        bootstrap=bootstrap, seed=0).to_pandas().set_index("statistic")
    return {name: found.loc[name] for name in ("accuracy", "kappa")}


def percent(row) -> str:
    low, high = row["ci_low"], row["ci_high"]
    interval = "" if low != low else f" [{100 * low:.1f}, {100 * high:.1f}]"  # NaN: no interval
    return f"{100 * row['value']:.1f}{interval}"


def published_rows(source, figures: dict[str, float]) -> list[str]:
    table = table_head(["judge", "developer agent", "requirements", "alignment % (judgelab, 95% CI)", "kappa",
                        "published alignment %"])
    by_agent = {agent: [i for i in source.items if i.system_id == agent and "satisfied" in i.scores]
                for agent in AGENTS}
    for judge in source.judges():
        mine = [j for j in source.judgments if j.judge == judge]
        for agent in (*AGENTS, "all"):
            items = [i for a in AGENTS for i in by_agent[a]] if agent == "all" else by_agent[agent]
            ids = {i.id for i in items}
            found = agreement(items, [j for j in mine if j.item_id in ids])
            table.append(table_row([f"`{judge}`", agent, int(found["accuracy"]["n"]), percent(found["accuracy"]),
                                    f"{found['kappa']['value']:.3f}",
                                    figures.get(agent, "-") if judge == "agent_as_a_judge/gray_box" else "-"]))
    for agent in (*AGENTS, "all"):
        items = [i for a in AGENTS for i in by_agent[a]] if agent == "all" else by_agent[agent]
        unmet = sum(i.scores["satisfied"] == 0 for i in items)
        table.append(table_row(["all unsatisfied (constant)", agent, len(items), f"{100 * unmet / len(items):.1f}",
                                "0", "-"]))
    return table


def shown_workspace(item) -> str:
    """The workspace as judgelab's judge sees it: the file listing, then the code and text files, cut short."""
    listing = item.output.split("\n\n", 1)[0]
    files = [f"=== {c.id} ===\n{c.text[:SHOWN_CHARS]}" + ("\n[...]" if len(c.text) > SHOWN_CHARS else "")
             for c in item.contexts or () if c.id.endswith(SHOWN_SUFFIXES)]
    return "\n\n".join([listing, *files])


def run_judge(source, model: str, threads: int) -> tuple[Path, Path, float]:
    """judgelab's requirements judge on the items whose run the folder holds: (items file, run folder, seconds)."""
    RUNS.mkdir(parents=True, exist_ok=True)
    data = RUNS / "items.jsonl"
    with open(data, "w", encoding="utf-8") as handle:
        for item in source.items:
            if item.contexts and "satisfied" in item.scores:
                record = item.model_copy(update={"output": shown_workspace(item), "trajectory": None, "contexts": None})
                handle.write(record.model_dump_json(exclude_none=True) + "\n")
    out = RUNS / f"requirements-{model}"
    argv = [sys.executable, "-m", "judgelab.cli", "judge", "--data", str(data), "--method", "requirements",
            "--aspect", "satisfied", "--model", model, "--threads", str(threads), "--out", str(out)]
    if not _finished(out, len(data.read_text(encoding="utf-8").splitlines())):  # else read as it is: a resumed run rewrites run.json with 0 calls and 0 seconds
        subprocess.run(argv, check=True)  # an interrupted run folder is resumed
    return data, out, json.loads((out / "run.json").read_text(encoding="utf-8"))["usage"]["wall_s"]


def _finished(out: Path, items: int) -> bool:
    """Whether ``out`` holds a finished run of ``items`` items."""
    run = out / "run.json"
    found = json.loads(run.read_text(encoding="utf-8")) if run.is_file() else {}
    return found.get("status") == "finished" and found.get("items") == items


def judge_rows(source, model: str, threads: int) -> list[str]:
    from judgelab.data.io import load_judgments

    data, out, seconds = run_judge(source, model, threads)
    ids = [json.loads(line)["id"] for line in data.read_text(encoding="utf-8").splitlines()]
    items = [i for i in source.items if i.id in set(ids)]
    ours = list(load_judgments(out / "judgments.jsonl"))
    table = table_head(["judge", "run", "requirements", "verdicts (satisfied / not / none)", "alignment %",
                        "time"])
    for name, judged in ((f"judgelab `requirements`, {model}, black-box", ours),
                         ("`agent_as_a_judge/gray_box` (published)",
                          [j for j in source.judgments if j.judge == "agent_as_a_judge/gray_box" and j.item_id in ids])):
        scores = [j.score for j in judged]
        found = agreement(items, judged, bootstrap=0)
        table.append(table_row([name, "OpenHands, task 39", len(items),
                                f"{scores.count(1.0)} / {scores.count(0.0)} / {scores.count(None)}",
                                f"{100 * found['accuracy']['value']:.1f}",
                                f"{seconds:.0f} s" if judged is ours else "-"]))
    humans = [i.scores["satisfied"] for i in items]
    table.append(table_row(["human consensus", "OpenHands, task 39", len(items),
                            f"{humans.count(1.0)} / {humans.count(0.0)} / 0", "-", "-"]))
    return table


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devai", type=Path, required=True, help="a clone of metauto-ai/agent-as-a-judge")
    parser.add_argument("--model", help="also run judgelab's requirements judge with this model")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)
    source = read(args.devai)
    log(f"{len(source.items)} items, judges {source.judges()}")
    body = [f"`{command_line('bench.bench_devai', argv)}` on {describe_machine()}.", "",
            __doc__.split("\n\n", 2)[2].strip(), "", "What the reader noted: " + "; ".join(source.notes) + ".", "",
            *published_rows(source, published(args.devai))]
    if args.model:
        body += ["", *judge_rows(source, args.model, args.threads)]
    text = "\n".join(body)
    print(text)
    if not args.no_write:
        write_doc_section("bench_devai", text, heading=SECTION)


if __name__ == "__main__":
    main()
