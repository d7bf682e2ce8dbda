"""Every judgelab package imports as a program's first judgelab import.

The judges and the prompts import each other's modules, so an import cycle shows only when the
cycle's other end is imported first (``import judgelab.prompts`` failed that way); a test run
imports everything in one order and never sees it. One child interpreter, with judgelab's modules
dropped before each import, keeps the third-party imports cached and the test at a few seconds.
"""

import subprocess
import sys

_CHECK = """
import importlib, pkgutil, sys, judgelab
names = [m.name for m in pkgutil.iter_modules(judgelab.__path__, "judgelab.")]
for name in names:
    for loaded in [m for m in sys.modules if m == "judgelab" or m.startswith("judgelab.")]:
        del sys.modules[loaded]
    try:
        importlib.import_module(name)
    except Exception as error:
        print(f"{name}: {error!r}")
print(f"checked {len(names)}")
"""


def test_each_package_imports_first():
    result = subprocess.run([sys.executable, "-c", _CHECK], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert lines[-1].startswith("checked ") and int(lines[-1].split()[1]) >= 10, result.stdout
    assert lines[:-1] == [], "\n".join(lines[:-1])
