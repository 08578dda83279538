"""The same check inside a test suite: `pytest -p devlint.verify.pytest_plugin test_my_fix.py`
(or `pytest_plugins = ["devlint.verify.pytest_plugin"]` in the root conftest.py)."""
import torch

from devlint.verify import same_on_all_devices

from my_cases import normalize_rows, rows


def test_rows_are_normalized(device):
    # `device` comes from the plugin: this test runs once per available device ([cpu], [cuda]...).
    y = normalize_rows(rows(device))
    assert y.device.type == device.type
    torch.testing.assert_close(y.abs().amax(dim=-1).cpu(), torch.ones(4))


def test_same_on_every_device():
    # Runs the function on every device and compares each result with the CPU's (raises otherwise).
    results = same_on_all_devices(lambda device: normalize_rows(rows(device)))
    assert "cpu" in results
