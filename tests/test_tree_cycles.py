"""A linted file's tree is freed as soon as the linter lets go of it, without the cyclic
collector: the CLI runs with the collector off and collects only once many young objects have
piled up, so a tree a reference cycle holds (a recursive closure capturing the analysis that
holds the tree) would be kept, and paid for by a collection, for every file. Linting leaves
no cyclic garbage that holds a syntax node."""
from __future__ import annotations

import ast
import gc

from devlint.api import check_source
from devlint.rules import registry

EXAMPLES = [ex for r in registry.all_rules() if not getattr(r, "shell", False)
            for kind in ("valid", "invalid") for ex in getattr(r, kind)]


def _garbage_nodes(lint) -> list:
    """The syntax nodes (and the functions) that only the cyclic collector frees after `lint`."""
    enabled = gc.isenabled()
    gc.disable()
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        lint()
        gc.collect()
        return [o for o in gc.garbage if isinstance(o, ast.AST)] + \
            [o.__qualname__ for o in gc.garbage if type(o).__name__ == "function"
             and any(isinstance(c.cell_contents, ast.AST) for c in o.__closure__ or ()
                     if _full(c))]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if enabled:
            gc.enable()


def _full(cell) -> bool:
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


def test_linting_the_rule_examples_leaves_no_tree_to_the_collector():
    assert len(EXAMPLES) > 100

    def lint():
        for ex in EXAMPLES:
            check_source(ex.source, ex.path, profile=ex.profile)

    assert _garbage_nodes(lint) == []
