"""Real DeepEval test runs, offline: a deterministic stand-in LLM grades with GEval, a rule metric scores too.

DEEPEVAL_RESULTS_FOLDER makes deepeval's evaluate() save each run as test_run_<time>.json."""
import json
import re
import sys

from deepeval import evaluate
from deepeval.metrics import BaseMetric, GEval
from deepeval.models import DeepEvalBaseLLM
from deepeval.test_case import LLMTestCase, LLMTestCaseParams

QUESTIONS = [("What is 2 + 2?", "4"), ("What is the capital of France?", "Paris"),
             ("How many legs has a spider?", "8"), ("Which planet is known as the red planet?", "Mars")]
ANSWERS = {"careful": ["4", "Paris", "8", "Mars"], "sloppy": ["5", "Paris", "6", "Venus"]}


class ReferenceGrader(DeepEvalBaseLLM):
    """Grades 10 when the expected output appears in the actual output, else 2 (a stand-in for an LLM)."""

    def load_model(self):
        return self

    def _verdict(self, prompt: str) -> dict:
        actual = re.search(r"Actual Output:\s*\n?(.*?)\n", prompt + "\n", re.S)
        expected = re.search(r"Expected Output:\s*\n?(.*?)\n", prompt + "\n", re.S)
        hit = bool(actual and expected and expected.group(1).strip() and expected.group(1).strip() in actual.group(1))
        return {"score": 10 if hit else 2, "reason": "the expected answer is there" if hit else "it is not"}

    def generate(self, prompt: str, schema=None):
        verdict = self._verdict(prompt)
        return schema(**verdict) if schema is not None else json.dumps(verdict)

    async def a_generate(self, prompt: str, schema=None):
        return self.generate(prompt, schema)

    def get_model_name(self):
        return "reference-grader"


class ExactMatch(BaseMetric):
    def __init__(self, threshold: float = 1.0):
        self.threshold = threshold

    def measure(self, test_case, *args, **kwargs):
        self.score = float(test_case.actual_output.strip() == test_case.expected_output.strip())
        self.reason = "exact match" if self.score else "differs from the expected output"
        self.success = self.score >= self.threshold
        return self.score

    async def a_measure(self, test_case, *args, **kwargs):
        return self.measure(test_case)

    def is_successful(self):
        return self.success

    @property
    def __name__(self):
        return "Exact Match"


class Flaky(ExactMatch):
    """A metric whose check fails on one test case (to record deepeval's metric errors)."""

    def measure(self, test_case, *args, **kwargs):
        if "spider" in test_case.input:
            raise RuntimeError("the checker crashed")
        return super().measure(test_case)

    @property
    def __name__(self):
        return "Flaky Check"


model = sys.argv[1]
errors = len(sys.argv) > 2 and sys.argv[2] == "errors"
cases = [LLMTestCase(input=q, actual_output=a, expected_output=t)
         for (q, t), a in zip(QUESTIONS, ANSWERS[model], strict=True)]
correctness = GEval(name="Correctness", evaluation_steps=["Check whether the actual output states the expected output."],
                    evaluation_params=[LLMTestCaseParams.INPUT, LLMTestCaseParams.ACTUAL_OUTPUT,
                                       LLMTestCaseParams.EXPECTED_OUTPUT],
                    model=ReferenceGrader(), async_mode=False)
if errors:  # deepeval keeps the run, with the metric's error in place of a score
    from deepeval.evaluate import ErrorConfig

    evaluate(cases, metrics=[ExactMatch(), Flaky()], hyperparameters={"model": model},
             error_config=ErrorConfig(ignore_errors=True))
else:
    evaluate(cases, metrics=[correctness, ExactMatch()], hyperparameters={"model": model})
