"""Principle: a CUDA test over nothing but CUDA stream-ordering bookkeeping chooses no device.

```python
handle = torch.distributed.isend(tensor, dst)
if tensor.is_cuda:
    tensor.record_stream(torch.cuda.current_stream(tensor.device))
handles.append(handle)   # every device: the tensor is retained until the send completes

if t.device.type == "cuda":
    copy_streams[t.device] = torch.cuda.current_stream(t.device)   # for an event later
```
`record_stream`, an event recorded on a CUDA stream, a CUDA stream saved for an event to be
recorded on it: the bookkeeping that CUDA's caching allocator and its asynchronous copies need
so that memory is not reused, or a host copy read, before a stream is done with it. Off CUDA
the asynchronous machinery it serves does not run (the copy is synchronous, the tensor is
retained another way), so the test picks the CUDA half of a device-aware design, not a CPU
path (judged FP: vLLM's `isend` beside its self-retention, sglang's conditioning cache that
copies synchronously off CUDA, Megatron-LM's asynchronous sampling copy whose non-CUDA path is
a synchronous `.cpu()`).
Evidence: the `if` with a tensor's or a device's CUDA test and no `else`, whose body holds
only calls of `record_stream`, `record`, `wait_stream` or `wait_event` as statements and
assignments (to a name, an attribute or an item) of a CUDA stream or event
(`torch.cuda.current_stream(...)`, `torch.cuda.default_stream(...)`, `torch.cuda.Event(...)`)
or of a name or attribute (an event handed on), with at least one such call or a CUDA stream
saved; the arguments of the calls are of the same kinds, and `record` is an event's, on a
CUDA stream (`ev.record(torch.cuda.current_stream(d))`, or a name the body binds to one) or
an event the body makes (`ev = torch.cuda.Event(); ev.record()`): a
`record` of anything else (`stats.record(t)`, `timer.record()`) orders nothing. So is a side stream made only for
CUDA where the statement before sets the same name or attribute to None (`self.delayed =
None`, then `if dev.type == "cuda": self.delayed = Handler(d2h_stream=torch.cuda.Stream())`:
without it the work runs in order on the current stream, synchronously). The evidence is the
`if`'s line.
Limits: a body that names the generic stream API (`torch.Event`, `torch.Stream`,
`torch.accelerator`, `get_device_module`, a device module) keeps its finding: its author meant
every accelerator, and without the event another one races (judged TP: vLLM's Mooncake
connector, `if tensor.device.type == "cuda": ready = torch.Event(); ready.record(...)`); so
does any other work in the body (a synchronize, which every device needs: judged TP in
transformers' pipeline parallel; a move, a kernel, a computation), and an `if` with an `else`
or `elif` (a choice between behaviours, for the other principles to judge).
"""
from __future__ import annotations

import ast

from devlint.evidence import Reason

PRINCIPLE = "stream-order"
_ORDERING = frozenset({"record_stream", "record", "wait_stream", "wait_event"})
_CUDA_STREAMS = frozenset({"torch.cuda.current_stream", "torch.cuda.default_stream",
                           "torch.cuda.Event", "torch.cuda.Stream"})
_GENERIC = frozenset({"accelerator", "get_device_module", "device_module", "Event", "Stream"})


def stream_order_reason(stmt: ast.If, qualname, path: str | None,
                        before=None) -> Reason | None:
    """`stmt` tests a tensor or a device for CUDA; `qualname(node)` resolves a callee's dotted
    name through the file's imports; `before`: the statement before it in its block."""
    if stmt.orelse or not stmt.body:
        return None
    if _side_stream(stmt.body, before, qualname):
        return Reason(PRINCIPLE, "the branch only makes a CUDA side stream where the code "
                      "otherwise holds None (no stream: the work runs in order on the "
                      "current one)", path, stmt.lineno)
    orders = False
    streams = set()  # the names the body binds to a CUDA stream
    events = set()  # ... and to a CUDA event

    def value(v) -> bool:
        nonlocal orders
        if isinstance(v, (ast.Name, ast.Attribute)):
            return True
        if isinstance(v, ast.Call) and not v.keywords \
                and (qualname(v.func) or "") in _CUDA_STREAMS \
                and all(isinstance(a, (ast.Name, ast.Attribute, ast.Constant)) for a in v.args):
            orders = True
            return True
        return False

    for st in stmt.body:
        for n in ast.walk(st):
            if isinstance(n, ast.Attribute) and n.attr in _GENERIC \
                    and not (qualname(n) or "").startswith("torch.cuda.") \
                    or isinstance(n, ast.Name) and n.id in _GENERIC:
                return None
        if isinstance(st, ast.Expr) and isinstance(st.value, ast.Call) \
                and isinstance(st.value.func, ast.Attribute) \
                and st.value.func.attr in _ORDERING and not st.value.keywords \
                and all(value(a) for a in st.value.args) \
                and (st.value.func.attr != "record" or _on_cuda_stream(st.value, streams,
                                                                       qualname)
                     or _name_in(st.value.func.value, events)):
            orders = True
        elif isinstance(st, ast.Assign) and all(
                isinstance(t, (ast.Name, ast.Attribute, ast.Subscript)) for t in st.targets) \
                and value(st.value):
            if _cuda_stream(st.value, qualname):
                streams.update(t.id for t in st.targets if isinstance(t, ast.Name))
            elif isinstance(st.value, ast.Call) \
                    and (qualname(st.value.func) or "") == "torch.cuda.Event":
                events.update(t.id for t in st.targets if isinstance(t, ast.Name))
            continue
        else:
            return None
    if not orders:
        return None
    return Reason(PRINCIPLE, "the branch only orders CUDA streams (record_stream, an event "
                  "recorded, a stream saved for one): bookkeeping of CUDA's asynchronous "
                  "work, which does not run elsewhere", path, stmt.lineno)


def _cuda_stream(v, qualname) -> bool:
    return isinstance(v, ast.Call) and (qualname(v.func) or "") in _CUDA_STREAMS \
        and (qualname(v.func) or "") != "torch.cuda.Event"


def _name_in(node, names) -> bool:
    return isinstance(node, ast.Name) and node.id in names


def _on_cuda_stream(call, streams, qualname) -> bool:
    """`ev.record(torch.cuda.current_stream(d))`, `ev.record(s)` with `s` bound in the body to
    one: an event recorded on a CUDA stream. A bare `x.record(...)` of anything else (a
    timer, a metric, a recorder) orders no stream."""
    return len(call.args) == 1 and (_cuda_stream(call.args[0], qualname) or (
        isinstance(call.args[0], ast.Name) and call.args[0].id in streams))


def _side_stream(body, before, qualname) -> bool:
    """`self.copier = None`, then `if dev.type == "cuda": self.copier = Copier(
    stream=torch.cuda.Stream(device=dev))`: one assignment of a value built on a new CUDA
    stream to the name or attribute the statement before sets to None, and nothing else."""
    if len(body) != 1 or not isinstance(body[0], ast.Assign) or len(body[0].targets) != 1:
        return False
    target = body[0].targets[0]
    if not isinstance(target, (ast.Name, ast.Attribute)):
        return False
    if isinstance(before, ast.Assign) and len(before.targets) == 1:
        prior, value = before.targets[0], before.value
    elif isinstance(before, ast.AnnAssign):
        prior, value = before.target, before.value
    else:
        return False
    if not (isinstance(value, ast.Constant) and value.value is None
            and ast.dump(prior).replace("Store", "") == ast.dump(target).replace("Store", "")):
        return False
    stream = False
    for n in ast.walk(body[0].value):
        q = qualname(n) if isinstance(n, (ast.Attribute, ast.Name)) else None
        if isinstance(n, ast.Attribute) and n.attr in _GENERIC and not (q or "").startswith(
                "torch.cuda.") or isinstance(n, ast.Name) and n.id in _GENERIC:
            return False
        if isinstance(n, ast.Call) and (qualname(n.func) or "") == "torch.cuda.Stream":
            stream = True
    return stream

