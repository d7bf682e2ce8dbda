"""Real Inspect AI logs, offline: mock models answer, a mock grader grades (model_graded_qa), match scores."""
import sys

import inspect_ai.model._model as _model

# offline: tiktoken would download its o200k_base table to count the mock's tokens; count characters / 4
_model.count_text_tokens = lambda text: max(1, len(text) // 4)
from inspect_ai import Task, eval  # noqa: E402 - after the offline patch above
from inspect_ai.dataset import MemoryDataset, Sample  # noqa: E402 - after the offline patch above
from inspect_ai.model import ModelOutput, get_model  # noqa: E402 - after the offline patch above
from inspect_ai.scorer import match, model_graded_qa  # noqa: E402 - after the offline patch above
from inspect_ai.solver import generate  # noqa: E402 - after the offline patch above

QUESTIONS = [("What is 2 + 2?", "4"), ("What is the capital of France?", "Paris"),
             ("How many legs has a spider?", "8"), ("What colour is a clear daytime sky?", "blue"),
             ("What is 10 / 2?", "5"), ("Which planet is known as the red planet?", "Mars")]
ANSWERS = {"mockllm/careful": ["4", "Paris", "8", "blue", "5", "Mars"],
           "mockllm/sloppy": ["5", "Paris", "6", "blue", "2", "Venus"]}
GRADES = {"mockllm/careful": ["C", "C", "C", "C", "P", "C"], "mockllm/sloppy": ["I", "C", "I", "C", "I", "I"]}
out, fmt = sys.argv[1], sys.argv[2]
scored = len(sys.argv) < 4 or sys.argv[3] != "noscore"
for name, answers in ANSWERS.items():
    model = get_model(name, custom_outputs=[ModelOutput.from_content(model=name, content=a) for a in answers])
    grader = get_model("mockllm/grader", custom_outputs=[
        ModelOutput.from_content(model="mockllm/grader", content=f"The answer was checked against the criterion. GRADE: {g}")
        for g in GRADES[name]])
    dataset = MemoryDataset([Sample(id=f"q{i + 1}", input=q, target=t) for i, (q, t) in enumerate(QUESTIONS)])
    scorers = [match(location="any"), model_graded_qa(model=grader)] if scored else []
    task = Task(dataset=dataset, solver=generate(), scorer=scorers or None, name="quiz")
    eval(task, model=model, log_dir=out, log_format=fmt, display="none", max_connections=1)
    if not scored:
        break
