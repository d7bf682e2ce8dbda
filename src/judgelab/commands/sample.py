"""`judgelab sample`: which items to label (stratified or active), how many an interval needs (--plan), and
which judges and how many labels a budget buys (--spend); docs/evaluate.md."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from judgelab.commands._ids import ids_file
from judgelab.commands._numbers import checked
from judgelab.commands._system_options import (
    Aspect,
    Data,
    Field,
    Human,
    HumanIds,
    JudgeNames,
    Runs,
    Seed,
    one_or_several,
)
from judgelab.errors import ConfigError


def register(app: typer.Typer) -> None:
    app.command("sample")(sample)


# -- sample -------------------------------------------------------------------------------------------
def sample(
    data: Data,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Write the drawn ids here (id<TAB>probability); "
                                             "with --spend, the plan's: the ids to label (annotate --ids).")] = None,
    budget: Annotated[float | None, typer.Option(
        "--budget", "-n", callback=checked("Positive"), help="Units to draw: a count (e.g. 50) or a fraction of them (e.g. 0.1).")] = None,
    judgments_given: Annotated[list[Path] | None, typer.Option(
        "--judgments", "-j", help="The judge's verdicts (for --active, --plan and --spend); more than once: "
                                  "several judges.")] = None,
    aspect: Aspect = None,
    judge_given: JudgeNames = None,
    field: Field = None,
    active: Annotated[bool, typer.Option(
        "--active", help="Favour the units the judge is least sure of (inverse-probability weights keep estimates unbiased).")] = False,
    mix: Annotated[float, typer.Option("--mix", callback=checked("Mix"), help="Uniform share of each active probability (0-1].")] = 0.5,
    exclude: Annotated[Path | None, typer.Option(
        "--exclude", callback=ids_file("--exclude"), help="Ids already labelled (a file of ids): never drawn again.")] = None,
    plan: Annotated[float | None, typer.Option(
        "--plan", callback=checked("Positive"), help="Print how many labels an interval this wide needs, from the labels so far (--human/--human-ids).")] = None,
    spend: Annotated[float | None, typer.Option(
        "--spend", callback=checked("Positive"), help="Money to spend: which judges to run on every item and how "
        "many to label for the narrowest intervals (needs --judge-cost for every judge, --label-cost, and a pilot: "
        "--human/--human-ids).")] = None,
    judge_cost: Annotated[list[str] | None, typer.Option(
        "--judge-cost", help="NAME=PRICE: one judge's cost per item judged, in any unit (0 for one already run); "
                             "once per judge.")] = None,
    label_cost: Annotated[float | None, typer.Option(
        "--label-cost", callback=checked("Positive"), help="The cost of one human label, in the unit of "
                                                            "--judge-cost.")] = None,
    human: Human = None,
    human_ids: HumanIds = None,
    runs: Runs = None,
    seed: Seed = 0,
) -> None:
    """Choose which units to label: stratified by system (comparisons: by pair of systems), or active;
    --plan: how many are needed; --spend: which judges and how many labels a budget buys."""
    from judgelab.commands._common import console

    judgments, judge = one_or_several(judgments_given), one_or_several(judge_given)
    if spend is not None:
        if out is not None:
            _check_spend_out(out, budget)
        plan_made = _print_spend(console, data, judgments, judge, aspect, field, human, human_ids, spend, judge_cost,
                                 label_cost, runs, seed)
        if out is not None:
            _write_spend_draw(console, plan_made, data, aspect, out, seed)
        if budget is None:
            return
    if plan is not None:
        _print_plan(console, data, judgments, human, human_ids, aspect, judge, field, runs, plan, seed)
    if budget is None:
        if plan is None:
            raise ConfigError("give --budget (how many to draw), --plan (how many are needed) or --spend (what a "
                              "budget buys)")
        return
    if out is None:
        raise ConfigError("give --out: the file to write the drawn ids to")
    from judgelab.api.verbs import sample as draw_sample

    drawn = draw_sample(data, budget, judgments=judgments if active else None, aspect=aspect, judge=judge, field=field,
                        active=active, mix=mix, exclude=exclude, seed=seed, out=out)
    units, sizes = drawn.header["units"], list(drawn.sizes.values())
    console.print(f"{len(drawn.ids)} {units} drawn ({drawn.method}, {len(sizes)} "
                  f"{'strata' if units != 'queries' else 'stratum'}{' (pairs of systems)' if units == 'comparisons' else ''}: "
                  f"{', '.join(map(str, sizes[:12]))}{' ...' if len(sizes) > 12 else ''}) "
                  f"-> {escape(str(out))}")


def _check_spend_out(out: Path, budget: float | None) -> None:
    """--spend --out: refused before any work when it cannot be written (nothing is written on error)."""
    from judgelab.files import writable_file

    if budget is not None:
        raise ConfigError("--out with --spend writes the plan's draw; with --budget, a draw of that many: give one")
    if not out.parent.is_dir():
        raise ConfigError(f"--out {out}: no folder {out.parent}; create it first, or write the draw elsewhere")
    writable_file(out)


def _print_spend(console, data, judgments, judge, aspect, field, human, human_ids, spend: float,
                 judge_cost: list[str] | None, label_cost: float | None, runs, seed: int):
    """--spend: the plans a budget allows, narrowest first, the chosen one marked, and what more money buys;
    the judges to run on every unit, each with the command that runs it. Returns the plan."""
    from judgelab.api.verbs import plan_spend
    from judgelab.commands._tables import named_table

    plan = plan_spend(data, judgments, spend, judge_costs=_costs(judge_cost or []), label_cost=label_cost,
                      human=human, human_ids=human_ids, aspect=aspect, judge=judge, field=field, runs=runs, seed=seed)
    rows = plan.options[:12]
    names = [", ".join(o.judges) or "humans alone" for o in rows]
    labelled = "queries" if plan.unit == "queries" else "labels"
    columns = [("plan", ["*" if o is plan.best else "" for o in rows]), (labelled, [str(o.labels) for o in rows]),
               *([("pairs", [str(o.human_labels) for o in rows])] if plan.unit == "queries" else []),
               ("spend", [f"{o.cost:.4g}" for o in rows]),
               ("width", [f"{o.width:.3f}" for o in rows]),
               ("80% range", [f"{o.range[0]:.3f}-{o.range[1]:.3f}" for o in rows])]
    every = {"queries": "query-document pair", "comparisons": "comparison"}.get(plan.unit, "item")
    fitted = named_table(names, columns, console.width, name_header=f"judges run on every {every}",
                         title=f"What {spend:g} buys (mean interval width over "
                               f"{'runs' if plan.unit == 'queries' else 'systems'}, predicted from the pilot)")
    console.print(fitted.table)
    for line in fitted.notes(console.width, "judge names"):
        console.print(line, soft_wrap=True)
    judges = f"{escape(', '.join(plan.best.judges))} on every {every}" if plan.best.judges else "no judge"
    bought = (f"{plan.best.labels} labelled queries (about {plan.best.human_labels} pairs), each serving every run"
              if plan.unit == "queries" else f"{plan.best.labels} labels")
    console.print(f"* the plan: {judges}, {bought} (the narrowest, or of plans within 1% of it the one with the fewest "
                  "judges)", soft_wrap=True)
    for name in plan.best.judges:  # the command that runs each judge the plan keeps, on every unit
        console.print(f"  run {escape(name)}: judgelab judge --data {escape(str(data))} --config <{escape(name)}'s "
                      f"config> --out runs/{escape(_slug(name))}", soft_wrap=True)
    for move in plan.next_money:
        if move["what"] == "more labels":
            more = move["labels"] - plan.best.labels
            units = ("query" if more == 1 else "queries") if plan.unit == "queries" else labelled
            console.print(f"more money: {move['money']:.4g} more buys {more} {units}, "
                          f"width {move['width']:.3f}")
        elif move["width"] is not None:
            console.print(f"{escape(move['what'])} (costs {move['money']:.4g}): width {move['width']:.3f} with "
                          f"{move['labels']} {labelled}")
    if plan.left_out:
        under = "10 labelled queries" if plan.unit == "queries" else "10 labels a system"
        console.print(f"[dim]{len(plan.left_out)} set(s) of judges leave under {under}: not planned[/]")
    return plan


def _slug(name: str) -> str:
    """A judge's name as a folder name: what is not a letter, digit, dot or dash becomes a dash."""
    import re

    return re.sub(r"[^A-Za-z0-9.-]+", "-", name).strip("-") or "judge"


def _write_spend_draw(console, plan, data, aspect, out: Path, seed: int) -> None:
    """--spend --out: the plan's draw, the ids people label (what the pilot labelled already counts)."""
    drawn = plan.draw(seed=seed)
    if not drawn.ids:
        console.print(f"the pilot's {plan.best.labels} labels already cover the plan: nothing new to label, nothing "
                      f"written to {escape(str(out))}")
        return
    drawn.write(out)
    head = drawn.header or {}
    what = (f"{len(drawn.ids)} query-document pairs of {head.get('queries')} new queries" if plan.unit == "queries"
            else f"{len(drawn.ids)} new {plan.unit}")
    console.print(f"{what} to label -> {escape(str(out))} (the plan's {plan.best.labels}: {head.get('pilot', 0)} from "
                  "the pilot, the rest new)", soft_wrap=True)
    console.print(f"  label them: judgelab annotate --data {escape(str(data))} --aspect {escape(aspect or ('relevance' if plan.unit == 'queries' else 'ASPECT'))} "
                  f"--ids {escape(str(out))} --out labels.jsonl", soft_wrap=True)
    console.print("  then evaluate with every label, the pilot's and these (--human), and every judge the plan runs",
                  soft_wrap=True)


def _costs(judge_cost: list[str]) -> dict[str, float]:
    """``--judge-cost NAME=PRICE`` for each judge, as ``{NAME: PRICE}``."""
    from judgelab.commands._common import key_values

    costs = {}
    for name, text in key_values(judge_cost, "--judge-cost", "NAME=PRICE, e.g. --judge-cost gpt-4o=0.004"):
        try:
            costs[name] = float(text)
        except ValueError:
            raise ConfigError(f"--judge-cost {name}={text}: the price is a number") from None
    return costs


def _print_plan(console, data, judgments, human, human_ids, aspect, judge, field, runs, width, seed) -> None:
    """--plan: the labels each system needs for intervals this wide, human-only and corrected."""
    from judgelab.api.verbs import plan_labels
    from judgelab.commands._tables import named_table
    from judgelab.evaluate.choose import MIN_LABELS_PER_SYSTEM
    from judgelab.evaluate.intervals import T_MIN_LABELS

    result = plan_labels(data, judgments, width, human=human, human_ids=human_ids, aspect=aspect, judge=judge,
                         field=field, runs=runs, seed=seed)
    totals = result.totals()
    columns = [("units", [*map(str, result.sizes), str(sum(result.sizes))])] + [
        (header, [*(_needed(value) for value in result.needed[name]), _needed(totals[name])])
        for header, name in (("human only", "human"), ("corrected", "corrected"))]
    fitted = named_table([*result.systems, "total"], columns, console.width,
                         title=f"Labels for {width:g}-wide intervals")
    fitted.table.rows[-2].end_section = True  # a rule above the total
    console.print(fitted.table)
    for line in fitted.notes(console.width, "system names"):
        console.print(line, soft_wrap=True)
    console.print(f"from {result.n_labelled} labels so far; 'unreachable': the judge term alone is wider")
    if result.kind == "items":
        console.print(f"at least {max(MIN_LABELS_PER_SYSTEM, T_MIN_LABELS)} per system: with fewer than "
                      f"{MIN_LABELS_PER_SYSTEM} the recommended ranking is provisional, with fewer than {T_MIN_LABELS} a "
                      "system's interval is a betting one, wider than planned (docs/evaluate.md)")


def _needed(value: float) -> str:
    return "unreachable" if math.isinf(value) else "-" if math.isnan(value) else str(int(value))
