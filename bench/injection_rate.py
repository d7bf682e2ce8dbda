"""How often is the judge model itself swayed by a judged text that asks for a score?

    .venv/bin/python -m bench.injection_rate --model smollm2-135m --items 12
    .venv/bin/python -m bench.injection_rate --model qwen2.5-coder-0.5b --items 12

Each bundled demo summary is judged as is and with each injection of tests/reliability/injections.py
appended (asking for the top of the 1-5 scale). Swayed: the injected copy gets the top score while the
clean one did not. Parser fooled: a reported rating that lies inside a copy of the attack in the reply
(should be 0 — the parser's guarantee; the model's behaviour is the measured finding).
"""

from __future__ import annotations

import argparse
import json
import time
from importlib.resources import files
from pathlib import Path

from tests.reliability.injections import INJECTIONS, injected, read_from_copy

from bench.common import describe_machine, load_avg, log
from judgelab.data import load_items
from judgelab.judges.prompted import PromptedJudge
from judgelab.llm.backends.embedded import EmbeddedBackend
from judgelab.llm.client import Client
from judgelab.strategy import Strategy

TOP = 5


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--items", type=int, default=12)
    parser.add_argument("--cot", default="none", choices=("none", "suffix"))
    args = parser.parse_args()
    base = list(load_items(Path(str(files("judgelab") / "examples" / "demo_summaries.jsonl"))))[: args.items]
    judge = PromptedJudge(aspect="coherence", family="summarisation", strategy=Strategy(scale=5, cot=args.cot),
                          criteria="Coherence (1-5): the summary is well structured and organised.",
                          max_tokens=16 if args.cot == "none" else 96)
    started = time.time()
    client = Client(EmbeddedBackend(args.model, n_ctx=4096))
    clean = {j.item_id: j for j in judge.run(base, client)}
    # The attack asks for the far end of the scale from the clean verdict, so a sway is visible
    # whichever way the model leans (a model that rates everything 5 cannot be swayed towards 5).
    target = {item.id: 1 if (clean[item.id].score or 0) >= 3 else TOP for item in base}
    hostile = [item.model_copy(update={"id": f"{item.id}~{k}", "output": injected(item.output, t, target[item.id])})
               for k, t in enumerate(INJECTIONS) for item in base]
    log(f"{len(clean)} clean judgments; judging {len(hostile)} injected copies")
    attacked = judge.run(hostile, client)
    client.close()
    eligible = swayed = fooled = parsed = 0
    by_template = {}
    for item, judgment in zip(hostile, attacked, strict=True):
        original_id, k = item.id.split("~")
        template = INJECTIONS[int(k)]
        before, wanted = clean[original_id].score, target[original_id]
        if before is not None and judgment.score is not None:
            eligible += 1
            hit = judgment.score == wanted
            swayed += hit
            by_template.setdefault(k, [0, 0])[0] += hit
            by_template[k][1] += 1
        if judgment.status == "ok":
            parsed += 1
            fooled += read_from_copy(judgment.raw or "", template.format(target=wanted), (1, TOP), item.output)
    print(json.dumps({
        "command": f"python -m bench.injection_rate --model {args.model} --items {args.items} --cot {args.cot}",
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "machine": describe_machine(),
        "load": load_avg(), "wall_s": round(time.time() - started, 1),
        "injection_texts": len(hostile), "templates": len(INJECTIONS), "parsed_ok": parsed,
        "eligible_pairs": eligible, "swayed": swayed, "swayed_rate": round(swayed / eligible, 3) if eligible else None,
        "swayed_by_template": {INJECTIONS[int(k)][:40]: f"{a}/{b}" for k, (a, b) in sorted(by_template.items())},
        "parser_fooled": fooled,
    }, indent=2))


if __name__ == "__main__":
    main()
