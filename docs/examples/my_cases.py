"""Verification cases for your own fixed code: `devlint verify my_cases.py`.

`normalize_rows_original` is the code as it was (devlint reported DL101 on its `.to("cuda")`
calls); `normalize_rows` is the code after `devlint --fix --unsafe-fixes` (the device is now the
input's). The case runs the fixed code on every device, compares each device's result with the
CPU's, and runs the original wherever it can.
"""
import torch

from devlint.verify import case, expect_close, not_applicable, note


def normalize_rows_original(x):
    scale = x.abs().amax(dim=-1, keepdim=True).to("cuda")
    return x.to("cuda") / scale


def normalize_rows(x):
    scale = x.abs().amax(dim=-1, keepdim=True).to(x.device)
    return x / scale


def rows(device, dtype=torch.float32):
    # Draw on the CPU, then move: every device gets the same numbers.
    gen = torch.Generator().manual_seed(0)
    return torch.randn(4, 16, generator=gen).to(dtype).to(device)


def summary(y):
    # What the case returns: tensors, or nested dicts/tuples/lists of them. The original must
    # return the same structure (it is compared leaf by leaf with the fixed code's result).
    return {"y": y, "argmax": y.abs().argmax(dim=-1)}


@case(name="my.normalize_rows", original=lambda device: summary(normalize_rows_original(rows(device))))
def normalize_rows_case(device):
    """Row-wise max-abs normalisation, float32."""
    y = normalize_rows(rows(device))
    expect_close("every row's max-abs is 1", torch.ones(4), y.abs().amax(dim=-1))
    return summary(y)


@case(name="my.normalize_rows[bf16]", tolerance={"bfloat16": 2e-2})
def normalize_rows_bf16(device):
    """The same in bfloat16, with a looser threshold than the default 1e-2."""
    return normalize_rows(rows(device, torch.bfloat16))


@case(name="my.fused_kernel")
def fused_kernel(device):
    """A Triton kernel: needs a GPU and Triton; n/a elsewhere, with the reason."""
    if device.type == "cpu":
        not_applicable("the fused kernel needs a GPU")
    try:
        import triton
    except ImportError:
        not_applicable("triton is not installed")
    note(f"triton {triton.__version__}")
    return normalize_rows(rows(device))  # stands in for the kernel's launch
