"""What a judge reads of an item, as a short hash: a rerun into a run folder judges an edited item again.

The digest covers the texts the prompts and judges render (``prompts/``, ``judges/``) and the item's
scales (critic and ensemble judges rate on them), never its human labels (``scores``, ``label``), ids
or bookkeeping: correcting a human label must not pay for a judgment again.
"""

from __future__ import annotations

import base64
import hashlib
import json

from judgelab.data.item import Item

#: The item's fields a judge reads. A field left None is left out of the hash, so adding one here
#: later does not change the digest of items that lack it.
JUDGED_FIELDS = ("source", "context", "output", "reference", "instruction", "output_a", "output_b", "query",
                 "passage", "scale", "messages", "contexts", "trajectory", "messages_a", "messages_b")
_MODELS = ("messages", "contexts", "trajectory", "messages_a", "messages_b")  # lists of pydantic models: dumped to JSON for the hash


def content_digest(item: Item) -> str:
    """80 bits of SHA-256 over the judged fields of ``item`` (and ``extra.aspect_scales``), as 16 characters.

    Base32 (a-z, 2-7) rather than hex: a hex digest can be all digits, which a spreadsheet or
    ``pandas.read_csv`` turns into a number that no longer reads back as the digest."""
    shown = {name: item.model_dump(mode="json", include={name})[name] if name in _MODELS else value
             for name in JUDGED_FIELDS if (value := getattr(item, name)) is not None}
    if "aspect_scales" in item.extra:  # Item.aspect_scale reads it before ``scale``
        shown["aspect_scales"] = item.extra["aspect_scales"]
    text = json.dumps(shown, sort_keys=True, default=str)  # ASCII: a lone surrogate cannot fail the encode
    return base64.b32encode(hashlib.sha256(text.encode()).digest()[:10]).decode().lower()
