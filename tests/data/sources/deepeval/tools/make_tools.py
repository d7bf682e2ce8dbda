"""Real DeepEval test runs of two tool-calling agents, scored by DeepEval's own ToolCorrectnessMetric, offline
(deepeval 4.3.1 from PyPI in its own venv; no LLM is called):

  DEEPEVAL_RESULTS_FOLDER=<this folder> DEEPEVAL_TELEMETRY_OPT_OUT=1 python make_tools.py

(run from a scratch folder: deepeval may keep a .deepeval/ cache in the working directory). It writes two
``test_run_<time>.json`` files, one per agent (``hyperparameters.model`` careful-agent, hasty-agent), the same
six tasks each, with ``tools_called`` and ``expected_tools``: an exact match, a missing expected call, an extra
call, a wrong argument, calls out of order, no call at all, and two calls of one tool with different arguments.

ToolCorrectnessMetric scores from the calls alone (deepeval/metrics/tool_correctness/tool_correctness.py,
``_calculate_score``); only ``available_tools`` (not given here) would ask a model. The metric still builds a
model when constructed (OpenAI's without one given), so it gets ``NoModel``, which raises if it is ever asked.
Four configurations, each its own metric name (a subclass that renames it; the scoring is DeepEval's):

* ``Tool Correctness``: the default (names, any order);
* ``Tool Correctness [arguments]``: ``evaluation_params=[ToolCallParams.INPUT_PARAMETERS]``;
* ``Tool Correctness [ordering]``: ``should_consider_ordering=True``;
* ``Tool Correctness [exact]``: ``should_exact_match=True``.
"""
import time

from deepeval import evaluate
from deepeval.evaluate import AsyncConfig, DisplayConfig
from deepeval.metrics import ToolCorrectnessMetric
from deepeval.models import DeepEvalBaseLLM
from deepeval.test_case import LLMTestCase, ToolCall, ToolCallParams


class NoModel(DeepEvalBaseLLM):
    """A model that must not be asked: ToolCorrectness without available_tools scores without one."""

    def load_model(self):
        return self

    def generate(self, prompt: str, schema=None):
        raise RuntimeError("ToolCorrectness asked a model")

    async def a_generate(self, prompt: str, schema=None):
        return self.generate(prompt, schema)

    def get_model_name(self):
        return "no-model"


def named(label: str, **options) -> ToolCorrectnessMetric:
    """DeepEval's ToolCorrectnessMetric with ``options``, named ``Tool Correctness [label]`` in the file."""

    class Named(ToolCorrectnessMetric):
        @property
        def __name__(self):
            return f"Tool Correctness [{label}]" if label else "Tool Correctness"

    return Named(model=NoModel(), **options)


def call(tool: str, output=None, /, **arguments) -> ToolCall:
    return ToolCall(name=tool, input_parameters=arguments, output=output)


OSLO = call("geocode", {"lat": 59.91, "lon": 10.75}, city="Oslo")
OSLO_WEATHER = call("forecast", "Rain, 9 C", lat=59.91, lon=10.75, day="tomorrow")
FLIGHTS = call("search_flights", ["AZ123", "FR456"], origin="CDG", destination="FCO", date="2026-05-03")
BOOK = call("book_flight", "booked AZ123", flight="AZ123")
RATE = call("get_rate", 0.92, base="USD", quote="EUR")
TIMES = call("calculator", 92.0, expression="100*0.92")
CONTACT = call("find_contact", "ana@example.org", name="Ana")
EMAIL = call("send_email", "sent", to="ana@example.org", subject="Report")
PERCENT = call("calculator", 40.8, expression="0.17*240")
BERGEN = call("forecast", "Showers, 11 C", city="Bergen", day="today")
OSLO_TODAY = call("forecast", "Cloudy, 12 C", city="Oslo", day="today")

#: (input, expected tools, {agent: (tools called, actual output)})
TASKS = [
    ("What will the weather be in Oslo tomorrow?", [OSLO, OSLO_WEATHER],
     {"careful-agent": ([OSLO, OSLO_WEATHER], "Rain and 9 C tomorrow in Oslo."),
      "hasty-agent": ([call("forecast", "Rain, 9 C", lat=59.9, lon=10.7, day="tomorrow")],  # no geocode
                      "Rain, 9 C.")}),
    ("Book me a flight from Paris to Rome on 3 May 2026.", [FLIGHTS, BOOK],
     {"careful-agent": ([FLIGHTS, BOOK], "Booked AZ123, Paris to Rome on 3 May."),
      "hasty-agent": ([BOOK, FLIGHTS], "Booked AZ123.")}),  # booked before searching
    ("How much is 100 USD in EUR?", [RATE, TIMES],
     {"careful-agent": ([RATE, TIMES], "100 USD is 92 EUR."),
      "hasty-agent": ([call("get_rate", 0.79, base="USD", quote="GBP"),  # the wrong currency
                       call("calculator", 79.0, expression="100*0.79")], "100 USD is 79 EUR.")}),
    ("Email the quarterly report to Ana.", [CONTACT, EMAIL],
     {"careful-agent": ([CONTACT, call("spell_check", "no errors", text="Report"), EMAIL],  # an extra call
                        "Sent the report to Ana."),
      "hasty-agent": ([call("web_search", "Ana Lima", query="Ana email"),  # an extra call, the wrong address
                       call("send_email", "sent", to="ana@example.com", subject="Report")], "Sent.")}),
    ("What is 17% of 240?", [PERCENT],
     {"careful-agent": ([PERCENT], "40.8"),
      "hasty-agent": ([], "About 40.")}),  # no tool called
    ("Will it rain today in Bergen or in Oslo?", [BERGEN, OSLO_TODAY],
     {"careful-agent": ([OSLO_TODAY, BERGEN], "Showers in Bergen; Oslo stays dry."),  # the other order
      "hasty-agent": ([BERGEN, BERGEN], "Showers in Bergen.")}),  # Bergen twice, the same call
]

METRICS = [named(""), named("arguments", evaluation_params=[ToolCallParams.INPUT_PARAMETERS]),
           named("ordering", should_consider_ordering=True), named("exact", should_exact_match=True)]

for k, agent in enumerate(("careful-agent", "hasty-agent")):
    if k:
        time.sleep(1.5)  # a run's file is named by the second it ran
    cases = [LLMTestCase(name=f"task_{t}", input=task, actual_output=runs[agent][1], tools_called=runs[agent][0],
                         expected_tools=expected)
             for t, (task, expected, runs) in enumerate(TASKS)]
    evaluate(cases, metrics=METRICS, hyperparameters={"model": agent},
             async_config=AsyncConfig(run_async=False), display_config=DisplayConfig(print_results=False))
