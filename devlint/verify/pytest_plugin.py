"""pytest plugin: a ``device`` fixture over every available device, and ``same_on_all_devices``.

Enable it in a ``conftest.py`` with ``pytest_plugins = ["devlint.verify.pytest_plugin"]`` or on the
command line with ``-p devlint.verify.pytest_plugin`` (there is deliberately no ``pytest11`` entry
point: a ``device`` fixture in every pytest run of every environment devlint is installed in would
clash with projects' own)::

    def test_scale(device):                      # runs once per device: [cpu], [cuda], ...
        x = torch.ones(3, device=device)
        assert (x * 2).sum().item() == 6

    def test_same(device):
        same_on_all_devices(lambda d: torch.arange(5, device=d).cumsum(0))

``--devlint-devices cpu,cuda`` narrows the devices (default: all available).
"""
from __future__ import annotations

import pytest

from .runner import same_on_all_devices

__all__ = ["same_on_all_devices"]


def pytest_addoption(parser):
    group = parser.getgroup("devlint-verify")
    group.addoption("--devlint-devices", dest="devlint_devices", default=None, metavar="cpu,cuda,...",
                    help="devices the `device` fixture runs over (default: every available one)")


def _parametrized_by_user(metafunc) -> bool:
    for mark in metafunc.definition.iter_markers("parametrize"):
        names = mark.args[0] if mark.args else mark.kwargs.get("argnames", "")
        if isinstance(names, str):
            names = [n.strip() for n in names.split(",")]
        if "device" in names:
            return True
    return False


def pytest_generate_tests(metafunc):
    if "device" not in metafunc.fixturenames or _parametrized_by_user(metafunc):
        return
    from .devices import VerifyEnvironmentError, select_devices

    option = metafunc.config.getoption("devlint_devices", default=None)
    requested = [d for d in option.split(",") if d.strip()] if option else None
    try:
        devices = select_devices(requested)
    except VerifyEnvironmentError as exc:
        raise pytest.UsageError(f"devlint.verify: {exc}") from exc
    metafunc.parametrize("device", devices, indirect=True, ids=devices)


@pytest.fixture
def device(request):
    """A ``torch.device`` of each available device type (the test runs once per device)."""
    import torch

    return torch.device(getattr(request, "param", "cpu"))
