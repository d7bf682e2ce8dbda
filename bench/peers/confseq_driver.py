"""Run confseq (Waudby-Smith and Ramdas's package) on the cases judgelab's betting intervals are checked on.

    <confseq venv>/bin/python bench/peers/confseq_driver.py CASES.json OUT.json

Runs in its own interpreter: confseq needs NumPy < 2 and a C++ build against Boost (see
tests/unit/test_metrics_betting.py for how to make that venv). Each case: ``x`` on [0, 1],
``alpha``, ``N`` (population, or null), ``anytime``, ``c`` (truncation), ``means`` (candidate
means whose martingale is asked for). Writes the confidence sequence's bounds after each
observation (``betting_cs`` with the bets judgelab uses: predictable-mixture rates, fixed-n
unless anytime) and the largest martingale value reached at each candidate mean.
"""

import json
import sys

import numpy as np
from confseq.betting import betting_cs, betting_mart
from confseq.betting_strategies import lambda_predmix_eb


def bets(alpha, n, anytime):
    if anytime:
        return lambda x, m: lambda_predmix_eb(x, alpha=alpha / 2)
    return lambda x, m: lambda_predmix_eb(x, alpha=alpha / 2, fixed_n=n)


def main(cases_path, out_path):
    out = []
    for case in json.load(open(cases_path)):
        x, alpha, population, c = np.array(case["x"]), case["alpha"], case["N"], case["c"]
        rate = bets(alpha, len(x), case["anytime"])
        low, high = betting_cs(x, lambdas_fns_positive=[rate], lambdas_fns_negative=[rate], alpha=alpha,
                               N=population, breaks=1000, running_intersection=True, convex_comb=False, theta=0.5,
                               trunc_scale=c, m_trunc=True)
        largest = [float(np.max(betting_mart(x, m, alpha=alpha, lambdas_fn_positive=rate, lambdas_fn_negative=rate,
                                             N=population, convex_comb=False, theta=0.5, trunc_scale=c, m_trunc=True)))
                   for m in case["means"]]
        out.append({"low": low.tolist(), "high": high.tolist(), "largest_martingale": largest})
    json.dump(out, open(out_path, "w"))


if __name__ == "__main__":
    main(*sys.argv[1:3])
