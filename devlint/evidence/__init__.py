"""The evidence layer: the reasons devlint has for NOT reporting a candidate.

One module per principle; each states the principle, its evidence and its limits, and returns
a `Reason` (principle, human text, where the evidence is) instead of a bare bool, so that a
`--show-exempt` can print it:

- `cuda_guard`: code under a test that already established CUDA (`if t.is_cuda:`,
  `if current_platform.is_cuda():`, the else-branch of the opposite test, an early exit).
- `cuda_alike_guard`: the `torch.cuda` API under a test for CUDA or ROCm (`is_cuda_alike()`),
  for the API rules only; `project_policy`: a project's own rule against some `torch.cuda`
  calls, which outranks a guard.
- `platform_ladder`: an if/elif chain that gives CUDA and another platform their own arms;
  which tests name a platform at all.
- `several_platforms`: a collection or a boolean test that also names another accelerator.
- `capability_gate`: a CUDA query joined to a compute-capability test.
- `redundant_seed`: a CUDA seed beside `torch.manual_seed` of the same value.
- `fast_path`: a tensor's CUDA branch beside a generic alternative (DL202); `host_copy`: a
  CUDA branch whose arms both copy to the host (DL202); `stream_order`: a CUDA branch that
  only orders CUDA streams (`record_stream`, an event recorded; DL202).
- `cuda_only_module`: a file CUDA-only by construction: its folder, its name, its imports of
  a CUDA-only stack, its use of CUDA IPC / the CUDA runtime, a profile's platform folder, a
  vendor family with only NVIDIA/AMD backends (`vocabulary` holds the shared word lists,
  `devlint/data/cuda_only.toml`).
- `cuda_only_scope`: a function or class CUDA-only by its name, its imports or its direct use
  of the CUDA runtime; an argument of a call into a CUDA-only module.
- `capability`: gates that require a CUDA build or an NVIDIA compute capability (used by the
  two above), and tests that ask which build torch is (`torch.version.hip`).
- `not_a_device`: code that never puts a value on a device (a type annotation, a
  `TYPE_CHECKING` block, a test that is always skipped); `dead_default`: a parameter default
  every call in its test module overrides.
- `print_only`: a CUDA test that only chooses a message.
- `cuda_kernel_source`: code that builds a kernel from CUDA C++ source (`cuda_sources=`, a
  `.cu`/`.cuh` file given to a loader), its wrappers, a module of such kernels.
- `entry_gate`: a script whose entry point stops unless the GPU has a given NVIDIA compute
  capability or AMD architecture.
- `cuda_graph_capture`: a function that captures a CUDA graph (its side-stream warm-up and
  static buffers), a test class or test module about CUDA graphs.
- `nvidia_tool`: a function or module built on `nvidia-smi`.
- `gated_benchmark`: a benchmark that skips its measurements unless the GPU is of a recent
  NVIDIA compute capability (SM89+) or a given AMD architecture.
- `flash_attention_impl`: a function or module that switches torch's attention to
  FlashAttention-3/4 (`activate_flash_attention_impl("FA3")`).
- `version_fallback`: the CUDA fallback of `hasattr(torch, "accelerator")` where the
  project's torch floor always has the API (dead code).
- `hip_device`: a ROCm (HIP) module's "cuda" device literals, which name the AMD GPU; a
  function or class named for AMD's stack (its `torch.cuda` and "cuda" are ROCm's);
  `rocm_guard`: code under a test that holds only on ROCm (`if _is_hip:`), for the device,
  tensor-test and API rules.
- `load_location`: a CPU fallback only given as `torch.load`'s `map_location=` of a
  checkpoint used as a mapping.
- `cuda_twin`: the deliberate CUDA twin of a generic helper defined next to it, a
  per-platform dispatch method, a stand-in for torch's CUDA API.
- `sibling_platforms`: CUDA and another accelerator tested side by side; `cuda_backend`: a
  test for another runtime's CUDA-only backend (ONNX Runtime's CUDA provider);
  `stated_requirement`: a module docstring that states a CUDA requirement;
  `abstract_default`: the default of an empty abstract method's parameter; `cuda_only_arm`:
  the arm of an `if` that calls a CUDA-only library; `compared_value`: a test value stored in
  a record and compared back; `dead_value`: a value assigned to a name never read;
  `cuda_build`: a test of the CUDA toolkit version (a `cuda-guard`); `mock_target`: the
  target a test patches; `cuda_value`: a value made only on CUDA (else None), tested before
  use (`devlint.analysis.flow` follows it); `uses_cuda_value`: a function that uses such a
  value as an object on every path (`devlint.analysis.value_use`); `fake_tensor`: the device of a record standing in
  for a tensor, given to mocked code, or of a tensor made under `with FakeTensorMode():`; `cuda_only_test`: the skip gate of a test that cannot
  run without CUDA; `library_gate`: a test gated on a module flag set only where a library of
  GPU kernels imports; `library_subject`: a test whose subject is such a library (named for
  it, a gate's reason naming its kernel, its own API imported in the test, a module that
  skips without it); `stated_gate`: a test whose skip gate's reason states a CUDA-specific
  subject ("needs the CUDA RoPE", "fused VAE kernels need CUDA"); `imported_flag`: a skip gate reading such a flag, or a capability flag,
  helper or skip reason, imported from a project module (`devlint.engine.project.xflags`).
- The package-level principles (CUDA-only through a project module, test doubles, functions
  only called on CUDA) are applied by the project stage, `devlint.engine.project`, which
  reads the package around a file; `test_double`, `only_called_on_cuda`,
  `calls_cuda_only` (a function that always calls a project function which cannot run
  without CUDA: a test or benchmark of a CUDA-only kernel; `default_option`: one that
  requires CUDA at an option's default, for a call that keeps it) and `package_dead_default` (a
  parameter default no call in the package uses) state them;
  `imported_gate`: a test's skip gate imported from a project module that requires CUDA;
  `imported_guard`: a value an imported project function makes only on CUDA, tested;
  `launched_worker`: a test module's worker entry that its own test launches under a CUDA
  guard; `cuda_callers`: `only-called-on-cuda` across modules, through callers of callers;
  `cuda_kernel_package`: a package below the top-level one that ships CUDA C++ sources;
  `cpu_switch`: an option whose every reader in the package only asks whether it is the CPU.

`PRINCIPLES` names them all, each with the module whose docstring states it: the one source
of `principle_summary` (`devlint rule` and docs/rules/ print it).

This layer imports only the configuration layer (data) and the standard library.
"""
from __future__ import annotations


# principle -> the module whose docstring states it (first line: "Principle: ...")
PRINCIPLES = {
    "cuda-only-module": "devlint.evidence.cuda_only_module",
    "cuda-only-scope": "devlint.evidence.cuda_only_scope",
    "cuda-guard": "devlint.evidence.cuda_guard",
    "cuda-alike-guard": "devlint.evidence.cuda_alike_guard",
    "platform-ladder": "devlint.evidence.platform_ladder",
    "several-platforms": "devlint.evidence.several_platforms",
    "capability-gate": "devlint.evidence.capability_gate",
    "redundant-seed": "devlint.evidence.redundant_seed",
    "fast-path": "devlint.evidence.fast_path",
    "not-a-device": "devlint.evidence.not_a_device",
    "test-double": "devlint.evidence.test_double",
    "only-called-on-cuda": "devlint.evidence.only_called_on_cuda",
    "calls-cuda-only": "devlint.evidence.calls_cuda_only",
    "cuda-by-default": "devlint.evidence.default_option",
    "dead-default": "devlint.evidence.package_dead_default",
    "print-only": "devlint.evidence.print_only",
    "cuda-twin": "devlint.evidence.cuda_twin",
    "sibling-platforms": "devlint.evidence.sibling_platforms",
    "cuda-backend": "devlint.evidence.cuda_backend",
    "stated-requirement": "devlint.evidence.stated_requirement",
    "abstract-default": "devlint.evidence.abstract_default",
    "cuda-only-arm": "devlint.evidence.cuda_only_arm",
    "compared-value": "devlint.evidence.compared_value",
    "dead-value": "devlint.evidence.dead_value",
    "cuda-kernel-source": "devlint.evidence.cuda_kernel_source",
    "entry-gate": "devlint.evidence.entry_gate",
    "cuda-graph-capture": "devlint.evidence.cuda_graph_capture",
    "nvidia-tool": "devlint.evidence.nvidia_tool",
    "flash-attention-impl": "devlint.evidence.flash_attention_impl",
    "mock-target": "devlint.evidence.mock_target",
    "cuda-value": "devlint.evidence.cuda_value",
    "fake-tensor": "devlint.evidence.fake_tensor",
    "imported-gate": "devlint.evidence.imported_gate",
    "imported-guard": "devlint.evidence.imported_guard",
    "launched-worker": "devlint.evidence.launched_worker",
    "hip-device": "devlint.evidence.hip_device",
    "rocm-guard": "devlint.evidence.rocm_guard",
    "load-location": "devlint.evidence.load_location",
    "host-copy": "devlint.evidence.host_copy",
    "stream-order": "devlint.evidence.stream_order",
    "version-fallback": "devlint.evidence.version_fallback",
    "self-called-on-cuda": "devlint.evidence.self_called_on_cuda",
    "kernel-benchmark": "devlint.evidence.kernel_benchmark",
    "gated-benchmark": "devlint.evidence.gated_benchmark",
    "uses-cuda-value": "devlint.evidence.uses_cuda_value",
    "cuda-only-test": "devlint.evidence.cuda_only_test",
    "library-gate": "devlint.evidence.library_gate",
    "library-subject": "devlint.evidence.library_subject",
    "stated-gate": "devlint.evidence.stated_gate",
    "imported-flag": "devlint.evidence.imported_flag",
    "cuda-choice": "devlint.evidence.cuda_choice",  # crossmod
    "cuda-reach": "devlint.evidence.cuda_reach",  # crossmod
    "cuda-kernel-package": "devlint.evidence.cuda_kernel_package",
    "cpu-switch": "devlint.evidence.cpu_switch",
}


def principle_summary(name: str) -> str:
    """The principle's one-sentence statement, from its module's docstring."""
    import importlib

    doc = importlib.import_module(PRINCIPLES[name]).__doc__ or ""
    first = " ".join(doc.strip().split("\n\n", 1)[0].split())
    return first.removeprefix("Principle:").strip()


class Reason(str):
    """Why a candidate or a file is not reported.

    A `str` (its human text), so that every caller that only asks "is there a reason?" or
    prints it keeps working, with the principle's name and where its evidence stands:
    `principle` ("cuda-only-module", "cuda-only-scope", ...), `path` and `line` (None where the
    evidence is the path itself). `location` is `path:line`; `to_dict()` is the JSON form.
    """

    principle: str
    path: str | None
    line: int | None

    def __new__(cls, principle: str, text: str, path: str | None = None,
                line: int | None = None):
        self = super().__new__(cls, text)
        self.principle = principle
        self.path = path
        self.line = line
        return self

    def __reduce__(self):  # pickles (process pool) with its fields
        return (Reason, (self.principle, str(self), self.path, self.line))

    @property
    def text(self) -> str:
        return str.__str__(self)

    @property
    def location(self) -> str | None:
        if self.path is None:
            return None
        return f"{self.path}:{self.line}" if self.line else self.path

    def to_dict(self) -> dict:
        return {"principle": self.principle, "message": self.text, "location": self.location}

    @classmethod
    def from_dict(cls, data) -> "Reason":
        """The inverse of `to_dict` (a stored reason); a plain str is a reason without a
        principle or a place (what older stores hold)."""
        if isinstance(data, str):
            return cls("exempt", data)
        where, line = data.get("location"), None
        if where and where.rpartition(":")[2].isdigit():
            where, line = where.rpartition(":")[0], int(where.rpartition(":")[2])
        return cls(data.get("principle") or "exempt", data.get("message") or "", where, line)
