"""worker.py leaves nothing behind: each snippet's directory (and what the snippet put in its
temporary directory) is removed by the parent, also when the child crashed or ran past the
time limit (issue 13: 17,000 `devlint-rt-*` directories were left in /tmp)."""
from __future__ import annotations

import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import worker  # noqa: E402


def test_snippet_directories_are_removed_whatever_the_outcome(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(worker, "LIMIT_S", 1)
    items = [
        {"id": "ok", "source": "import os, tempfile\nd = tempfile.mkdtemp()\n"
                               "open(os.path.join(d, 'f'), 'w').write('x')\n"
                               "open('here', 'w').write('x')\nprint(os.getcwd())\n"},
        {"id": "raises", "source": "open('here', 'w').write('x')\nraise ValueError('no')\n"},
        {"id": "crash", "source": "import os\nopen('here', 'w').write('x')\nos._exit(3)\n"},
        {"id": "killed", "source": "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n"},
        {"id": "timeout", "source": "open('here', 'w').write('x')\nwhile True:\n    pass\n"},
    ]
    res = {r["id"]: r for r in worker.run_all(items, jobs=2)}
    assert res["ok"]["ok"] and res["ok"]["stdout"].startswith(str(tmp_path))
    assert "ValueError: no" in res["raises"]["error"]
    for iid in ("crash", "killed", "timeout"):
        assert not res[iid]["ok"] and "child died" in res[iid]["error"], res[iid]
    assert os.listdir(tmp_path) == []
    assert worker.run_one("print(1)\n")["stdout"] == "1\n"
    assert os.listdir(tmp_path) == []
