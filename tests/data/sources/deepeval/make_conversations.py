"""A real DeepEval test run of conversational test cases, offline (rule metrics, no LLM):

  DEEPEVAL_RESULTS_FOLDER=conversations DEEPEVAL_TELEMETRY_OPT_OUT=1 python make_conversations.py

Two conversations of the weather assistant: the assistant calls a tool (deepeval's toolsCalled on its turn)
and answers from retrieved passages (retrievalContext on its turn); the second one answers wrongly."""
from deepeval import evaluate
from deepeval.metrics import BaseConversationalMetric
from deepeval.test_case import ConversationalTestCase, ToolCall, Turn

FORECASTS = {"Paris": "Paris: 18 C and sunny on Monday.", "Oslo": "Oslo: -3 C with snow on Monday."}


class Answered(BaseConversationalMetric):
    """1 when the last assistant turn says the expected outcome's temperature, else 0."""

    def __init__(self, threshold: float = 1.0):
        self.threshold = threshold

    def measure(self, test_case, *args, **kwargs):
        last = [turn for turn in test_case.turns if turn.role == "assistant"][-1]
        self.score = float(test_case.expected_outcome in last.content)
        self.reason = "the temperature is stated" if self.score else "the temperature is wrong"
        self.success = self.score >= self.threshold
        return self.score

    async def a_measure(self, test_case, *args, **kwargs):
        return self.measure(test_case)

    def is_successful(self):
        return self.success

    @property
    def __name__(self):
        return "Answered"


def conversation(name: str, city: str, answer: str, expected: str) -> ConversationalTestCase:
    call = ToolCall(name="get_forecast", input_parameters={"city": city}, output=FORECASTS[city])
    return ConversationalTestCase(name=name, scenario=f"A user asks for Monday's weather in {city}.",
                                  expected_outcome=expected, turns=[
        Turn(role="user", content=f"What will the weather be in {city} on Monday?"),
        Turn(role="assistant", content=answer, tools_called=[call], retrieval_context=[FORECASTS[city]]),
        Turn(role="user", content="Are you sure?"),
        Turn(role="assistant", content=f"Yes. {answer}"),
    ])


cases = [conversation("paris", "Paris", "It will be 18 C and sunny.", "18 C"),
         conversation("oslo", "Oslo", "It will be 5 C and dry.", "-3 C")]
evaluate(cases, metrics=[Answered()], hyperparameters={"model": "weather-bot"})
