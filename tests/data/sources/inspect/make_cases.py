"""More real Inspect AI logs, offline (mock models; make_logs.py made the first ones):

  python make_cases.py OUT            writes OUT/epochs, OUT/reducers, OUT/yesno, OUT/rerun and OUT/killed

epochs/    3 epochs reduced by "max"; scorers match() and a numeric one (closeness)
reducers/  the same task reduced six ways at once: mean, median, mode, max, at_least_2, pass_at_2
yesno/     one epoch, a scorer whose values are "yes"/"no" (Inspect reads them as 1/0)
rerun/     the same task and model run twice, the second run answering better (a rerun in one log folder)
killed/    a run of 8 samples killed (SIGKILL) while its fifth sample ran: no header.json, status "started"
"""
import os
import signal
import subprocess
import sys
import time

import inspect_ai.model._model as _model

# offline: tiktoken would download its o200k_base table to count the mock's tokens; count characters / 4
_model.count_text_tokens = lambda text: max(1, len(text) // 4)
from inspect_ai import Epochs, Task, eval  # noqa: E402 - after the offline patch above
from inspect_ai.dataset import MemoryDataset, Sample  # noqa: E402
from inspect_ai.model import ModelOutput, get_model  # noqa: E402
from inspect_ai.scorer import Score, accuracy, match, mean, scorer  # noqa: E402
from inspect_ai.solver import generate, solver  # noqa: E402

QUESTIONS = [("What is 2 + 2?", "4"), ("What is the capital of France?", "Paris"),
             ("How many legs has a spider?", "8"), ("Which planet is known as the red planet?", "Mars")]


@scorer(metrics=[accuracy()])
def says_yes():
    """A custom scorer answering yes or no, as many do."""
    async def score(state, target):
        found = target.text.lower() in state.output.completion.lower()
        return Score(value="yes" if found else "no", answer=state.output.completion)
    return score


@scorer(metrics=[mean()])
def closeness():
    """1 for the target exactly, 0.5 for an answer that holds it, 0 else."""
    async def score(state, target):
        answer = state.output.completion.strip()
        return Score(value=1.0 if answer == target.text else 0.5 if target.text in answer else 0.0, answer=answer)
    return score


def mock(answers: list[str]):
    return get_model("mockllm/model", custom_outputs=[ModelOutput.from_content(model="mockllm/model", content=a)
                                                     for a in answers])


def task(scorers, epochs=None, n=4, solvers=()):  # n: the first n of QUESTIONS, twice over
    dataset = MemoryDataset([Sample(id=f"q{i + 1}", input=q, target=t)
                             for i, (q, t) in enumerate((QUESTIONS * 2)[:n])])
    return Task(dataset=dataset, solver=[*solvers, generate()], scorer=scorers, epochs=epochs, name="quiz")


def run(out: str, the_task, answers, **options):
    eval(the_task, model=mock(answers), log_dir=out, display="none", max_connections=1, max_samples=1, **options)


# each epoch's answers, in the order the mock gives them (one sample at a time)
EPOCHS = ["4", "Paris", "6", "Venus", "5", "Paris!", "8", "Mars", "4", "Lyon", "10", "Mars"]


@solver
def killed_at(n: int):
    """Kills this process (as `kill -9` would) when the n+1-th sample starts: the log keeps n samples."""
    started = []

    async def solve(state, generate):
        if len(started) == n:
            os.kill(os.getpid(), signal.SIGKILL)
        started.append(state.sample_id)
        return state
    return solve


if __name__ == "__main__":
    out = sys.argv[1]
    if sys.argv[2:] == ["killed"]:  # run in a child process: it dies with its run
        run(f"{out}/killed", task(match(), n=8, solvers=[killed_at(4)]),
            ["4", "Paris", "8", "green", "5", "Mars", "4", "Paris"], log_buffer=1)
        sys.exit(0)
    run(f"{out}/epochs", task([match(), closeness()], Epochs(3, "max")), EPOCHS)
    run(f"{out}/reducers", task([match(), closeness()], Epochs(3, ["mean", "median", "mode", "max", "at_least_2",
                                                                  "pass_at_2"])), EPOCHS)
    run(f"{out}/yesno", task([says_yes(), match()]), ["4", "Paris", "six", "Mars"])
    run(f"{out}/rerun", task(match()), ["5", "Rome", "6", "Mars"])
    time.sleep(1.5)  # the log's creation time, which tells the rerun, counts in seconds
    run(f"{out}/rerun", task(match()), ["4", "Paris", "8", "Mars"])
    killed = subprocess.run([sys.executable, __file__, out, "killed"])
    assert killed.returncode == -signal.SIGKILL, killed.returncode
