"""Build Felt's native code (the rest is configured in pyproject.toml).

* ``felt._native``: the C hand evaluator.
* The rules core's hot modules compiled with mypyc (they stay plain, type-checked
  Python in the repository; the compiled build replays hands about 1.4x faster).
  ``FELT_PURE_PYTHON=1`` at install time skips the compilation, e.g. to step
  through the engine in a debugger; the code behaves the same either way.
"""

import glob
import os

from setuptools import Extension, setup

COMPILED = [
    "libs/felt/rules/engine.py",
    "libs/felt/rules/fold.py",
    "libs/felt/rules/legal.py",
    "libs/felt/rules/pots.py",
]

extensions = [
    Extension(
        "felt._native",
        sources=["libs/felt/native/felt_native.c"],
        extra_compile_args=["-O3", "-std=c11"],
    )
]
if os.environ.get("FELT_PURE_PYTHON", "") in ("", "0"):
    from mypyc.build import mypycify

    extensions += mypycify(COMPILED, opt_level="3", group_name="felt_rules_native")
else:
    # An editable install builds in place: drop earlier compiled modules, which would
    # otherwise still shadow the sources.
    for source in COMPILED:
        for built in glob.glob(source.removesuffix(".py") + ".*.so"):
            os.remove(built)

setup(ext_modules=extensions)
