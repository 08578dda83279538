"""`--statistics`: findings counted per rule."""
from __future__ import annotations

from collections import Counter

from devlint.reporters.concise import marker


def write_statistics(diagnostics, out, unsafe, fmt):
    """`--statistics`: one row per rule (count, code, fixable marker, name), as text or JSON."""
    counts = Counter(d.code for d in diagnostics)
    names = {d.code: d.name for d in diagnostics}
    fixable = {d.code for d in diagnostics if marker(d, unsafe)}
    if fmt in ("json", "json-lines"):
        import json

        rows = [{"code": c, "name": names[c], "count": n, "fixable": c in fixable}
                for c, n in counts.most_common()]
        if fmt == "json":
            json.dump(rows, out, indent=2)
            out.write("\n")
        else:
            out.writelines(json.dumps(r) + "\n" for r in rows)
        return
    width = max((len(str(n)) for n in counts.values()), default=1)
    for code, n in counts.most_common():
        out.write(f"{str(n).rjust(width)}\t{code}\t{'[*] ' if code in fixable else '    '}"
                  f"{names[code]}\n")
