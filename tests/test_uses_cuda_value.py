"""Issue 18 (values): a function that uses a value made only on CUDA (else None) on every path
runs only on CUDA (uses-cuda-value); cuda-value follows such a value down a model's
constructors; the limits keep the findings."""
from __future__ import annotations

import pytest

from devlint.api import check_source

_MOE = ("import torch\n\n\nclass MoE:\n    def __init__(self, alt_stream=None):\n"
        "        self.alt_stream = alt_stream\n\n"
        "    def forward_dual(self, x):\n        current = torch.cuda.current_stream()\n"
        "{use}        return x\n\n\n")
_MAKER = ("class Model:\n    def __init__(self):\n"
          "        s = make_stream() if current_platform.is_cuda() else None\n"
          "        self.moe = MoE(alt_stream=s)\n")


def _codes(text):
    return sorted(d.code for d in check_source(text, path="pkg/mod.py", profile="torch"))


def _exempt(text):
    from devlint.api import _settings, _to_bytes, process

    res = process(_to_bytes(text), "pkg/mod.py", _settings(None, profile="torch",
                                                                show_exempt=True))
    return res.diagnostics, {(e.code, e.principle, e.evidence) for e in res.exempt}


@pytest.mark.parametrize("use", [
    "        self.alt_stream.wait_stream(current)\n",  # an attribute
    "        with torch.cuda.stream(self.alt_stream), self.alt_stream.priority:\n"
    "            pass\n",  # in a `with` item
    "        with ctx():\n            self.alt_stream.synchronize()\n",  # in a `with` body
    "        y = self.alt_stream.query() or f(x)\n",  # the first operand is always evaluated
    # through a local alias, an item of it
    "        s = self.alt_stream\n        s.wait_stream(current)\n",
    # in both arms of an `if`
    "        if x:\n            self.alt_stream.wait_stream(current)\n"
    "        else:\n            y = self.alt_stream.query()\n            return y\n",
])
def test_exempt(use):
    diags, whys = _exempt(_MOE.format(use=use) + _MAKER)
    assert diags == []
    assert {(c, p) for c, p, _ in whys if c == "DL401"} == {("DL401", "uses-cuda-value")}


def test_reason_names_the_test_that_makes_the_value():
    diags, whys = _exempt(_MOE.format(use="        self.alt_stream.wait_stream(current)\n")
                          + _MAKER)
    assert diags == []
    assert whys == {("DL401", "uses-cuda-value", "pkg/mod.py:16")}  # `s = ... if ...`


@pytest.mark.parametrize("use", [
    # not on every path: under an `if`, a loop, a `try`, a later operand, a conditional arm
    "        if x:\n            self.alt_stream.wait_stream(current)\n",
    "        if x:\n            self.alt_stream.wait_stream(current)\n        else:\n"
    "            return x\n",
    "        if x:\n            return x\n        else:\n"
    "            self.alt_stream.wait_stream(current)\n",
    "        for _ in x:\n            self.alt_stream.wait_stream(current)\n",
    "        try:\n            self.alt_stream.wait_stream(current)\n"
    "        except AttributeError:\n            pass\n",
    "        y = x and self.alt_stream.query()\n",
    "        y = self.alt_stream.query() if x else None\n",
    "        y = [s.query() for s in x if self.alt_stream.query()]\n",
    "        f = lambda: self.alt_stream.query()\n",
    # after a return
    "        if x is None:\n            return None\n        self.alt_stream.wait_stream(current)\n",
    # a dunder exists on None
    "        name = self.alt_stream.__class__\n",
    # an error the `with` swallows
    "        with contextlib.suppress(AttributeError):\n            self.alt_stream.query()\n",
    # not used at all, only tested elsewhere
    "",
])
def test_reported(use):
    assert _codes(_MOE.format(use=use) + _MAKER) == ["DL401"]


def test_a_value_not_only_made_on_cuda_keeps_the_finding():
    # another construction passes a stream made without a CUDA test
    text = _MOE.format(use="        self.alt_stream.wait_stream(current)\n") + _MAKER \
        + "\n\nm = MoE(alt_stream=make_stream())\n"
    assert _codes(text) == ["DL401"]


def test_a_value_the_function_makes_itself_keeps_what_runs_before_its_test():
    # the function's own test makes the value: the code before that test runs anywhere
    text = ("import torch\n\n\nclass Pool:\n    def __init__(self, t):\n"
            "        torch.cuda.set_device(0)\n"
            "        if not current_platform.is_cuda():\n            raise ValueError(t)\n"
            "        self.event = make_event()\n        self.event.record()\n")
    assert _codes(text) == ["DL401"]


def test_a_local_made_here_is_its_own_test():
    # a local the function makes itself (not an alias): what runs before its test runs anywhere
    use = ("        s = make_stream() if current_platform.is_cuda() else None\n"
           "        s.wait_stream(current)\n")
    assert _codes(_MOE.format(use=use) + _MAKER) == ["DL401"]


def test_an_item_of_a_value_made_only_on_cuda():
    text = ("import torch\n\n\nclass Attn:\n    def __init__(self, streams=None):\n"
            "        self.streams = streams[:3]\n\n"
            "    def forward(self, x):\n        if self.streams is not None:\n"
            "            with torch.cuda.stream(self.streams[0]):\n                return x\n"
            "        return x\n\n\n"
            "m = Attn(streams=[make_stream()] if current_platform.is_cuda() else None)\n")
    assert _codes(text) == []


def test_a_flag_is_no_value():
    # a flag false off CUDA is tested for truth, never used as an object
    text = ("import torch\n\n\nclass A:\n    def __init__(self):\n"
            "        self.fused = current_platform.is_cuda() and ok()\n\n"
            "    def f(self):\n        torch.cuda.synchronize()\n"
            "        return self.fused.real\n")
    assert _codes(text) == ["DL401"]


# --- cuda-value down a model's constructors -------------------------------------------------
_CHAIN = ("import torch\n\n\nclass MoE:\n    def __init__(self, alt_stream=None):\n"
          "        self.alt_stream = alt_stream\n\n"
          "    def forward(self, x):\n        if self.alt_stream is not None:\n"
          "            with torch.cuda.stream(self.alt_stream):\n                return x\n"
          "        return x\n\n\n"
          "class Layer:\n    def __init__(self, alt_stream=None):\n"
          "        self.mlp = MoE(alt_stream=alt_stream)\n\n"
          "    @classmethod\n    def facts(cls, config):\n        return config\n\n\n"
          "class Stack:\n    def __init__(self, alt_stream=None):\n"
          "        self.layers = make_layers(lambda i: Layer(alt_stream=alt_stream),\n"
          "                                  facts=partial(Layer.facts, None))\n\n\n"
          "class Model:\n    def __init__(self, alt_stream=None):\n"
          "        self.model = Stack(alt_stream=alt_stream)\n\n\n"
          "class ForCausalLM:\n    def __init__(self):\n"
          "        alt_stream = get_stream() if current_platform.is_cuda() else None\n"
          "        self.model = Model(alt_stream=alt_stream)\n")


@pytest.mark.parametrize("text", [
    _CHAIN,
    # a factory's class called (not the class itself)
    _CHAIN.replace("        return config\n", "        return get_impl(config)(config)\n"),
    # from a closure of the constructor that makes the value
    _CHAIN.replace("lambda i: Layer(alt_stream=alt_stream)", "layer_fn").replace(
        "        self.layers = make_layers(",
        "        def layer_fn(i):\n            return Layer(alt_stream=alt_stream)\n\n"
        "        self.layers = make_layers("),
    # `**kw` beside the parameter named: a second value for it would be a TypeError
    _CHAIN.replace("Layer(alt_stream=alt_stream)", "Layer(**kw, alt_stream=alt_stream)"),
    _CHAIN.replace("Layer(alt_stream=alt_stream)", "Layer(*args, alt_stream=alt_stream)"),
    # through a module-level registry of layer classes, read by an item and called
    _CHAIN.replace("lambda i: Layer(alt_stream=alt_stream)", "layer_fn").replace(
        "        self.layers = make_layers(",
        "        def layer_fn(i):\n            cls = LAYERS[kinds[i]]\n"
        "            return cls(alt_stream=alt_stream)\n\n"
        "        self.layers = make_layers(").replace(
        "class Stack:", "LAYERS = {\"dense\": Layer, \"sparse\": Layer}\n\n\nclass Stack:"),
    _CHAIN.replace("lambda i: Layer(alt_stream=alt_stream)",
                   "lambda i: LAYERS[kinds[i]](alt_stream=alt_stream)").replace(
        "class Stack:", "LAYERS = {\"dense\": Layer}\n\n\nclass Stack:"),
])
def test_followed_down_the_constructors(text):
    diags, whys = _exempt(text)
    assert diags == []
    line = next(i for i, t in enumerate(text.splitlines(), 1) if "get_stream()" in t)
    assert whys == {("DL402", "cuda-value", f"pkg/mod.py:{line}")}


def test_a_closure_that_stores_into_the_name_keeps_the_finding():
    text = _CHAIN.replace("lambda i: Layer(alt_stream=alt_stream)", "layer_fn").replace(
        "        self.layers = make_layers(",
        "        def layer_fn(i):\n            nonlocal alt_stream\n"
        "            alt_stream = alt_stream or make_stream()\n"
        "            return Layer(alt_stream=alt_stream)\n\n"
        "        self.layers = make_layers(")
    assert _codes(text) == ["DL402"]


@pytest.mark.parametrize("change", [
    # a classmethod that builds the class itself: constructions the file does not name
    ("        return config\n", "        return cls(alt_stream=make_stream())\n"),
    ("        return config\n", "        return type(self)(alt_stream=make_stream())\n"),
    # a subclass: its construction runs the base's `__init__`
    ("class Stack:", "class Layer2(Layer):\n    pass\n\n\nclass Stack:"),
    # the class itself handed on
    ("partial(Layer.facts, None)", "partial(Layer, None)"),
    # `**kw` without the parameter named: it may hold any value
    ("Layer(alt_stream=alt_stream)", "Layer(**kw)"),
    # a registry handed on, or its item handed on: constructions the file does not see
    ("class Stack:", "LAYERS = {\"dense\": Layer}\nregister(LAYERS)\n\n\nclass Stack:"),
    ("class Stack:", "LAYERS = {\"dense\": Layer}\n\n\ndef build(k):\n"
                     "    cls = LAYERS[k]\n    return make(cls)\n\n\nclass Stack:"),
])
def test_constructor_chain_limits(change):
    assert _codes(_CHAIN.replace(*change)) == ["DL402"]


_FREE_SRC = '''
import torch

s = torch.cuda.Stream() if torch.cuda.is_available() else None


class K:
    def __init__(self):
        self.s = make() if current_platform.is_cuda() else None

    def m(self, x, d):
        if torch.cuda.is_available(): pass
        if not (x.shape[0] > 1 and d.ok): pass
        if d.stream is None: pass
        if x > 1: pass
        if 3: pass
        if s: pass
        if s is not None: pass
        if self.s is None: pass
        if self.s: pass
        if not self.s or x: pass
        if make() is None: pass
        if (s if x else None) is None: pass
        if s[0] is None: pass
        if d.stream: pass
'''


def test_free_tests_ask_no_value_memo():
    """`value_use._free_test`: where it says a test is free, `value_test` answers None and
    leaves the flow's memo and budget untouched (so `uses_cuda_value` may skip the walk that
    would ask it); the tests it does not call free do reach the memo or are left to it."""
    import ast

    from devlint.analysis.descent import Descent
    from devlint.analysis.triage import build_facts
    from devlint.analysis.value_use import _free_test
    from devlint.api import _settings

    facts = build_facts("pkg/mod.py", _FREE_SRC, _settings(None, profile="torch"))
    tree = facts.tree
    klass = tree.body[2]
    fn = klass.body[1]
    free = []
    for st in fn.body:
        d = Descent(facts, [])
        d._flow_init()
        before = (dict(d._names), dict(d._producers), d._budget)
        is_free = _free_test(st.test, klass)
        found = d.value_test(st.test, fn, klass)
        if is_free:
            assert found is None, ast.unparse(st.test)
            assert (d._names, d._producers, d._budget) == before, ast.unparse(st.test)
        free.append(is_free)
    assert free == [True, True, True, True, True, False, False, False, False, False, False,
                    False, False, True]
