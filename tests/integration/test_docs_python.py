"""docs/python.md runs as written: its python blocks, top to bottom, in one namespace (a notebook's session),
in a fresh folder. The blocks that judge (``jl.judge``) run the embedded test model, with their own cache."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from judgelab.llm import models
from tests.conftest import TEST_MODEL

DOC = Path(__file__).resolve().parents[2] / "docs" / "python.md"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)


def blocks() -> list[str]:
    return BLOCK.findall(DOC.read_text(encoding="utf-8"))


def test_the_page_has_a_block_for_every_verb():
    code = "\n".join(blocks())
    for verb in ("load", "judge", "meta", "evaluate", "compare", "audit", "sample"):
        assert f"jl.{verb}(" in code, verb


def test_every_block_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("judgelab.llm.resolve.default_cache_path", lambda: tmp_path / "cache.sqlite")
    namespace: dict = {"__name__": "docs_python"}
    for number, code in enumerate(blocks(), start=1):
        if "jl.judge(" in code:
            assert TEST_MODEL in code, "the page judges with the small test model"
            if not models.is_installed(TEST_MODEL):  # the blocks after it do not need its run
                if os.environ.get("CI") == "true":
                    pytest.fail(f"embedded model {TEST_MODEL} not installed: judgelab models install {TEST_MODEL}")
                continue
        try:
            exec(compile(code, f"{DOC.name} block {number}", "exec"), namespace)
        except Exception as exc:  # name the block: the traceback's line numbers are the block's
            pytest.fail(f"{DOC.name}, python block {number} failed: {type(exc).__name__}: {exc}\n{code}")
