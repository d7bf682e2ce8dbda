"""The other tools whose output files judgelab reads: each ``--from`` name and the module of
``judgelab.data.sources`` that reads it. The one list: the readers' registry, the CLI's help and the
readers' contract test (tests/unit/test_sources_contract.py) all read it. A bottom module (no imports),
so that ``judgelab --help`` names the tools without loading a reader."""

#: ``--from`` names and the module that reads each.
SOURCES = {"inspect": "inspect", "promptfoo": "promptfoo", "lm-eval": "lm_eval", "deepeval": "deepeval",
           "alpaca-eval": "alpaca_eval", "arena-hard": "arena_hard", "mt-bench": "mt_bench", "otel": "otel",
           "mlflow": "mlflow", "langfuse": "langfuse", "devai": "devai", "judgebench": "judgebench"}

__all__ = ["SOURCES"]
