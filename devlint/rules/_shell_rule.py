"""The shape shared by the rules over shell scripts (DL302, DL303).

Their examples are shell scripts: tests/shell runs them through `devlint.shell`, and the Python
rule-example harness (which parses with `ast`) skips rules with `shell = True`. A Python file
gives them nothing; a shell file goes through `check_shell`, which each rule binds to its
module's `check`. No evidence principle reads shell scripts."""
from __future__ import annotations

from devlint.rules.base import Rule


class ShellRule(Rule):
    exempt_by = ()
    shell = True

    def check(self, facts):  # Python files: nothing to do; shell files go through check_shell
        return iter(())
