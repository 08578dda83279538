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
import shutil
import signal
import sys
import tempfile
import traceback
import warnings

LIMIT_S = 60


def _child(source: str, wfd: int, workdir: str) -> None:
    out = io.StringIO()
    res = {"ok": True, "stdout": "", "error": ""}
    try:
        # the parent made `workdir` and removes it, whatever happens here; the snippet's own
        # temporary files (`tempfile.mkdtemp()`) go inside it too
        os.chdir(workdir)
        os.environ["TMPDIR"] = workdir
        tempfile.tempdir = workdir
        # a one-process torch.distributed world for `init_process_group(...)` with env://
        for k, v in (("RANK", "0"), ("LOCAL_RANK", "0"), ("WORLD_SIZE", "1"),
                     ("MASTER_ADDR", "127.0.0.1"), ("MASTER_PORT", str(20000 + os.getpid() % 20000))):
            os.environ.setdefault(k, v)
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


def _start(source: str) -> tuple[int, int, str]:
    """(child pid, read end of its pipe, its working directory, made here: the parent
    removes it in _finish, also when the child hit the time limit or crashed)."""
    workdir = tempfile.mkdtemp(prefix="devlint-rt-")
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        signal.alarm(LIMIT_S)
        _child(source, w, workdir)
    os.close(w)
    return pid, r, workdir


def _finish(pid: int, r: int, workdir: str, status=None) -> dict:
    try:
        # the child writes a few kB at most, once, just before it exits: no pipe deadlock
        with os.fdopen(r, "rb") as f:
            data = f.read()
        if status is None:
            _, status = os.waitpid(pid, 0)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    if data:
        return json.loads(data)
    return {"ok": False, "stdout": "", "error": f"child died (status {status})"}


def run_one(source: str) -> dict:
    return _finish(*_start(source))


def run_all(items: list, jobs: int) -> list:
    """Each item in its own child, `jobs` at a time (DEVLINT_RUNTIME_JOBS)."""
    results: dict = {}
    running: dict = {}
    todo = list(items)
    try:
        while todo or running:
            while todo and len(running) < jobs:
                item = todo.pop(0)
                pid, r, workdir = _start(item["source"])
                running[pid] = (item["id"], r, workdir)
            pid, status = os.wait()
            if pid in running:
                iid, r, workdir = running.pop(pid)
                res = _finish(pid, r, workdir, status)
                res["id"] = iid
                results[iid] = res
    finally:
        # interrupted (Ctrl-C, a crash here): stop the children, remove their directories
        for pid, (_, r, workdir) in running.items():
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except OSError:
                pass
            os.close(r)
            shutil.rmtree(workdir, ignore_errors=True)
    return [results[i["id"]] for i in items]


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
    jobs = max(1, int(os.environ.get("DEVLINT_RUNTIME_JOBS", "1")))
    results = [info, *run_all(items, jobs)]
    json.dump(results, sys.stdout)


if __name__ == "__main__":
    main()
