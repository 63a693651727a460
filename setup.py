"""Build Felt's native code (the rest is configured in pyproject.toml).

* ``felt.core._native``: the C hand evaluator.
* The hot path of a hand compiled with mypyc: the rules core, its value classes and
  the PHH reader and replay (``felt.compiled`` lists them; they stay plain,
  type-checked Python in the repository; compiled, ``felt phh verify`` runs about
  2.5x faster).
  ``FELT_PURE_PYTHON=1`` at install time skips the compilation, e.g. to step
  through the engine in a debugger; the code behaves the same either way.
"""

import glob
import os
import runpy

from setuptools import Extension, setup

# The modules to compile are listed once, in felt.compiled (which also warns about stale builds).
COMPILED = [
    f"libs/felt/{name}.py" for name in runpy.run_path("libs/felt/compiled.py")["COMPILED_MODULES"]
]

extensions = [
    Extension(
        "felt.core._native",
        sources=["libs/felt/core/native/felt_native.c"],
        extra_compile_args=["-O3", "-std=c11"],
    )
]
if os.environ.get("FELT_PURE_PYTHON", "") in ("", "0"):
    from mypyc.build import mypycify

    extensions += mypycify(COMPILED, opt_level="3", group_name="felt_compiled")
else:
    # An editable install builds in place: drop earlier compiled modules, which would
    # otherwise still shadow the sources.
    for source in COMPILED:
        for built in glob.glob(source.removesuffix(".py") + ".*.so"):
            os.remove(built)

setup(ext_modules=extensions)
