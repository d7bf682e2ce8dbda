"""`judgelab cascade`: the cheap judge answers where it is confident enough, the next where it is not, people
where no judge is; each stage's threshold calibrated on human labels so that the judges' agreement with
people holds with probability 1 - delta (judgelab.evaluate.cascade)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from judgelab.commands._numbers import checked
from judgelab.commands._system_options import Aspect, Field, Human, HumanIds, JudgmentsFiles, _load
from judgelab.errors import ConfigError


def register(app: typer.Typer) -> None:
    app.command("cascade")(cascade)


def cascade(
    data: Annotated[Path, typer.Option("--data", "-d", help="The items (comparisons, relevance items, or scored "
                                                            "items), with the human verdicts of some.")],
    judgments_given: JudgmentsFiles = None,
    configs: Annotated[list[Path] | None, typer.Option(
        "--config", "-c", help="Run the judges instead: a judge config (YAML/JSON) per stage, cheapest first, each "
                               "run only on what the earlier stages left (needs --out: one run folder per stage).")
    ] = None,
    agreement: Annotated[float, typer.Option(
        "--agreement", callback=checked("Agreement"), help="The agreement with people to guarantee on the items the judges answer, in (0.5, 1).")
    ] = 0.85,
    delta: Annotated[float, typer.Option(
        "--delta", callback=checked("Coverage"), help="The chance the guarantee fails (split over the stages), in (0, 1).")] = 0.1,
    confidence: Annotated[str, typer.Option(
        "--confidence", help="Each verdict's confidence: 'auto' (extra.confidence where the judges record it, "
                             "else extra.consistent, else 'agreement'), 'agreement' (the share of the judges run so "
                             "far that agree with it), or a dotted path in each judgment, e.g. extra.confidence (a "
                             "pairwise judge scored by logprobs) or extra.consistent (one judged in both orders).")
    ] = "auto",
    aspect: Aspect = None,
    field: Field = None,
    human: Human = None,
    human_ids: HumanIds = None,
    out: Annotated[Path | None, typer.Option(
        "--out", "-o", help="Write cascade.json, judgments.jsonl (the judges' verdicts where they answer) and "
                            "to_label.txt (the ids left to people, for judgelab annotate --ids).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """A cascade of judges, cheapest first (--judgments in that order), with a guaranteed agreement with people."""
    from judgelab.commands._common import console
    from judgelab.evaluate.cascade import cascade_judgments, stage_confidence

    if bool(judgments_given) == bool(configs):
        raise ConfigError("give each stage's verdicts with --judgments, or its judge with --config (to run them), "
                          "cheapest first")
    if human is None and human_ids is None:
        raise ConfigError("a cascade is calibrated on human labels: give --human or --human-ids")
    if configs:
        if out is None:
            raise ConfigError("--config runs the judges: give --out, the folder for their run folders (one per stage)")
        result, item_ids, kind = _run_live(data, configs, agreement, delta, confidence, aspect, human, human_ids, out)
        return _show(console, result, item_ids, kind, out, as_json, agreement, delta)
    judgments = {str(path): path for path in judgments_given} if len(judgments_given) > 1 else judgments_given[0]
    if out is not None and out.exists() and not out.is_dir():  # before any work: a file is no folder
        raise ConfigError(f"--out {out} is a file; give a folder")
    items, judged, labels, ids, _, aspect = _load(data, judgments, human, human_ids, aspect, field)
    stages = judged if isinstance(judged, dict) else {str(judgments_given[0]): judged}
    how = stage_confidence([j for found in stages.values() for j in found], confidence)
    result, item_ids = cascade_judgments(items, stages, agreement=agreement, delta=delta, confidence=how,
                                         aspect=aspect, human=labels, human_ids=ids)
    _show(console, result, item_ids, items[0].kind, out, as_json, agreement, delta)


def _show(console, result, item_ids: list[str], kind: str, out: Path | None, as_json: bool, agreement: float,
          delta: float) -> None:
    if out is not None:
        _write(out, result, item_ids, kind)
    if as_json:
        typer.echo(json.dumps(result.to_dict(), indent=2))
        return
    total = len(item_ids)
    for stage in result.stages:
        if stage.answered:
            console.print(f"{escape(stage.name)}: answers {stage.answered} of {total} ({stage.answered / total:.0%}) "
                          f"at confidence >= {stage.threshold:.3g}; on {stage.calibration_answered} labelled items "
                          f"it agreed {stage.calibration_agreement:.3f} (at least {stage.agreement_bound:.3f})",
                          soft_wrap=True)
        else:
            console.print(f"{escape(stage.name)}: answers nothing (not even its most confident verdicts show "
                          f"agreement {agreement:g} on the labelled items that reach it)", soft_wrap=True)
    console.print(f"people: {result.to_people} of {total} ({result.to_people / total:.0%}); on the items the "
                  f"judges answer, agreement with people >= {agreement:g} with probability >= {1 - delta:g}",
                  soft_wrap=True)


def _run_live(data: Path, configs: list[Path], agreement: float, delta: float, confidence: str, aspect, human,
              human_ids, out: Path):
    """Each judge in turn, on the items the stages before it left, into OUT/stage-K; each stage calibrated as
    soon as it has run (at delta over all the stages), so the next runs only where it must."""
    import numpy as np

    from judgelab.commands._common import client_from_options, err_console
    from judgelab.commands.judge import judge_config_from_options
    from judgelab.evaluate.cascade import (
        Stage,
        agreement_confidence,
        calibrate,
        check_same_scale,
        field_of,
        human_verdicts,
        stage_confidence,
        verdict_of,
    )
    from judgelab.runner.run import run_judge

    items, _, labels, ids, _, aspect = _load(data, None, human, human_ids, aspect)
    human_values, labelled = human_verdicts(items, labels, ids, aspect)
    judges = [judge_config_from_options(path, None, aspect) for path in configs]  # every config read before a call
    reaching, stages, result = np.ones(len(items), dtype=bool), [], None
    for k, (path, judge) in enumerate(zip(configs, judges, strict=True), start=1):
        if not reaching.any():
            err_console.print(f"stage {k} ({path}): not run, nothing reached it", highlight=False)
            continue
        chosen = [item for item, keep in zip(items, reaching, strict=True) if keep]
        with client_from_options(judge.model, uses_llm=judge.uses_llm) as client:
            run = run_judge(judge, chosen, client, out / f"stage-{k}", data_path=str(data), show_progress=True)
        by = {j.item_id: j for j in run.judgments}
        verdicts = [verdict_of(by.get(item.id)) if keep else None for item, keep in zip(items, reaching, strict=True)]
        check_same_scale(_Named(str(path), judge.name), verdicts, human_values)
        how = stage_confidence(run.judgments, confidence)
        own = (None if how == "agreement" else
               np.array([field_of(by.get(item.id), how) for item in items], dtype=float))
        if own is None:  # the share of the judges run so far, this one among them, that agree with it
            own = agreement_confidence([st.verdicts for st in stages] + [verdicts])[-1]
        stages.append(Stage(judge.name or str(path), verdicts, own))
        result = calibrate(stages, human_values, labelled, agreement=agreement, delta=delta, n_stages=len(configs))
        reaching = result.by < 0
    return result, [item.id for item in items], items[0].kind


class _Named:
    """What check_same_scale names: the stage's config file and judge."""

    def __init__(self, where: str, name: str | None):
        self.where, self.name = where, name or where


def _write(out: Path, result, item_ids: list[str], kind: str) -> None:
    from judgelab.data.io import save_judgments
    from judgelab.data.judgment import Judgment
    from judgelab.files import private_dir, write_atomic

    private_dir(out)
    names = [s.name for s in result.stages]
    judged = [Judgment(item_id=i, judge=f"cascade({', '.join(names)})", **_verdict_fields(v, kind),
                       extra={"stage": names[k]})
              for i, k, v in zip(item_ids, result.by, result.verdict, strict=True) if k >= 0]
    write_atomic(out / "cascade.json", json.dumps(result.to_dict(), indent=2))
    save_judgments(judged, out / "judgments.jsonl")
    write_atomic(out / "to_label.txt", "".join(f"{i}\n" for i, k in zip(item_ids, result.by, strict=True) if k < 0))


def _verdict_fields(value: float, kind: str) -> dict:
    """The stage's verdict as a judgment carries it: a comparison's preference as a/b/tie, a relevance grade as
    its label, a rating as its score."""
    if kind == "pairwise":
        return {"label": {1.0: "a", 0.5: "tie", 0.0: "b"}[value]}
    return {"label": int(value)} if kind == "relevance" else {"score": value}
