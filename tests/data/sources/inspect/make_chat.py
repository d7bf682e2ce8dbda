"""A real Inspect AI log whose samples' inputs are chats (system, user, an assistant's tool call and its
result, the next user turn), offline: a mock model answers, match() scores.

  python make_chat.py OUT            writes OUT/ a .json log (log format 2)
"""
import sys

import inspect_ai.model._model as _model

# offline: tiktoken would download its o200k_base table to count the mock's tokens; count characters / 4
_model.count_text_tokens = lambda text: max(1, len(text) // 4)
from inspect_ai import Task, eval  # noqa: E402 - after the offline patch above
from inspect_ai.dataset import MemoryDataset, Sample  # noqa: E402
from inspect_ai.model import (  # noqa: E402
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    ModelOutput,
    get_model,
)
from inspect_ai.scorer import match  # noqa: E402
from inspect_ai.solver import generate  # noqa: E402
from inspect_ai.tool import ToolCall  # noqa: E402

CITIES = [("Paris", "18 C, sunny", "18"), ("Oslo", "-3 C, snow", "-3")]


def chat(city: str, weather: str) -> list:
    call = ToolCall(id=f"call_{city.lower()}", function="get_weather", arguments={"city": city})
    return [ChatMessageSystem(content="You answer questions about the weather."),
            ChatMessageUser(content=f"What is the weather in {city}?"),
            ChatMessageAssistant(content="", tool_calls=[call]),
            ChatMessageTool(content=weather, tool_call_id=call.id, function="get_weather"),
            ChatMessageAssistant(content=f"It is {weather} in {city}."),
            ChatMessageUser(content="And the temperature, in degrees only?")]


out = sys.argv[1]
answers = [temperature for _, _, temperature in CITIES]
model = get_model("mockllm/chat", custom_outputs=[ModelOutput.from_content(model="mockllm/chat", content=a)
                                                  for a in answers])
dataset = MemoryDataset([Sample(id=city.lower(), input=chat(city, weather), target=temperature)
                         for city, weather, temperature in CITIES])
task = Task(dataset=dataset, solver=generate(), scorer=match(), name="weather")
eval(task, model=model, log_dir=out, log_format="json", display="none", max_connections=1)
