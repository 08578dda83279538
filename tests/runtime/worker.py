"""Runs code snippets on the torch of the interpreter that runs this file (issue 13).

Standalone on purpose: it needs only torch, so it runs in a second virtual environment that
has a different torch build and no devlint. Reads a JSON list of {"id", "source"} on stdin;
imports torch once, forks one child per snippet (each in a fresh temporary directory, with a
time limit) and prints a JSON list of {"id", "ok", "stdout", "error"} on stdout. A first
record {"id": "__torch__"} describes the torch it ran on.
"""
from __future__ import annotations

import io
import json
import os
import signal
import sys
import tempfile
import traceback
import warnings

LIMIT_S = 60


def _child(source: str, wfd: int) -> None:
    out = io.StringIO()
    res = {"ok": True, "stdout": "", "error": ""}
    try:
        os.chdir(tempfile.mkdtemp(prefix="devlint-rt-"))
        sys.stdout = out
        warnings.simplefilter("ignore")
        code = compile(source, "snippet.py", "exec")
        exec(code, {"__name__": "__main__", "__file__": "snippet.py"})
    except SystemExit as e:
        res["ok"] = e.code in (None, 0)
        res["error"] = "" if res["ok"] else f"SystemExit: {e.code}"
    except BaseException as e:  # noqa: BLE001 - the snippet's failure is the result
        res["ok"] = False
        tb = traceback.extract_tb(e.__traceback__)
        where = next((f"line {f.lineno}" for f in reversed(tb) if f.filename == "snippet.py"), "")
        res["error"] = f"{type(e).__name__}: {str(e).strip()[:400]} ({where})"
    sys.stdout = sys.__stdout__
    res["stdout"] = out.getvalue()[-4000:]
    data = json.dumps(res).encode()
    with os.fdopen(wfd, "wb") as w:
        w.write(data)
    os._exit(0)


def run_one(source: str) -> dict:
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        signal.alarm(LIMIT_S)
        _child(source, w)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        data = f.read()
    _, status = os.waitpid(pid, 0)
    if data:
        return json.loads(data)
    return {"ok": False, "stdout": "", "error": f"child died (status {status})"}


def main() -> None:
    import torch

    items = json.load(sys.stdin)
    # asked in a child: torch.cuda.is_available() in this process would make every later
    # fork fail with "Cannot re-initialize CUDA in forked subprocess"
    probe = run_one(
        "import json, torch\n"
        "print(json.dumps({'version': torch.__version__, 'cuda_build': torch.version.cuda,\n"
        "    'cuda_available': torch.cuda.is_available(),\n"
        "    'accelerator': str(torch.accelerator.current_accelerator(True))\n"
        "    if hasattr(torch, 'accelerator') else None,\n"
        "    'device_name': torch.cuda.get_device_name() if torch.cuda.is_available() else ''}))\n")
    info = json.loads(probe["stdout"]) if probe["ok"] else {"error": probe["error"]}
    info["id"] = "__torch__"
    assert torch.__version__  # imported once here, before the forks
    results = [info]
    for item in items:
        res = run_one(item["source"])
        res["id"] = item["id"]
        results.append(res)
    json.dump(results, sys.stdout)


if __name__ == "__main__":
    main()
