"""Issue 18 (values): an early exit for each element of a loop (`for v in videos: if
v.device.type != "cuda": return None`) establishes CUDA for the code after the loop
(cuda-guard); a loop that may skip the test or stop early does not."""
from __future__ import annotations

import pytest

from devlint.api import check_source

_FN = ("import torch\n\n\ndef save(videos):\n    kept = []\n    for video in videos:\n"
       "{body}"
       "    free, _ = torch.cuda.mem_get_info(kept[0].device)\n    return free\n")
_EXIT = ("        if not (video.dim() == 4 and video.device.type == \"cuda\"):\n"
         "            return None\n")


def _codes(text):
    return sorted(d.code for d in check_source(text, path="pkg/mod.py", profile="torch"))


@pytest.mark.parametrize("body", [
    _EXIT + "        kept.append(video)\n",
    "        video = video.contiguous()\n" + _EXIT + "        kept.append(video)\n",
    # a raise leaves too
    "        if video.device.type != \"cuda\":\n            raise ValueError(video)\n"
    "        kept.append(video)\n",
])
def test_exempt(body):
    assert _codes(_FN.format(body=body)) == []


def test_reason_is_the_exit_in_the_loop():
    from devlint.api import _settings, _to_bytes, process

    res = process(_to_bytes(_FN.format(body=_EXIT + "        kept.append(video)\n")),
                  "pkg/mod.py", _settings(None, profile="torch", show_exempt=True))
    assert res.diagnostics == []
    assert {(e.code, e.principle, e.evidence) for e in res.exempt} == {
        ("DL401", "cuda-guard", "pkg/mod.py:7")}


@pytest.mark.parametrize("body", [
    # an element may skip the test, or the loop stop before testing them all
    "        if video.dim() == 3:\n            continue\n" + _EXIT + "        kept.append(video)\n",
    _EXIT + "        kept.append(video)\n        if len(kept) > 2:\n            break\n",
    # the exit is not a statement of the loop's body
    "        if video.dim() == 4:\n" + _EXIT.replace("        ", "            ")
    + "        kept.append(video)\n",
    # `continue` skips the element only: no exit of the function
    _EXIT.replace("return None", "continue") + "        kept.append(video)\n",
    # ruling the CPU out is no CUDA test
    "        if video.device.type == \"cpu\":\n            return None\n"
    "        kept.append(video)\n",
])
def test_reported(body):
    assert _codes(_FN.format(body=body)) == ["DL401"]


def test_a_loop_with_an_else_is_no_guard():
    text = _FN.format(body=_EXIT + "        kept.append(video)\n").replace(
        "    free, _", "    else:\n        kept = []\n    free, _")
    assert _codes(text) == ["DL401"]
