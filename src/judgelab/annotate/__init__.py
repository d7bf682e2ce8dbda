"""`judgelab annotate`: a local labelling web app writing human labels (docs/annotate.md).

>>> from judgelab.annotate import build_task, serve                       # doctest: +SKIP
>>> task = build_task("items.jsonl", "coherence", "labels.jsonl", scale="1-5")
>>> serve(task, port=8765)        # http://127.0.0.1:8765/ until Ctrl-C

``create_app(task)`` gives the Starlette app itself (for another ASGI server, or a test client);
the labels file is read back with ``judgelab.data.labels.load_labels``.
"""

from judgelab.annotate.store import LabelStore, Progress
from judgelab.annotate.task import DEFINITIONS, AnnotationTask, Choice, Scale, build_task

__all__ = ["DEFINITIONS", "AnnotationTask", "Choice", "LabelStore", "Progress", "Scale", "build_task",
           "create_app", "serve"]


def __getattr__(name: str):
    # The server needs the `annotate` extra (starlette, uvicorn): imported when first asked for.
    if name in ("create_app", "serve"):
        from judgelab.annotate import server

        return getattr(server, name)
    raise AttributeError(f"module 'judgelab.annotate' has no attribute {name!r}")
