"""`devlint server` end to end: a real LSP session over stdio with the installed command
(JSON-RPC framed with Content-Length, as editors speak it)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from queue import Empty, Queue

import pytest

import pygls  # noqa: F401  (the test extra installs it; users: `devlint[server]`)

SRC = '''import torch


def run(x):
    y = x.to("cuda")
    torch.cuda.synchronize()
    return y
'''


class Client:
    def __init__(self, cwd: Path):
        self.proc = subprocess.Popen([sys.executable, "-m", "devlint", "server"], cwd=cwd,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        self.next_id = 0
        self.messages: Queue = Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        out = self.proc.stdout
        while True:
            headers = {}
            while True:
                line = out.readline()
                if not line:
                    return
                line = line.decode().strip()
                if not line:
                    break
                k, v = line.split(":", 1)
                headers[k.lower()] = v.strip()
            body = out.read(int(headers["content-length"]))
            self.messages.put(json.loads(body))

    def send(self, msg: dict):
        data = json.dumps({"jsonrpc": "2.0", **msg}).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(data) + data)
        self.proc.stdin.flush()

    def request(self, method, params):
        self.next_id += 1
        rid = self.next_id
        self.send({"id": rid, "method": method, "params": params})
        return self.wait(lambda m: m.get("id") == rid and "method" not in m)

    def notify(self, method, params):
        self.send({"method": method, "params": params})

    def wait(self, pred, timeout=60):
        skipped = []
        try:
            while True:
                m = self.messages.get(timeout=timeout)
                if m.get("method") in ("workspace/configuration", "client/registerCapability",
                                       "window/workDoneProgress/create"):
                    self.send({"id": m["id"], "result": None})
                    continue
                if pred(m):
                    return m
                skipped.append(m)
        except Empty:
            raise AssertionError(f"no matching message; got {skipped}") from None
        finally:
            for m in skipped:
                self.messages.put(m)

    def diagnostics(self, uri, version=None):
        m = self.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                      and m["params"]["uri"] == uri
                      and (version is None or m["params"].get("version") == version))
        return m["params"]["diagnostics"]

    def close(self):
        try:
            self.request("shutdown", None)
            self.notify("exit", None)
            self.proc.wait(timeout=20)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
            for f in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
                f.close()


def _apply(text: str, edits: list[dict]) -> str:
    lines = text.splitlines(keepends=True)
    starts = [0]
    for ln in lines:
        starts.append(starts[-1] + len(ln))

    def off(p):
        return starts[p["line"]] + p["character"] if p["line"] < len(lines) else len(text)

    for e in sorted(edits, key=lambda e: off(e["range"]["start"]), reverse=True):
        a, b = off(e["range"]["start"]), off(e["range"]["end"])
        text = text[:a] + e["newText"] + text[b:]
    return text


@pytest.fixture
def session(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.devlint]\nprofile = "torch"\n'
                                            'target-torch = "2.8"\n')
    c = Client(tmp_path)
    init = c.request("initialize", {"processId": os.getpid(), "rootUri": tmp_path.as_uri(),
                                    "capabilities": {}})
    c.notify("initialized", {})
    yield c, tmp_path, init["result"]
    c.close()


def _open(c, path: Path, text: str, version=1):
    uri = path.as_uri()
    c.notify("textDocument/didOpen", {"textDocument": {
        "uri": uri, "languageId": "python", "version": version, "text": text}})
    return uri


def test_lsp_diagnostics_actions_fix_all_hover(session):
    c, root, init = session
    caps = init["capabilities"]
    assert caps["codeActionProvider"] and caps["hoverProvider"]
    path = root / "pkg" / "model.py"
    path.parent.mkdir()
    uri = _open(c, path, SRC)
    diags = c.diagnostics(uri, 1)
    codes = sorted(d["code"] for d in diags)
    # the same findings as the command line, in the same places
    cli = subprocess.run([sys.executable, "-m", "devlint", "check", "--output-format", "json",
                          "--stdin-filename", str(path), "-"], input=SRC, text=True,
                         capture_output=True, cwd=root)
    expected = json.loads(cli.stdout)
    assert codes == sorted(d["code"] for d in expected) and len(codes) == 2
    to = next(d for d in diags if d["range"]["start"]["line"] == 4)
    assert to["range"]["start"]["character"] == SRC.splitlines()[4].index('"cuda"') \
        or to["range"]["start"]["character"] == SRC.splitlines()[4].index(".to")
    assert to["source"] == "devlint" and to["codeDescription"]["href"].startswith("http")

    # quick fixes at the `.to("cuda")` line: its fix and a noqa action
    res = c.request("textDocument/codeAction", {
        "textDocument": {"uri": uri}, "range": to["range"],
        "context": {"diagnostics": [to], "only": ["quickfix"]}})["result"]
    titles = [a["title"] for a in res]
    assert any(t.startswith(to["code"]) for t in titles), titles
    assert f"Disable {to['code']} for this line" in titles
    fix = next(a for a in res if a["title"].startswith(to["code"]))
    edits = fix["edit"]["documentChanges"][0]["edits"]
    fixed_one = _apply(SRC, edits)
    assert '"cuda"' not in fixed_one.splitlines()[4] and fixed_one != SRC
    compile(fixed_one, "model.py", "exec")
    noqa = next(a for a in res if a["title"].startswith("Disable"))
    with_noqa = _apply(SRC, noqa["edit"]["documentChanges"][0]["edits"])
    assert f"# noqa: {to['code']}" in with_noqa.splitlines()[4]

    # fix all: the same text as `devlint check --fix` on stdin
    res = c.request("textDocument/codeAction", {
        "textDocument": {"uri": uri},
        "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
        "context": {"diagnostics": [], "only": ["source.fixAll"]}})["result"]
    assert [a["kind"] for a in res] == ["source.fixAll.devlint"]
    fixed = _apply(SRC, res[0]["edit"]["documentChanges"][0]["edits"])
    cli_fix = subprocess.run([sys.executable, "-m", "devlint", "check", "--fix", "-q",
                              "--stdin-filename", str(path), "-"], input=SRC, text=True,
                             capture_output=True, cwd=root)
    assert fixed == cli_fix.stdout

    # hover names the rule
    hov = c.request("textDocument/hover", {"textDocument": {"uri": uri},
                                           "position": to["range"]["start"]})["result"]
    assert to["code"] in hov["contents"]["value"]

    # a change that removes the hardcodings clears the diagnostics
    c.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2},
                                        "contentChanges": [{"text": cli_fix.stdout}]})
    assert c.diagnostics(uri, 2) == []


def test_lsp_shell_and_config_resolution(session, tmp_path):
    c, root, _ = session
    sh = root / "run.sh"
    uri = _open(c, sh, "CUDA_VISIBLE_DEVICES=0 python train.py\n")
    diags = c.diagnostics(uri, 1)
    assert [d["code"] for d in diags] and diags[0]["range"]["start"]["line"] == 0
    # a file the configuration excludes gets no findings, as with --force-exclude
    (root / "pyproject.toml").write_text('[tool.devlint]\nextend-exclude = ["gen"]\n')
    gen = root / "gen" / "x.py"
    gen.parent.mkdir()
    uri = _open(c, gen, SRC)
    assert c.diagnostics(uri, 1) == []
