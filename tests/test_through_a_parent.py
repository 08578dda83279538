"""`package.through_a_parent`: a module reached through a package above it, asked three ways
(a function's uses, the same where the importer must name it, the module's references)."""
from __future__ import annotations

from devlint.engine.project.package import through_a_parent


class _Texts:
    def __init__(self, texts):
        self.texts = texts

    def text(self, path):
        return self.texts.get(path)


def _ask(index, texts, **kw):
    return through_a_parent(_Texts(texts), index, "pkg.ops.mod", "pkg/ops/mod.py", **kw)


def test_a_function_reached_through_an_import_of_its_module_from_a_parent():
    index = {"pkg.ops": {"user.py": {("mod", "mod")}}}
    # every importer of the module through its parent counts ...
    assert _ask(index, {"user.py": "from pkg.ops import mod\n"}, name="fill")
    # ... unless the function must be named there (the caller walk's question)
    assert not _ask(index, {"user.py": "from pkg.ops import mod\nmod.other()\n"},
                    name="fill", named=True)
    assert _ask(index, {"user.py": "from pkg.ops import mod\nmod.fill()\n"},
                name="fill", named=True)
    assert not _ask(index, {"user.py": "from pkg.ops import mod\nmod.fill_all()\n"},
                    name="fill", named=True)


def test_a_function_reached_through_import_of_a_package_above():
    index = {"pkg.ops": {"user.py": {("*", "*")}}}
    for named in (False, True):
        assert _ask(index, {"user.py": "import pkg.ops\npkg.ops.mod.fill()\n"}, name="fill",
                    named=named)
        assert not _ask(index, {"user.py": "import pkg.ops\npkg.ops.mod.refill()\n"},
                        name="fill", named=named)
    # the module's own file is not an importer of itself
    assert not through_a_parent(_Texts({"pkg/ops/mod.py": "mod.fill()"}),
                                {"pkg.ops": {"pkg/ops/mod.py": {("mod", "mod")}}},
                                "pkg.ops.mod", "pkg/ops/mod.py", "fill")


def test_the_module_itself_reached_through_a_package_above_its_parent():
    # `from pkg import ops`, then `ops.mod`: the leaf named in the text
    index = {"pkg": {"user.py": {("ops", "ops")}}}
    assert _ask(index, {"user.py": "from pkg import ops\nops.mod.run()\n"})
    assert not _ask(index, {"user.py": "from pkg import ops\nops.model.run()\n"})
    # a test importer is left out where `skip` says so
    tests = {"pkg": {"test_user.py": {("ops", "ops")}}}
    texts = {"test_user.py": "from pkg import ops\nops.mod.run()\n"}
    assert _ask(tests, texts)
    assert not _ask(tests, texts, skip=lambda p: p.startswith("test_"))


def test_the_module_itself_from_its_own_parent_only_through_the_package():
    # `from pkg.ops import mod` is a reference judged as such, not a way around it
    assert not _ask({"pkg.ops": {"user.py": {("mod", "mod")}}},
                    {"user.py": "from pkg.ops import mod\nmod.run()\n"})
    assert _ask({"pkg.ops": {"user.py": {("*", "*")}}},
                {"user.py": "import pkg.ops\npkg.ops.mod.run()\n"})
