"""``felt ARGS`` run in the test's own process, its exit status and output captured.

The command's whole path from its parser on (``services.cli.main``), without the
seconds a new interpreter costs; run it in a thread (``asyncio.to_thread``) when the
service it talks to runs on the test's event loop. Environment variables given are set
for the call only.
"""

from __future__ import annotations

import contextlib
import io
import os

from services.cli import main as cli_main


def run_felt(*args: str, **env: str) -> tuple[int, str, str]:
    """``(exit status, stdout, stderr)`` of ``felt ARGS`` with ``env`` set meanwhile."""
    out, err = io.StringIO(), io.StringIO()
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = cli_main(list(args))
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return status, out.getvalue(), err.getvalue()
