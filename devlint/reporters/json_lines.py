"""One JSON object per line (the `json` format's objects), for streaming consumers."""
from __future__ import annotations

import json

from devlint.reporters.json import diagnostic_dict


def report(diagnostics, out, ctx) -> None:
    for d in diagnostics:
        out.write(json.dumps(diagnostic_dict(d), ensure_ascii=False) + "\n")
