"""Realistic snippets, one or more per fix form (issue 13: "every fix form executed").

Each snippet is a small complete program that prints what it computed, written the way CUDA
code is written: where the original runs, the fixed program must print the same; where the
original fails only because it demands CUDA, the fixed program must run. `targets` lists the
`target-torch` values whose forms it exercises (each only on a torch at least that new).
"""
from __future__ import annotations

from dataclasses import dataclass

ALL = ("2.6", "2.7", "2.8", "2.9", "2.10")


@dataclass(frozen=True)
class Snippet:
    name: str
    source: str
    targets: tuple = ALL
    profile: str = "torch"
    # a `[tool.devlint]` configuration the snippet is fixed with (a project's own roles, as
    # `devlint init` writes them); its profile replaces `profile`
    config: str = ""


S = Snippet
SNIPPETS = [
    # DL106 cuda-or-cpu-fallback: device-type, device-object, a user's choice
    S("dl106-type-string", '''import torch
device = "cuda" if torch.cuda.is_available() else "cpu"
x = torch.arange(6.0, device=device).reshape(2, 3)
print(device in ("cuda", "xpu", "mps", "npu", "cpu"), (x @ x.T).tolist())
'''),
    S("dl106-device-object", '''import torch
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.manual_seed(0)
model = torch.nn.Linear(3, 2).to(device)
out = model(torch.ones(4, 3, device=device))
print(out.shape, out.device == device, round(out.sum().item(), 4))
'''),
    S("dl106-two-devices", '''import torch
d = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")
print(torch.zeros(2, device=d).device.type == d.type)
'''),
    S("dl106-negated", '''import torch
d = "cpu" if not torch.cuda.is_available() else "cuda"
print(torch.ones(2, device=d).sum().item())
'''),
    S("dl106-user-choice", '''import torch
use_gpu = False
d = torch.device("cuda" if use_gpu else "cpu")
print(torch.ones(2, device=d).tolist(), d)
'''),
    # DL101 device-literal-to / DL102 cuda-method: the inferred device
    S("dl101-to-literal", '''import torch
x = torch.arange(4.0).to("cuda")
print((x * 2).cpu().tolist())
'''),
    S("dl101-indexed", '''import torch
x = torch.arange(3).to("cuda:0")
print(x.sum().item())
'''),
    S("dl101-training-loop", '''import torch
torch.manual_seed(0)
model = torch.nn.Linear(2, 1)
model = model.to("cuda")
loader = [(torch.ones(4, 2) * i, torch.ones(4, 1)) for i in range(3)]
total = 0.0
for images, labels in loader:
    images = images.to("cuda")
    labels = labels.to("cuda", non_blocking=True)
    total += torch.nn.functional.mse_loss(model(images), labels).item()
print(round(total, 4))
'''),
    S("dl101-destination", '''import torch


def load_into(dst, src):
    dst.copy_(src.to("cuda"))
    return dst


dst = torch.zeros(3)
print(load_into(dst, torch.arange(3.0)).tolist())
'''),
    S("dl102-module-and-tensor", '''import torch
torch.manual_seed(0)
m = torch.nn.Linear(2, 2).cuda()
x = torch.ones(1, 2).cuda(non_blocking=True)
print(m(x).shape)
'''),
    S("dl102-assigned-later-read", '''import torch as th


def make():
    x = th.ones(2).cuda()
    print(x.device.type in ("cuda", "xpu", "mps", "npu", "cpu"))
    return x.sum().item()


print(make())
'''),
    S("dl102-index", '''import torch
x = torch.ones(2).cuda(0)
print(x.tolist())
'''),
    # DL103 device-literal-argument
    S("dl103-factories", '''import torch
a = torch.zeros(2, 3, device="cuda")
b = torch.arange(4, device="cuda:0")
g = torch.Generator(device="cuda")
g.manual_seed(0)
print(a.sum().item(), b.tolist(), g.initial_seed())
'''),
    S("dl103-map-location", '''import io
import torch
buf = io.BytesIO()
torch.save({"w": torch.arange(3.0)}, buf)
buf.seek(0)
sd = torch.load(buf, map_location="cuda")
print(sd["w"].tolist())
'''),
    S("dl103-parameter-default", '''import torch


def make(n, device="cuda"):
    """Zeros on the device."""
    return torch.zeros(n, device=device)


print(make(3).tolist(), make(2, device="cpu").tolist())
'''),
    S("dl103-device-context", '''import torch
with torch.device("cuda"):
    x = torch.ones(2)
print(x.tolist())
'''),
    S("dl103-set-default-device", '''import torch
torch.set_default_device("cuda")
print(torch.ones(2).sum().item())
'''),
    S("dl103-torch-device-index", '''import torch
d = torch.device("cuda", 0)
print(torch.zeros(1, device=d).item())
'''),
    # DL104 device-literal-constant
    S("dl104-module-constant", '''import torch
DEVICE = "cuda"
x = torch.ones(3, device=DEVICE)
print(x.sum().item())
'''),
    S("dl104-indexed-list", '''import torch
DEVICES = ["cuda:0"]
print([torch.zeros(1, device=d).item() for d in DEVICES])
'''),
    S("dl104-platform-list-untouched", '''DDP_RANK_DEVICES = ["cuda", "xpu"]
print(DDP_RANK_DEVICES)
'''),
    # DL105 device-fstring
    S("dl105-forms", '''import torch
i = 0
a = f"cuda:{i}"
b = "cuda:%d" % i
c = "cuda:" + str(i)
print([torch.zeros(1, device=x).item() for x in (a, b, c)])
'''),
    # DL201 is-cuda-assert: on a machine without an accelerator the original fails on purpose
    # (the assert stands in device-generic code: under a CUDA guard it is CUDA's own)
    S("dl201-assert", '''import torch


def total(x):
    assert x.is_cuda
    return x.sum().item()


x = torch.ones(2)
if torch.accelerator.is_available():
    print(total(x.to(torch.accelerator.current_accelerator())))
else:
    print(x.sum().item())
'''),
    # DL203 cuda-only-skip
    S("dl203-unittest-gate", '''import unittest
import torch


class T(unittest.TestCase):
    @unittest.skipIf(not torch.cuda.is_available(), "requires CUDA")
    def test_gpu(self):
        self.assertTrue(True)


r = unittest.TextTestRunner(stream=open("/dev/null", "w")).run(
    unittest.defaultTestLoader.loadTestsFromTestCase(T))
print(r.testsRun, len(r.failures), len(r.errors))
'''),
    # DL401 torch-cuda-api
    S("dl401-queries", '''import torch
n = torch.cuda.device_count()
use_amp = torch.cuda.is_available()
ranks = list(range(n))
print(len(ranks) == n, use_amp in (True, False))
'''),
    S("dl401-synchronize", '''import torch
x = torch.ones(2)
torch.cuda.synchronize()
print(x.tolist())
'''),
    S("dl401-current-device", '''import torch
i = torch.cuda.current_device()
torch.cuda.set_device(i)
print(i >= 0)
'''),
    S("dl401-empty-cache-statement", '''import torch


def step():
    y = torch.ones(3) * 2
    torch.cuda.empty_cache()
    return y.sum().item()


print(step())
'''),
    # torch.get_device_module() forms (target 2.6-2.8 where torch.accelerator lacks the API)
    S("dl401-device-module-memory", '''import torch


def measure(n):
    torch.cuda.reset_peak_memory_stats()
    torch.cuda.reset_accumulated_memory_stats()
    y = torch.ones(n).cumsum(0)
    if n > 2: torch.cuda.empty_cache()
    return y[-1].item()


print(measure(4))
''', ("2.6", "2.7", "2.8")),
    S("dl401-rng-restore", '''import torch
torch.manual_seed(0)
torch.cuda.set_rng_state(torch.get_rng_state())
print(torch.rand(2).tolist())
'''),
    S("dl401-rng-state", '''import torch
state = torch.cuda.get_rng_state()
seed = torch.cuda.initial_seed()
print(state.numel() > 0, seed >= 0)
'''),
    S("dl401-memory-counters", '''import torch
before = torch.cuda.memory_allocated()
peak = torch.cuda.max_memory_allocated()
reserved = torch.cuda.memory_reserved()
stats = torch.cuda.memory_stats()
print(before >= 0, peak >= 0, reserved >= 0, isinstance(stats, dict))
if False: torch.cuda.empty_cache()
'''),
    S("dl401-mem-get-info", '''import torch
free, total = torch.cuda.mem_get_info()
print(0 <= free <= total)
''', ("2.10",)),
    S("dl401-device-context", '''import torch
with torch.cuda.device(0):
    print(torch.ones(1).item())
''', ("2.8", "2.10")),
    # a guard's fix rewrites its body's device values with it (rules/_guard_body.py)
    S("dl401-guard-device-values", '''import io
import torch
device = "cpu"
torch.manual_seed(0)
model = torch.nn.Linear(2, 2)
x = torch.ones(1, 2)
buf = io.BytesIO()
torch.save({"w": torch.arange(2.0)}, buf)
if torch.cuda.is_available():
    device = "cuda"
    i = torch.cuda.current_device()
    model = model.cuda()
    x = x.cuda(non_blocking=True).to("cuda").cuda(i)
    y = torch.zeros(2, device="cuda")
    buf.seek(0)
    w = torch.load(buf, map_location="cuda")["w"]
    buf.seek(0)
    v = torch.load(buf, map_location=lambda storage, loc: storage.cuda(i))["w"]
    d = torch.device("cuda")
    e = torch.device(f"cuda:{i}")
    first_device = "cuda:0"
    f = torch.zeros(1, device="cuda:0").to(first_device)
    assert f.device.type == "cuda"
    with torch.cuda.amp.autocast(enabled=True):
        z = model(x)
    scaler = torch.cuda.amp.GradScaler()
print(device in ("cpu", "cuda", "xpu", "mps", "npu"), model(x).shape, x.device.type == device)
'''),
    S("dl203-gate-device-values", '''import unittest
import torch


class T(unittest.TestCase):
    @unittest.skipIf(not torch.cuda.is_available(), "requires CUDA")
    def test_gpu(self):
        device = "cuda"
        x = torch.ones(2, device="cuda").cuda()
        self.assertEqual(x.device.type, device)


r = unittest.TextTestRunner(stream=open("/dev/null", "w")).run(
    unittest.defaultTestLoader.loadTestsFromTestCase(T))
print(r.testsRun, len(r.failures), len(r.errors), len(r.skipped))
'''),
    S("dl401-stream", '''import torch
s = torch.cuda.current_stream()
s.synchronize()
print(True)
'''),
    # a project's device layer (`devlint init`'s roles): the device-object and device-type
    # forms derived from its `device` role, right on every torch release (even below 2.6)
    S("dl103-project-device-derived", '''import torch


def get_current_device():
    if torch.cuda.is_available():
        return torch.device("cuda", torch.cuda.current_device())
    if hasattr(torch, "xpu") and torch.xpu.is_available():
        return torch.device("xpu", torch.xpu.current_device())
    return torch.device("cpu")


def zeros(n, device: torch.device = torch.device("cuda")):
    return torch.zeros(n, device=device)


with torch.autocast("cuda", enabled=False):
    x = zeros(3)
print(x.sum().item(), x.dtype)
''', ("2.2", "2.6"), config='''[tool.devlint]
profile = "proj"
[tool.devlint.profiles.proj]
extends = "torch"
device = { expr = "get_current_device()", import = "from snippet import get_current_device" }
'''),
    # torch below 2.6 (no torch.accelerator): the device, its type and object as a ladder over
    # the device modules, and autocast enabled where that ladder found an accelerator
    S("dl103-below-accelerator-ladder", '''import torch

DEVICE = "cuda"


def run(n, index=0):
    x = torch.arange(float(n), device="cuda").to("cuda")
    d = torch.device("cuda")
    name = f"cuda:{index}"
    with torch.autocast("cuda"):
        y = x * 2
    return y.sum().item(), y.dtype, d.type == DEVICE, name.split(":")[0] == d.type


print(run(4))
''', ("1.13", "2.2")),
    # torch.cuda's API below 2.6: the questions ask each device module (getattr defaults), the
    # calls go through the device ladder's module (`getattr(torch, <ladder>)`: torch.cpu
    # without an accelerator), and the guarded body's device follows the ladder
    S("dl401-below-accelerator-forms", '''import torch


def run(n):
    x = torch.arange(float(n))
    if torch.cuda.is_available():
        x = x.to("cuda")
        torch.cuda.set_device(torch.cuda.current_device())
    torch.cuda.synchronize() if x.is_cuda else None
    return x.sum().item(), torch.cuda.device_count() >= 0, x.device.type


print(run(4))
''', ("2.2", "2.5")),
    # DL402 cuda-stream-event
    S("dl402-stream-event", '''import torch
s = torch.cuda.Stream()
e = torch.cuda.Event(enable_timing=True)
e.record(s)
e.synchronize()
print(e.query())
'''),
    # DL403 cuda-amp: on a machine without CUDA the originals are disabled (a warning)
    S("dl403-autocast", '''import torch
a = torch.arange(4.0).reshape(2, 2)
with torch.autocast("cuda"):
    y = a @ a
print(y.dtype, y.tolist())
'''),
    S("dl403-cuda-amp-autocast", '''import torch
from torch.cuda import amp
a = torch.arange(4.0).reshape(2, 2)
with amp.autocast():
    y = a @ a
print(y.dtype, y.tolist())
'''),
    S("dl403-grad-scaler", '''import torch
scaler = torch.cuda.amp.GradScaler()
loss = torch.tensor(2.0, requires_grad=True)
print(scaler.scale(loss).item(), scaler.is_enabled())
''', ("2.6", "2.7")),
    S("dl403-amp-grad-scaler", '''import torch
scaler = torch.amp.GradScaler("cuda")
loss = torch.tensor(2.0, requires_grad=True)
print(scaler.scale(loss).item(), scaler.is_enabled())
''', ("2.6", "2.7")),
    # DL404 cuda-manual-seed
    S("dl404-seed-helper", '''import random
import torch


def seed_all(s):
    random.seed(s)
    torch.cuda.manual_seed(s)
    torch.cuda.manual_seed_all(s)


seed_all(0)
print(torch.rand(2).tolist())
'''),
    S("dl404-seed-alone", '''import torch
torch.cuda.manual_seed_all(3)
print(torch.initial_seed() >= 0)
'''),
    # the CPU stream must not change (torch.manual_seed would reseed it: the H200 showed it)
    S("dl404-seed-between-cpu-draws", '''import torch
torch.manual_seed(1)
torch.cuda.manual_seed_all(7)
a = torch.rand(2).tolist()
torch.cuda.manual_seed(7)
print(a, torch.rand(2).tolist())
'''),
    # the device's stream: seeded the same on a GPU
    S("dl404-seed-device-draws", '''import torch
torch.cuda.manual_seed(3)
if torch.cuda.is_available():
    print(torch.rand(2, device="cuda").tolist())
torch.cuda.manual_seed_all(4)
if torch.cuda.is_available():
    print(torch.rand(2, device="cuda").tolist())
print(torch.rand(2).tolist())
'''),
    S("dl404-seed-value", '''import torch
g = torch.cuda.manual_seed(0)
print(g is None, torch.rand(1).tolist())
'''),
    # DL501 hardcoded-dist-backend: a one-process group
    S("dl501-init-process-group", '''import os
import tempfile
import torch
import torch.distributed as dist
store = os.path.join(tempfile.mkdtemp(), "store")
dist.init_process_group("nccl", init_method="file://" + store, rank=0, world_size=1)
print(dist.get_world_size())
dist.destroy_process_group()
'''),
    S("dl501-backend-keyword", '''import os
import tempfile
import torch.distributed as dist
store = os.path.join(tempfile.mkdtemp(), "store")
dist.init_process_group(backend="nccl", init_method="file://" + store, rank=0, world_size=1)
print(dist.get_rank())
dist.destroy_process_group()
'''),
    # below 2.6: no backend (`None`), torch picks one per device; a collective on the
    # accelerator's tensor (NCCL on CUDA, like the original) and the group's size
    S("dl501-below-accelerator-default-backend", '''import os
import tempfile
import torch
import torch.distributed as dist
store = os.path.join(tempfile.mkdtemp(), "store")
dist.init_process_group("nccl", init_method="file://" + store, rank=0, world_size=1)
x = torch.ones(2, device="cuda" if torch.cuda.is_available() else "cpu")
dist.all_reduce(x)
print(dist.get_world_size(), x.tolist())
dist.destroy_process_group()
''', ("2.2", "2.5")),
]
