"""A backend for judges that call no LLM (``JudgeConfig.uses_llm = False``): loads nothing, refuses every call.

The runner and the commands always hand a judge a client; this one lets them do so for the
similarity scorer without loading a model, while its accounting still reads 0 calls.
"""

from __future__ import annotations

from judgelab.errors import ConfigError
from judgelab.llm.backends.base import Backend, Capabilities
from judgelab.llm.client import Client
from judgelab.llm.types import Completion, Request


class NoLLMBackend(Backend):
    identity = "none"
    model_name = "none"
    capabilities = Capabilities()
    max_concurrency = 1

    async def agenerate(self, request: Request, sample_index: int) -> Completion:
        raise ConfigError("this judge runs without an LLM, yet it asked for a completion: "
                          "a judge that calls a model must not set uses_llm = False")


def no_llm_client() -> Client:
    """A client that never loads a model (and has no cache: there is nothing to cache)."""
    return Client(NoLLMBackend(), cache=None)
