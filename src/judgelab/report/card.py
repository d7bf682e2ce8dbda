"""A judge card on disk (``judgelab meta --card DIR``; docs/cards.md): ``card.json``, what ``compare
--require-card`` reads, and ``card.html``, the same for people.

    identity    the judge's name, and from its run folder (when the judgments came from one) the model, the
                backend and the digest of its config: a gate refuses a card of another judge
    agreement   labels it rests on, class recalls with exact lower bounds and Jeffreys intervals, TPR/TNR
                with two classes, Cohen's kappa and its base rate (judgelab.metrics.card)
    meta        the dataset-level correlations meta computed, with their intervals
    biases      what ``judgelab audit --card DIR`` measured of the same judge (position, ties, verbosity,
                self-preference, probes), each with its interval: for people to read; no floor gates on it
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from judgelab.data.io import iter_jsonl
from judgelab.data.item import Item
from judgelab.data.judgment import Judgment
from judgelab.errors import ConfigError, DataError
from judgelab.files import read_json, read_run_record, source_run, staged_folder, write_atomic
from judgelab.metrics.align import align
from judgelab.metrics.card import CARD_VERSION, agreement

CARD_FILES = ("card.json", "card.html")


def build_card(items: Iterable[Item], judgments: Iterable[Judgment], *, aspect: str | None = None,
               judge: str | None = None, confidence: float = 0.95, judgments_file: str | Path | None = None,
               meta: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The card of the judge whose ``judgments`` these are, on the labelled ``items``."""
    aligned = align(items, judgments, aspect=aspect, judge=judge)
    names = sorted({j.judge for j in aligned.judgments if j.judge})
    run = source_run(judgments_file)
    identity = {"judge": judge or (names[0] if len(names) == 1 else None), "judge_digest": run.get("judge_digest"),
                "model": run.get("model"), "backend": run.get("backend"),
                "judgments": None if judgments_file is None else str(Path(judgments_file).resolve())}
    found = agreement(aligned.human, aligned.judge, confidence=confidence)
    card = {"judgelab_card": CARD_VERSION, "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "identity": identity, "kind": aligned.kind, "aspect": aligned.aspect, "agreement": found.to_dict(),
            "coverage": aligned.coverage.to_dict()}
    if meta is not None:
        card["meta"] = {"dataset": meta.get("dataset"), "agreement": meta.get("agreement"),
                        "pairwise": meta.get("pairwise")}
    return card


def write_card(out_dir: str | Path, card: Mapping[str, Any]) -> Path:
    """``out_dir``/card.json and card.html (the folder replaced whole); returns card.json's path."""
    out_dir = Path(out_dir)
    if out_dir.exists() and (not out_dir.is_dir() or any(p.name not in CARD_FILES for p in out_dir.iterdir())):
        raise ConfigError(f"{out_dir} is not empty nor an earlier card folder: choose a new folder for the card")
    with staged_folder(out_dir) as folder:
        write_atomic(folder / "card.json", json.dumps(card, indent=2, ensure_ascii=False))
        write_atomic(folder / "card.html", card_page(card))
    return out_dir / "card.json"


def read_card(path: str | Path) -> dict[str, Any]:
    """A card.json (or the folder holding one), checked to be a judgelab card."""
    path = Path(path)
    if path.is_dir():
        path = path / "card.json"
    card = read_json(path)  # bounded, bad JSON named with its line
    if card is None:
        raise DataError("no such file: write a judge card with judgelab meta --card", path)
    if not isinstance(card, dict) or card.get("judgelab_card") != CARD_VERSION or "agreement" not in card:
        raise DataError(f"not a judge card of this judgelab (judgelab_card: {CARD_VERSION}); write one with "
                        "judgelab meta --card", path)
    return card


def card_page(card: Mapping[str, Any]) -> str:
    """card.html: one self-contained page, every value escaped."""
    who = card["identity"]
    return ("<!doctype html><html><head><meta charset='utf-8'><title>judge card</title><style>"
            "body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}"
            "table{border-collapse:collapse;margin:1rem 0}td,th{border:1px solid #ccc;padding:.3rem .6rem;"
            "text-align:left}</style></head><body>"
            f"<h1>Judge card: {_e(who.get('judge') or 'unnamed judge')}</h1>" + card_section(card, heading=2)
            + "</body></html>")


def card_section(card: Mapping[str, Any], *, heading: int = 3) -> str:
    """The card's content as an HTML fragment (headings at ``heading``), every value escaped: card.html's body,
    and the "Judge card" section of a run's report.html."""
    found, who = card["agreement"], card["identity"]
    rows = "".join(
        f"<tr><td>{_e(c['label'])}</td><td>{c['n']}</td><td>{c['hits']}</td><td>{_f(c['recall'])}</td>"
        f"<td>{_f(c['lower_bound'])}</td><td>{_f(c['jeffreys'][0])} - {_f(c['jeffreys'][1])}</td></tr>"
        for c in found.get("classes") or [])
    table = (f"<table><tr><th>human class</th><th>labels</th><th>judge agreed</th><th>recall</th>"
             f"<th>exact lower bound ({found['confidence']:.0%})</th><th>Jeffreys interval</th></tr>{rows}</table>"
             if rows else f"<p>{_e('; '.join(found.get('notes') or ['no classes']))}</p>")
    facts = [("judge", who.get("judge")), ("model", who.get("model")), ("backend", who.get("backend")),
             ("config digest", who.get("judge_digest")), ("aspect", card.get("aspect")), ("items", card.get("kind")),
             ("labels", found.get("labels")), ("Cohen's kappa", _f(found.get("kappa"))),
             ("base rate (largest class)", _f(found.get("base_rate"))), ("written", card.get("created"))]
    listed = "".join(f"<tr><th>{_e(k)}</th><td>{_e(v if v is not None else '-')}</td></tr>" for k, v in facts)
    return (f"<table>{listed}</table><h{heading}>Agreement with people, class by class</h{heading}>" + table +
            "<p>A gate (<code>judgelab compare --require-card</code>) certifies the judge when each floor it sets "
            "is met by the exact lower bound, not the recall.</p>" + _biases_section(card.get("biases"), heading))


def _biases_section(biases: Mapping[str, Any] | None, heading: int) -> str:
    """The audit's rows (statistic, value, interval, n, how to read it) and the probes' flip rates."""
    if not biases:
        return (f"<h{heading}>Biases</h{heading}><p>Not measured: <code>judgelab audit ... --card DIR</code> adds the judge's "
                "position, verbosity and self-preference figures here.</p>")
    audit, probes = biases.get("audit") or {}, biases.get("probes") or {}
    rows = "".join(f"<tr><td>{_e(r['section'])}: {_e(r['name'])}</td><td>{_f(r.get('value'))}</td>"
                   f"<td>{_ci(r.get('ci'))}</td><td>{_e(r.get('n'))}</td><td>{_e(r.get('reading') or '')}</td></tr>"
                   for r in audit.get("rows") or [])
    for name, found in probes.items():
        flips = found.get("flip_rate") or {}
        rows += (f"<tr><td>probe {_e(name)}: flip rate</td><td>{_f(flips.get('value'))}</td><td>{_ci(flips.get('ci'))}"
                 f"</td><td>{_e(flips.get('n', ''))}</td><td>share of pairs whose verdict the probe's change flips"
                 "</td></tr>")
    level = audit.get("confidence") or biases.get("confidence") or 0.95
    missing = "".join(f"<li>{_e(line)}</li>" for line in audit.get("not_measured") or [])
    return (f"<h{heading}>Biases (judgelab audit, written {_e(biases.get('written', '-'))})</h{heading}>"
            f"<table><tr><th>statistic</th><th>value</th><th>{level:.0%} interval</th><th>n</th><th>reading</th></tr>"
            f"{rows}</table>" + (f"<p>Not measured:</p><ul>{missing}</ul>" if missing else ""))


def _ci(ci: Any) -> str:
    return "-" if not ci or any(v is None for v in ci) else f"{ci[0]:.3f} - {ci[1]:.3f}"


def _e(value: Any) -> str:
    return html.escape(str(value))


def _f(value: Any) -> str:
    return "-" if value is None else f"{value:.3f}"





def require_card(path: str | Path, floors: str | Mapping[str, float], *, judge: str | None = None,
                 judgments_file: str | Path | None = None) -> dict[str, Any]:
    """Refuse to gate (a ConfigError: exit 2) unless the card at ``path`` is this judge's and meets every floor:
    the card's judge name must be the judge gated on (when both are known), its config digest the digest of the
    run the judgments come from (when both are known). Returns what was checked, for the gate's record."""
    from judgelab.metrics.card import Agreement, ClassRecall, certify, parse_floors

    wanted = parse_floors(floors)
    card = read_card(path)
    _check_same_judge(card, path, judge, judgments_file)
    found = card["agreement"]
    try:  # a card edited by hand: its fields as meta --card writes them, else named
        classes = None if found.get("classes") is None else [
            ClassRecall(str(c["label"]), int(c["n"]), int(c["hits"]), float(c["lower_bound"]),
                        (float(c["jeffreys"][0]), float(c["jeffreys"][1]))) for c in found["classes"]]
        kappa, base = (None if found.get(k) is None else float(found[k]) for k in ("kappa", "base_rate"))
        agreed = Agreement(float(found["confidence"]), int(found["labels"]), classes, kappa, base)
    except (AttributeError, KeyError, IndexError, TypeError, ValueError) as err:
        raise DataError(f"not a judge card as judgelab meta --card writes it (agreement: {err!r})", path) from None
    verdict = certify(agreed, wanted)
    if not verdict.certified:
        plan = "; ".join(f"class {label!r}: " + ("none would (its recall is not above the floor)" if more is None
                                                  else f"{more:,} labels") for label, more in verdict.plan.items())
        raise ConfigError(f"the judge is not certified to gate by {path}: {'; '.join(verdict.missed)}"
                          + (f". Labels that would certify it if its recall held: {plan}" if plan else ""))
    return {"card": str(path), "floors": wanted, "certified": True}


def _check_same_judge(card: Mapping[str, Any], path: str | Path, judge: str | None,
                      judgments_file: str | Path | None) -> None:
    """The card must be this judge's: its name (when both are known) and its config's digest (when both are)."""
    who = card.get("identity") or {}
    run = source_run(judgments_file)
    if judge and who.get("judge") and judge != who["judge"]:
        raise ConfigError(f"the card at {path} is the card of judge {who['judge']!r}, not of {judge!r}: write this "
                          "judge's card with judgelab meta --card")
    if run.get("judge_digest") and who.get("judge_digest") and run["judge_digest"] != who["judge_digest"]:
        raise ConfigError(f"the card at {path} was written for a judge config with digest {who['judge_digest']}; "
                          f"these judgments come from one with digest {run['judge_digest']} (the prompt or settings "
                          "changed since): write a new card")


def add_biases(path: str | Path, biases: Mapping[str, Any], *, judge: str | None = None,
               judgments_file: str | Path | None = None) -> Path:
    """The card at ``path`` (written by ``judgelab meta --card``) with ``biases`` (``{"audit": AuditReport's
    dict, "probes": {name: ProbeResult's dict}}``) in its ``biases`` section, replacing an earlier one; the
    rest kept. Refused when the card is another judge's (as the gate refuses it). Returns card.json's path."""
    card = read_card(path)
    _check_same_judge(card, path, judge, judgments_file)
    card["biases"] = {"written": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                      **{k: v for k, v in biases.items() if v}}
    folder = Path(path)
    return write_card(folder if folder.is_dir() else folder.parent, card)


def attach_card(run_dir: str | Path, path: str | Path) -> Path:
    """Copy the card at ``path`` into the run folder ``run_dir`` (as RUN/card.json), whose report.html then
    shows it; refused when the card is another judge's (the run's judge name or config digest differs)."""
    card = read_card(path)
    if read_run_record(run_dir) is None:
        raise ConfigError(f"{run_dir} is not a run folder: no run.json")
    _check_same_judge(card, path, _run_judge(Path(run_dir)), run_dir)
    return write_atomic(Path(run_dir) / "card.json", json.dumps(card, indent=2, ensure_ascii=False))


def card_mismatch(run_dir: str | Path, card: Mapping[str, Any], judges: set[str | None]) -> str | None:
    """Why the card a run folder holds is not its judge's any more (a rerun with another config), or None.
    ``judges``: the judge names of the folder's verdicts (the report's scan of judgments.jsonl collects them)."""
    try:
        _check_same_judge(card, Path(run_dir) / "card.json", _one_judge(judges), run_dir)
    except ConfigError as exc:
        return str(exc)
    return None


def _run_judge(run_dir: Path) -> str | None:
    """The one judge whose verdicts the run folder keeps (None for none or several)."""
    path = run_dir / "judgments.jsonl"
    return _one_judge({row.get("judge") for _, row in iter_jsonl(path)} if path.exists() else set())


def _one_judge(names: set[str | None]) -> str | None:
    return next(iter(names)) if len(names) == 1 else None


def run_card(run_dir: str | Path) -> dict[str, Any] | None:
    """The card a run folder holds (RUN/card.json: ``judgelab report --card`` or ``meta --out --card`` put it
    there), or None."""
    path = Path(run_dir) / "card.json"
    return read_card(path) if path.exists() else None


__all__ = ["CARD_FILES", "add_biases", "attach_card", "build_card", "card_mismatch", "card_page", "card_section", "read_card",
           "require_card", "run_card", "write_card"]
