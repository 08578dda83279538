"""`devlint verify --ray ADDRESS` against a local Ray cluster of two nodes on this machine (CPU
only; a custom `accelerator_type:` resource stands in for a second accelerator kind): the built-in
cases run once per kind and the verdicts equal a local run's. Plus the pure parts: kinds from node
resources, the address/target rule, the install hint, and that nothing else imports Ray."""
import json
import os
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

from devlint.verify.cli import _RAY_ADDRESS  # noqa: E402
from devlint.verify.devices import VerifyEnvironmentError  # noqa: E402
from devlint.verify.ray_cluster import import_ray, node_kind, nodes_by_kind  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _env():
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")]))}


def verify(*args, cwd):
    return subprocess.run([sys.executable, "-m", "devlint.verify", *args], cwd=cwd, capture_output=True, text=True,
                          env=_env(), timeout=600)


def test_node_kinds():
    assert node_kind({"CPU": 8.0, "GPU": 8.0, "accelerator_type:H200": 1.0}) == "H200"
    assert node_kind({"CPU": 8.0, "GPU": 2.0}) == "GPU"
    assert node_kind({"CPU": 8.0, "NPU": 8.0, "accelerator_type:Ascend910B": 1.0}) == "Ascend910B"
    assert node_kind({"CPU": 4.0, "memory": 1e9, "node:10.0.0.1": 1.0}) == "cpu"
    nodes = [
        {"NodeID": "a", "Alive": True, "Resources": {"CPU": 4.0}},
        {"NodeID": "b", "Alive": True, "Resources": {"CPU": 4.0, "GPU": 1.0, "accelerator_type:A10G": 1.0}},
        {"NodeID": "c", "Alive": False, "Resources": {"CPU": 4.0, "accelerator_type:MI300X": 1.0}},
        {"NodeID": "0", "Alive": True, "Resources": {"CPU": 4.0, "GPU": 1.0, "accelerator_type:A10G": 1.0}},
        {"NodeID": "e", "Alive": True, "Resources": {"CPU": 4.0, "accelerator_type:A100": 1.0}},
    ]
    assert list(nodes_by_kind(nodes).items()) == [("cpu", nodes[0]), ("A100", nodes[4]), ("A10G", nodes[3])]


def test_ray_address_or_target():
    for address in ("auto", "local", "10.0.0.1:6379", "ray://head:10001", "head-node:6379"):
        assert _RAY_ADDRESS.match(address), address
    for target in ("my_cases.py", "tests/verify_cases", "pkg.verify_cases", "C:\\cases.py"):
        assert not _RAY_ADDRESS.match(target), target


def test_without_ray_the_error_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(VerifyEnvironmentError, match=r"pip install 'devlint\[ray\]'"):
        import_ray()


def test_only_ray_cluster_imports_ray():
    code = ("import sys, devlint.cli, devlint.verify, devlint.verify.cli, devlint.verify.record; "
            "print(sorted(m for m in sys.modules if m == 'ray' or m.startswith('ray.')))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=_env())
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_ray_cluster_run_equals_local_run(tmp_path):
    pytest.importorskip("ray")
    from ray.cluster_utils import Cluster

    work = tmp_path / "work"
    work.mkdir()
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    try:
        cluster.add_node(num_cpus=1, resources={"accelerator_type:fake-kind": 1})
        cluster.wait_for_nodes()
        proc = verify("--ray", cluster.address, "--devices", "cpu", "--output-format", "json",
                      "--record", str(tmp_path / "records"), cwd=work)
    finally:
        cluster.shutdown()
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    ray_run = json.loads(proc.stdout)
    assert ray_run["devices"] == ["cpu/cpu", "fake-kind/cpu"]
    assert [r["label"] for r in ray_run["records"]] == ["cpu", "fake-kind"]
    assert sorted(os.listdir(tmp_path / "records")) == ["cpu", "fake-kind"]

    local = verify("--devices", "cpu", "--output-format", "json", cwd=work)
    assert local.returncode == 0, local.stderr
    local_run = json.loads(local.stdout)
    assert [c["name"] for c in ray_run["cases"]] == [c["name"] for c in local_run["cases"]]
    for mine, theirs in zip(ray_run["cases"], local_run["cases"]):
        assert mine["status"] == theirs["status"], mine["name"]
        for column in ray_run["devices"]:
            got, want = mine["results"][column], theirs["results"]["cpu"]
            assert got["status"] == want["status"], (mine["name"], column)
            assert got["message"] == want["message"] or column != "cpu/cpu" or want["status"] != "n/a"
            assert (got["original"] or {}).get("status") == (want["original"] or {}).get("status")
            if column == "fake-kind/cpu" and got["status"] == "ok":
                assert got["compared_with"] == "cpu/cpu" and got["figures"]["failed"] == 0
    assert ray_run["summary"] == local_run["summary"]
