"""The far side of ``verify``: rebuild a pickled pack and send its trace back.

Run as ``python -c "from specpack._worker import main; main()"`` (a fresh interpreter reading
the request from stdin) or as a multiprocessing target (spawn/forkserver). Every failure is
caught and returned as text with the real traceback, never a broken pipe.
"""

from __future__ import annotations

import pickle
import sys
import traceback
from typing import Any


def _rebuild_and_trace(blob: bytes, steps: int, seed: int) -> dict[str, Any]:
    try:
        from .._verify.engine import trace

        pack = pickle.loads(blob)
        env = pack.make()
        try:
            return {"trace": trace(env, steps, seed)}
        finally:
            try:
                env.close()
            except Exception:  # noqa: BLE001
                pass
    except BaseException as e:  # noqa: BLE001 - everything goes back to the parent
        return {"error": "".join(traceback.format_exception(type(e), e, e.__traceback__))}


def _safe_dumps(result: dict[str, Any]) -> bytes:
    try:
        return pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as e:  # noqa: BLE001 - e.g. an unpicklable custom space
        return pickle.dumps({"error": f"cannot send the trace back ({type(e).__name__}: {e})"})


def main() -> None:
    """Entry point of the fresh-interpreter worker (request on stdin, result on stdout)."""
    try:
        blob, steps, seed = pickle.loads(sys.stdin.buffer.read())
        result = _rebuild_and_trace(blob, steps, seed)
    except BaseException as e:  # noqa: BLE001
        result = {"error": "".join(traceback.format_exception(type(e), e, e.__traceback__))}
    out = _safe_dumps(result)
    sys.stdout.buffer.write(out)
    sys.stdout.buffer.flush()


def run_in_child(conn: Any, blob: bytes, steps: int, seed: int) -> None:
    """multiprocessing target for ``verify(where="spawn"|"forkserver")``."""
    result = _rebuild_and_trace(blob, steps, seed)
    conn.send_bytes(_safe_dumps(result))
    conn.close()
