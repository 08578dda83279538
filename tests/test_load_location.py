"""evidence.load_location: a CPU fallback whose only use is `torch.load(..., map_location=)`
of a checkpoint used as a mapping says only where the checkpoint is deserialized."""
from __future__ import annotations

import pytest

HEAD = "import torch\n\n\n"
FALLBACK = '    device = "cuda" if torch.cuda.is_available() else "cpu"\n'


def _codes(src: str):
    from devlint.api import check_source
    from devlint.settings import Settings

    return sorted({d.code for d in check_source(src, "scripts/convert.py", Settings())})


@pytest.mark.parametrize("body", [
    # loaded, subscripted, handed to a converter
    "    sd = torch.load(p, map_location=device)['model_ema']\n    model.load_state_dict(conv(sd))\n",
    # a parameter replaced when None, a key test, a mapping method
    "    ck = torch.load(p, map_location=device)\n    if 'state_dict' in ck:\n"
    "        ck = ck['state_dict']\n    for k in ck.keys():\n        print(k)\n",
    # handed straight to load_state_dict
    "    model.load_state_dict(torch.load(p, map_location=device))\n",
])
def test_a_checkpoint_mapping_is_exempt(body):
    assert _codes(HEAD + "def convert(p, model):\n" + FALLBACK + body) == []


def test_a_parameter_replaced_when_none():
    src = (HEAD + "def convert(p, device=None):\n    if device is None:\n" + "    " + FALLBACK
           + "        ck = torch.load(p, map_location=device)\n    else:\n"
           "        ck = torch.load(p, map_location=device)\n    return conv(ck)\n")
    assert _codes(src) == []


@pytest.mark.parametrize("body", [
    # the loaded object is a model, then run
    "    m = torch.load(p, map_location=device)\n    return m(x)\n",
    "    m = torch.load(p, map_location=device)\n    m.eval()\n",
    # the device is used for compute as well
    "    sd = torch.load(p, map_location=device)\n    return x.to(device) @ sd['w']\n",
    # the loaded object is not kept as a mapping (tuple-unpacked)
    "    a, b = torch.load(p, map_location=device)\n    return a\n",
])
def test_other_uses_stay_reported(body):
    assert "DL106" in _codes(HEAD + "def run(p, x):\n" + FALLBACK + body)


def test_module_level_only_in_a_script():
    body = ('device = "cuda" if torch.cuda.is_available() else "cpu"\n'
            "sd = torch.load('w.pt', map_location=device)\nsave(conv(sd))\n")
    assert "DL106" in _codes(HEAD + body)
    assert _codes(HEAD + body + "\nif __name__ == '__main__':\n    main()\n") == []
