"""Stage 2: stdlib-`ast` triage.

One parse with `ast`, import/alias resolution, and a single descent that only enters the
statements whose lines hold a trigger token. It collects the candidate nodes every rule looks at
(calls, device strings, `torch.cuda` references, asserts, constants) together with where they
stand (function, class, enclosing CUDA guards), so rules never walk the tree themselves.
"""
from __future__ import annotations

import ast

from devlint.analysis.descent import Descent
from devlint.analysis.model import FileFacts, collect_imports, resolve_profile
from devlint.analysis.rows import hot_rows, leading_rows
from devlint.evidence.cuda_graph_capture import module_reason as graph_module
from devlint.evidence.cuda_kernel_source import module_reason as kernel_source_module
from devlint.evidence.flash_attention_impl import module_reason as fa_impl_module
from devlint.evidence.gated_benchmark import module_reason as gated_benchmark_module
from devlint.evidence.kernel_benchmark import module_reason as kernel_benchmark_module
from devlint.evidence.nvidia_tool import module_reason as nvidia_tool_module
from devlint.evidence.entry_gate import entry_gate_reason
from devlint.evidence.cuda_only_module import (
    _cuda_only_reason, _profile_folder_reason, _runtime_reason, _vendor_family_reason,
)
from devlint.evidence.stated_requirement import stated_requirement_reason


def build_facts(path: str, text: str, settings, tree: ast.Module | None = None) -> FileFacts:
    """Parse (unless given a tree) and collect the candidates. Raises SyntaxError."""
    if tree is None:
        tree = ast.parse(text, filename=path)
    aliases: dict = {}
    collect_imports(tree.body, aliases)
    _star_torch(tree, aliases)
    profile = resolve_profile(getattr(settings, "profile", "auto"), path, aliases)
    facts = FileFacts(path, text, profile, settings, None, tree, aliases)
    # `skip-cuda-only-paths = false`: a file's folder and name are no evidence, its imports
    # and CUDA runtime use still are
    by_path = getattr(settings, "skip_cuda_only_paths", True)
    facts.cuda_only = (_cuda_only_reason(path, tree, by_path=by_path)
                       or (_profile_folder_reason(path, profile) if by_path else None)
                       or _runtime_reason(tree, text, path)
                       or stated_requirement_reason(tree, path)
                       or kernel_source_module(tree, text, path)
                       or entry_gate_reason(tree, text, path)
                       or nvidia_tool_module(tree, text, path)
                       or fa_impl_module(tree, text, path)
                       or kernel_benchmark_module(tree, path)
                       or gated_benchmark_module(tree, text, path)
                       or (graph_module(tree, text, path) if by_path else None))
    facts.cuda_alike = (facts.cuda_only or _cuda_only_reason(path, tree, alike=True,
                                                             by_path=by_path)
                        or (_vendor_family_reason(path) if by_path else None))
    leading_rows(facts)
    hot = hot_rows(facts)
    if hot:
        Descent(facts, hot).run()
    return facts




def _star_torch(tree, aliases: dict) -> None:
    """`from .llama import *` then `torch.cuda.empty_cache()`: a module that uses the name
    `torch` without binding it anywhere gets it from its star import (the only other source
    would be builtins), and no package but torch is imported as `torch`."""
    if "torch" in aliases or not any(isinstance(st, ast.ImportFrom)
                                     and any(a.name == "*" for a in st.names)
                                     for st in tree.body):
        return
    used = False
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and n.id == "torch":
            if not isinstance(n.ctx, ast.Load):
                return
            used = True
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) \
                and n.name == "torch":
            return
        elif isinstance(n, ast.arg) and n.arg == "torch":
            return
        elif isinstance(n, (ast.Import, ast.ImportFrom)) \
                and any((a.asname or a.name.split(".")[0]) == "torch" for a in n.names):
            return
    if used:
        aliases["torch"] = "torch"
