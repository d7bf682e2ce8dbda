"""promptfoo ``promptfoo eval -o results.json`` files (results format version 2 to 4).

Each result (one test case, prompt and provider) becomes a pointwise item: system the provider
(its label, else its id; with several prompts, provider and prompt label), group the test case,
source the rendered prompt, output the provider's reply, the test's variables in ``extra.vars``.

A multi-turn test carries its conversation as ``messages`` (OpenAI chat shape; the judged reply is the last
assistant message, the source the turns before it): the whole conversation a multi-turn provider kept in
``response.metadata.messages`` (the red-team strategies GOAT, Crescendo, the simulated user); else a chat prompt
(the rendered prompt a JSON list of ``{role, content}`` messages) followed by the reply; else a text prompt whose
earlier turns are the built-in ``_conversation`` variable (each turn's ``input`` a user message, its ``output`` the
assistant's), then this turn's prompt and reply.
A reply of tool calls is the last assistant message's ``tool_calls``, as promptfoo's OpenAI-compatible chat providers
give it: the calls alone (``[{"id", "type": "function", "function": {"name", "arguments"}}]``, the message's content
empty) or the whole message when it has text too (``{"role", "content", "tool_calls"}``); a single-turn test with
such a reply is read as the rendered prompt (one user message) and that reply. Other providers' calls are read
into the same shape: Ollama's (``{"function": {"name", "arguments"}}``, no id), Gemini's parts (Google AI Studio,
Vertex: ``[{"text"}, {"functionCall": {"name", "args"}}]``), Anthropic's content blocks (``{"type": "tool_use",
"id", "name", "input"}``; promptfoo's Anthropic provider writes them as one text, each block's text or JSON joined
by blank lines). A call without an id gets ``call_<k>``, k its place among the reply's calls.
Each assertion's grading result becomes a judgment (judge: the assertion's type, e.g.
``llm-rubric``, numbered when a test has two of a type; score its score, label pass/fail, its
reason as explanation), and the whole test's result one more (judge ``promptfoo``). Each of these judges'
pass/fail is a judge of its own, ``<judge>/pass`` (1 pass, 0 fail): the mean of ``promptfoo/pass`` is
promptfoo's pass rate. A score that is not a number (promptfoo's GradingResult holds a number) is refused.

A result whose provider or grader failed (``error``, failure reason 2) has no verdict: the file is
refused, naming the result and how many failed, rather than reading a score promptfoo never gave.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from judgelab.data.sources import SourceData
from judgelab.data.sources._read import (
    dataset,
    head,
    item,
    json_document,
    judgment,
    kind_of,
    need,
    text,
    typed,
)
from judgelab.data.sources._traces import decoded
from judgelab.errors import DataError
from judgelab.files import JsonBudget

NAME = "promptfoo"
KNOWN_VERSIONS = (2, 3, 4)
EXPECTED = "promptfoo eval results (results.results: testIdx, promptIdx, provider, response, gradingResult)"
ERROR = 2  # promptfoo's ResultFailureReason.ERROR
ROLES = ("system", "user", "assistant", "tool")


def claims(path: Path) -> bool:
    if path.is_dir():
        return False
    start = head(path)[:8192]
    return path.suffix == ".json" and start.lstrip().startswith("{") and (
        '"evalId"' in start or ('"results"' in start and '"testIdx"' in start))


def read(path: Path, *, partial: bool = False) -> SourceData:
    if path.is_dir():
        raise DataError("give the results file promptfoo wrote (promptfoo eval -o results.json), not a folder", path)
    where = str(path)
    document = json_document(path)
    table = document.get("results") if isinstance(document, dict) else None
    if not isinstance(table, dict) or not isinstance(table.get("results"), list):
        raise DataError(f"no results.results list: expected {EXPECTED}", where, None, "results")
    version = table.get("version")
    if version not in KNOWN_VERSIONS:
        raise DataError(f"results format version {version!r}: this reader knows versions "
                        f"{', '.join(map(str, KNOWN_VERSIONS))}", where, None, "results.version")
    rows = table["results"]
    _refuse_failed(rows, where)
    # promptfoo numbers each provider's copy of a prompt apart: prompts differ by their template
    several_prompts = len({str(_prompt(row).get("label")) for row in rows if isinstance(row, dict)}) > 1
    items, judgments = [], []
    budget = JsonBudget()  # the JSON kept as text inside the file (chat prompts, conversations) is parsed too
    for k, row in enumerate(rows):
        got = _result(row, k, several_prompts, where, budget)
        items.append(got[0])
        judgments += got[1]
    return SourceData(NAME, dataset(items, where), judgments)


def _refuse_failed(rows: list[Any], where: str) -> None:
    # an assertion that failed is a verdict (score, pass false); a provider or grader that failed is none
    failed = [k for k, row in enumerate(rows) if isinstance(row, dict) and (
        row.get("failureReason") == ERROR or (row.get("error") and row.get("gradingResult") is None))]
    if failed:
        k = failed[0]
        row = rows[k]
        reason = text(row.get("error") or "failure reason 2").strip().split("\n", 1)[0][:100]
        raise DataError(f"{_name(row, k)}: failed ({reason}), so no grader judged it; expected graded results: "
                        f"{len(failed)} of {len(rows)} results failed (rerun them in promptfoo, or remove them "
                        "from the file to read the rest)", where)


def _name(row: dict[str, Any], k: int) -> str:
    return f"result {k} (test {row.get('testIdx')}, prompt {row.get('promptIdx')}, provider {_provider(row)!r})"


def _provider(row: dict[str, Any]) -> str:
    provider = row.get("provider")
    if isinstance(provider, dict):
        return str(provider.get("label") or provider.get("id"))
    return str(provider)


def _prompt(row: dict[str, Any]) -> dict[str, Any]:
    prompt = row.get("prompt")
    return prompt if isinstance(prompt, dict) else {}


def _result(row: Any, k: int, several_prompts: bool, where: str, budget: JsonBudget):
    if not isinstance(row, dict):
        raise DataError(f"result {k} is not an object: expected {EXPECTED}", where)
    record = f"results.results.{k}"
    need(row, ("testIdx", "promptIdx", "provider", "response"), where, None, EXPECTED, record)
    for key in ("testIdx", "promptIdx"):
        typed(row[key], int, where, f"{record}: {key!r}")
    prompt = _prompt(row)
    system = _provider(row) + (f" · {prompt.get('label')}" if several_prompts and prompt.get("label") else "")
    item_id = f"test{row['testIdx']}/prompt{row['promptIdx']}/{_provider(row)}"
    response = typed(row["response"], (dict, type(None)), where, f"{record}: 'response'") or {}
    variables = typed(row.get("vars") or {}, dict, where, f"{record}: 'vars'")
    messages = _conversation(prompt, response, variables, record, where, budget)
    # a reply of tool calls alone has no text: the output is empty, the calls read in the messages (its source)
    silent = messages is not None and messages[-1]["role"] == "assistant" and not messages[-1]["content"]
    texts = ({"messages": messages} | ({"output": ""} if silent else {}) if messages is not None else
             {"source": prompt.get("raw"), "output": text(response.get("output", ""))})
    one = item({"id": item_id, "group_id": f"test{row['testIdx']}", "system_id": system, **texts,
                "extra": {"vars": {key: value for key, value in variables.items() if key != "_conversation"}}},
               where, None)
    grading = typed(row.get("gradingResult"), (dict, type(None)), where, f"{record}: 'gradingResult'")
    if grading is None:
        need(row, ("success", "score"), where, None, EXPECTED, record)
        grading = {"pass": row["success"], "score": row["score"], "reason": None}
    judged = _verdicts(item_id, "promptfoo", grading | {"pass": row.get("success", grading.get("pass"))},
                       f"{record}.gradingResult", where)
    counts: dict[str, int] = {}
    components = typed(grading.get("componentResults") or [], list, where, f"{record}: 'componentResults'")
    for c, component in enumerate(components):
        name = f"{record}.gradingResult.componentResults.{c}"
        assertion = typed(typed(component, dict, where, name).get("assertion") or {}, dict, where, f"{name}: 'assertion'")
        kind = str(assertion.get("type") or "assertion")
        counts[kind] = counts.get(kind, 0) + 1
        judged += _verdicts(item_id, kind if counts[kind] == 1 else f"{kind}#{counts[kind]}", component, name, where)
    return one, judged


def _verdicts(item_id: str, judge: str, grading: dict[str, Any], name: str, where: str):
    """The grader's score (label pass/fail) and, as the judge ``<judge>/pass``, its pass/fail as 1/0."""
    passed = typed(grading.get("pass"), bool, where, f"{name}: 'pass'")
    score = typed(grading.get("score"), (int, float), where, f"{name} ({judge}): 'score'")
    label = "pass" if passed else "fail"
    row = {"item_id": item_id, "explanation": grading.get("reason"), "label": label}
    return [judgment(row | {"judge": judge, "score": score}, where, None),
            judgment(row | {"judge": f"{judge}/pass", "score": float(passed)}, where, None)]


def _conversation(prompt: dict[str, Any], response: dict[str, Any], variables: dict[str, Any], record: str,
                  where: str, budget: JsonBudget) -> list[dict[str, Any]] | None:
    """The test's conversation in the OpenAI shape (docstring above); None for a single-turn test."""
    metadata = response.get("metadata")
    if isinstance(metadata, dict) and metadata.get("messages") is not None:
        field = f"{record}.response.metadata.messages"
        # some providers keep it as the JSON text of the list
        kept = decoded(metadata["messages"], budget, "the conversation", where, None, field)
        kept = _checked(kept, list, where, field, "the conversation")
        return [_message(one, where, f"{field}.{j}") for j, one in enumerate(kept)]
    reply = _reply(response.get("output", ""), where, f"{record}.response.output", budget)
    raw = prompt.get("raw")
    chat = _chat(raw, budget, where, f"{record}.prompt.raw")
    if chat is not None:
        return [_message(one, where, f"{record}.prompt.raw.{j}") for j, one in enumerate(chat)] + [reply]
    earlier = variables.get("_conversation")
    if not earlier:
        return [{"role": "user", "content": text(raw or "")}, reply] if reply["tool_calls"] else None
    field = f"{record}.vars._conversation"
    turns = []
    for j, turn in enumerate(_checked(earlier, list, where, field, "'_conversation'")):
        _checked(turn, dict, where, f"{field}.{j}", "a turn of '_conversation'")
        for key, role in (("input", "user"), ("output", "assistant")):
            if turn.get(key) is None:
                raise DataError(f"turn {j} of '_conversation' has no {key!r}: expected promptfoo's {{prompt, input, "
                                "output}", where, None, f"{field}.{j}.{key}")
            turns.append({"role": role, "content": text(turn[key])})
    return [*turns, {"role": "user", "content": text(raw or "")}, reply]


def _calls(output: Any) -> bool:
    """Whether a provider's output is a list of tool calls in the OpenAI shape (each with its ``function``)."""
    return isinstance(output, list) and bool(output) and all(
        isinstance(call, dict) and isinstance(call.get("function"), dict) for call in output)


def _ollama(call: Any) -> bool:
    """A call as promptfoo's Ollama chat provider writes it: ``{"function": {"name", "arguments"}}`` with neither id
    nor type (an OpenAI call carries both, and one that lost its id is refused)."""
    return (isinstance(call, dict) and isinstance(call.get("function"), dict)
            and "id" not in call and "type" not in call)


def _reply(output: Any, where: str, field: str, budget: JsonBudget) -> dict[str, Any]:
    """The provider's reply as the last assistant message: its tool calls read (the calls alone, or the message
    holding text and calls; OpenAI's shape, Ollama's, Anthropic's content blocks, Gemini's parts), any other output
    as text."""
    if _calls(output):
        for j, call in enumerate(output):  # checked here, so that the error names the file's field
            if _ollama(call):
                continue  # checked as it is read below
            for key, value in (("id", call.get("id")), ("function.name", call["function"].get("name"))):
                if not isinstance(value, str) or not value:
                    raise DataError(f"tool call {j} has no {key!r}: expected OpenAI's {{id, type, function: {{name, "
                                    "arguments}}}", where, None, f"{field}.{j}.{key}")
        return {"role": "assistant", "content": None, "tool_call_id": None, "tool_calls": [
            _ollama_call(j, call, where, f"{field}.{j}") if _ollama(call) else
            {"id": call.get("id"), "function": call["function"]} for j, call in enumerate(output)]}
    if isinstance(output, dict) and output.get("tool_calls"):
        if output.get("role", "assistant") != "assistant":
            raise DataError(f"the provider's reply has role {output['role']!r}: expected an assistant message", where,
                            None, f"{field}.role")
        calls = output["tool_calls"]
        if isinstance(calls, list) and any(_ollama(call) for call in calls):  # Ollama's {content, tool_calls}
            output = output | {"tool_calls": [_ollama_call(j, call, where, f"{field}.tool_calls.{j}")
                                              if _ollama(call) else call for j, call in enumerate(calls)]}
        return _message(output | {"role": "assistant"}, where, field)
    parts = [output] if isinstance(output, dict) and "functionCall" in output else output
    if _gemini(parts):
        return _gemini_reply(parts, where, field if parts is output else None, field)
    blocks = _anthropic_text(output, budget, where, field) if isinstance(output, str) else output
    if blocks is not None and _anthropic(blocks):
        return _anthropic_reply(blocks, where, field if blocks is output else None, field)
    return {"role": "assistant", "content": text(output), "tool_calls": None, "tool_call_id": None}


def _call(k: int, call_id: Any, name: Any, arguments: Any, where: str, at: str | None, field: str,
          keys: tuple[str, str, str], shape: str, text_ok: bool = False) -> dict[str, Any]:
    """Another provider's tool call in OpenAI's shape: its name checked, its arguments as JSON text (an object
    serialised, none ``{}``; Ollama's JSON text, as promptfoo writes it, kept as it is). A call without an id (Gemini's and Ollama's have none) gets one
    made up from its place in the reply, ``call_<k>``: stable from one reading to the next, but promptfoo never gave
    it. ``at`` is the call's field (None: the call was read out of the output's text, ``field``)."""
    for key, value, good in ((keys[0], call_id, call_id is None or isinstance(call_id, str) and bool(call_id)),
                             (keys[1], name, isinstance(name, str) and bool(name)),
                             (keys[2], arguments, arguments is None or isinstance(arguments, dict)
                              or text_ok and isinstance(arguments, str))):
        if not good:
            raise DataError(f"tool call {k} has {'no' if value in (None, '') else 'a bad'} {key!r}: expected "
                            f"{shape}", where, None, f"{at}.{key}" if at is not None else field)
    return {"id": call_id or f"call_{k}", "function": {"name": name, "arguments": "{}" if arguments is None else
                                                       arguments if isinstance(arguments, str) else
                                                       json.dumps(arguments, ensure_ascii=False)}}


def _ollama_call(k: int, call: dict[str, Any], where: str, at: str) -> dict[str, Any]:
    function = call["function"]
    return _call(k, None, function.get("name"), function.get("arguments"), where, at, at,
                 ("id", "function.name", "function.arguments"), "Ollama's {function: {name, arguments}}", True)


def _gemini(parts: Any) -> bool:
    """Whether an output is Gemini's parts with a function call (promptfoo's Google AI Studio and Vertex providers
    give the parts, ``[{"text"}, {"functionCall": {"name", "args"}}]``, when they are not all text)."""
    return isinstance(parts, list) and bool(parts) and all(
        isinstance(part, dict) and ("text" in part or "functionCall" in part) for part in parts) and any(
        "functionCall" in part for part in parts)


def _gemini_reply(parts: list[dict[str, Any]], where: str, at: str | None, field: str) -> dict[str, Any]:
    """Gemini's parts as the assistant message: the texts joined (thoughts left out), each ``functionCall`` a call.
    ``at`` None: the output was one part, not a list of them."""
    shape = "Gemini's {functionCall: {name, args}}"
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    for j, part in enumerate(parts):
        here = field if at is None else f"{at}.{j}"
        if "functionCall" in part:
            call = part["functionCall"]
            if not isinstance(call, dict):
                raise DataError(f"part {j}'s 'functionCall' is {kind_of(call)}: expected {shape}", where, None,
                                f"{here}.functionCall")
            calls.append(_call(len(calls), call.get("id"), call.get("name"), call.get("args"), where, here, field,
                               ("functionCall.id", "functionCall.name", "functionCall.args"), shape))
        elif not isinstance(part["text"], str):
            raise DataError(f"part {j}'s 'text' is {kind_of(part['text'])}: expected a string", where, None,
                            f"{here}.text")
        elif not part.get("thought"):
            texts.append(part["text"])
    return {"role": "assistant", "content": "".join(texts) or None, "tool_calls": calls, "tool_call_id": None}


def _anthropic_text(output: str, budget: JsonBudget, where: str, field: str) -> list[dict[str, Any]] | None:
    """The content blocks of an Anthropic reply as promptfoo's Anthropic provider writes it when it called a tool:
    one text, its blocks joined by blank lines, a text block as its text, a ``tool_use`` block as its JSON."""
    if '"tool_use"' not in output:
        return None
    blocks: list[dict[str, Any]] = []
    for segment in output.split("\n\n"):
        block = None
        if segment.startswith("{") and '"tool_use"' in segment:
            budget.spend(segment, where, None, field)
            try:
                block = json.loads(segment)
            except (ValueError, RecursionError):
                block = None  # a text that only looks like a block
        blocks.append(block if isinstance(block, dict) and block.get("type") == "tool_use" else
                      {"type": "text", "text": segment})
    return blocks


def _anthropic(blocks: Any) -> bool:
    """Whether an output is Anthropic's content blocks with a ``tool_use`` block."""
    return isinstance(blocks, list) and bool(blocks) and all(
        isinstance(block, dict) and isinstance(block.get("type"), str) for block in blocks) and any(
        block["type"] == "tool_use" for block in blocks)


def _anthropic_reply(blocks: list[dict[str, Any]], where: str, at: str | None, field: str) -> dict[str, Any]:
    """Anthropic's content blocks as the assistant message: the text blocks joined by blank lines (as promptfoo
    joins them), each ``tool_use`` block a call; thinking and other blocks left out. ``at`` None: the blocks were
    read out of the output's text (a bad block is then named by the output's field)."""
    shape = "Anthropic's {type: tool_use, id, name, input}"
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    for j, block in enumerate(blocks):
        here = None if at is None else f"{at}.{j}"
        if block["type"] == "tool_use":
            calls.append(_call(len(calls), block.get("id"), block.get("name"), block.get("input"), where, here, field,
                               ("id", "name", "input"), shape))
        elif block["type"] == "text":
            if not isinstance(block.get("text"), str):
                raise DataError(f"block {j}'s 'text' is {kind_of(block.get('text'))}: expected a string", where, None,
                                f"{here}.text" if here is not None else field)
            texts.append(block["text"])
    return {"role": "assistant", "content": "\n\n".join(texts) or None, "tool_calls": calls, "tool_call_id": None}


def _chat(raw: Any, budget: JsonBudget, where: str, field: str) -> list[Any] | None:
    """The rendered prompt's messages when it is a chat (a JSON list of objects with a role), else None."""
    if not isinstance(raw, str) or not raw.lstrip().startswith("["):
        return None
    budget.spend(raw, where, None, field)
    try:
        parsed = json.loads(raw)
    except (ValueError, RecursionError):
        return None  # a text prompt that starts with a bracket
    if isinstance(parsed, list) and parsed and all(isinstance(one, dict) and "role" in one for one in parsed):
        return parsed
    return None


def _checked(value: Any, kinds: type | tuple[type, ...], where: str, field: str, name: str) -> Any:
    try:
        return typed(value, kinds, where, name)
    except DataError as err:
        raise DataError(err.detail, where, None, field) from None


def _message(message: Any, where: str, field: str) -> dict[str, Any]:
    """A message of the conversation, checked by field: its role, its content as text (a content part list's
    texts joined), its tool calls and result ids kept (Item checks that each result answers a call)."""
    _checked(message, dict, where, field, "a message")
    if message.get("role") not in ROLES:
        raise DataError(f"role {message.get('role')!r}: expected one of {', '.join(ROLES)}", where, None, f"{field}.role")
    content = message.get("content")
    if isinstance(content, list):
        content = "\n".join(part["text"] for part in content if isinstance(part, dict) and isinstance(part.get("text"), str))
    calls = _checked(message.get("tool_calls") or [], list, where, f"{field}.tool_calls", "'tool_calls'")
    return {"role": message["role"], "content": None if content is None else text(content),
            "tool_calls": [{"id": call.get("id"), "function": call.get("function")} for call in (
                _checked(one, dict, where, f"{field}.tool_calls.{j}", "a tool call") for j, one in enumerate(calls))]
            or None, "tool_call_id": message.get("tool_call_id")}
