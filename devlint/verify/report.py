"""Text (device x case table) and JSON output of a verify run."""
from __future__ import annotations

import json

from .compare import worst
from .runner import CaseResult, DeviceResult, VerifyRun

JSON_SCHEMA_VERSION = 1

_CELL = {"ok": "ok", "mismatch": "MISMATCH", "error": "ERROR", "n/a": "n/a"}
_ORIG_CELL = {"ok": "ok", "fails": "fails", "mismatch": "MISMATCH", "n/a": "n/a"}


def _num(x) -> str:
    return "-" if x is None else f"{x:.2e}"


def _cell(res: DeviceResult) -> str:
    text = _CELL[res.status]
    if res.status == "ok" and res.is_reference:
        text += " (ref)"
    return text


def _figures(comparisons) -> str:
    w = worst(comparisons)
    return f"max rel-RMS {_num(w['rel_rms'])}, max abs {_num(w['max_abs'])} over {w['leaves']} leaves"


def _where(where: str | None) -> str:
    return f" (at {where})" if where else ""


def _details(result: CaseResult) -> list[str]:
    lines = [f"{result.case.name}  [{result.status}]  {result.case.target or ''}".rstrip()]
    if result.case.description:
        lines.append(f"    {result.case.description}")
    for d, res in result.devices.items():
        head = f"    {d}: "
        if res.status == "n/a" and res.message:
            lines.append(head + f"n/a: {res.message}")
        elif res.status == "error":
            lines.append(head + f"ERROR: {res.message}{_where(res.where)}")
        elif res.status == "mismatch":
            lines.append(head + f"MISMATCH: {res.message}{_where(res.where)}")
        elif res.is_reference:
            lines.append(head + "reference" + (f" ({res.message})" if res.message else ""))
        elif res.compared_with:
            lines.append(head + f"agrees with {res.compared_with}: {_figures(res.comparisons)}")
        else:
            lines.append(head + f"ok ({res.message})" if res.message else head + "ok")
        if res.status == "mismatch" and res.comparisons:
            lines.append(f"      vs {res.compared_with}: {_figures(res.comparisons)}")
        for text in res.notes:
            lines.append(f"      note: {text}")
        for chk in res.checks:
            w = worst(chk.comparisons)
            lines.append(
                f"      check {chk.name!r}: {'ok' if chk.ok else 'FAILED'}; "
                f"rel-RMS {_num(w['rel_rms'])}, max abs {_num(w['max_abs'])}"
            )
        o = res.original
        if o is not None:
            if o.status == "fails":
                lines.append(f"      original fails here: {o.message}{_where(o.where)}")
            elif o.status == "ok":
                what = o.message or f"agrees with the fixed code: {_figures(o.comparisons)}"
                lines.append(f"      original runs here and {what}" if not o.message else f"      original: {what}")
            elif o.status == "n/a":
                lines.append(f"      original n/a: {o.message}")
            else:
                lines.append(f"      original MISMATCH: {o.message}{_where(o.where)}")
            for text in o.notes:
                lines.append(f"        original note: {text}")
            for chk in (c for c in o.checks if not c.ok):
                w = worst(chk.comparisons)
                lines.append(
                    f"        original check {chk.name!r}: {'ok' if chk.ok else 'FAILED'}; "
                    f"rel-RMS {_num(w['rel_rms'])}, max abs {_num(w['max_abs'])}"
                )
    return lines


def _environment_line(env: dict) -> str:
    return ("torch " + str(env.get("torch")) + (f", triton {env['triton']}" if env.get("triton") else "")
            + "".join(f"; {desc}" for d, desc in (env.get("devices") or {}).items() if d != "cpu"))


def _header(run: VerifyRun) -> list[str]:
    n = len(run.results)
    cases = f"{n} case{'s' if n != 1 else ''}"
    if run.records is None:
        return [f"devlint verify: {cases} on {', '.join(run.devices)} (reference: {run.reference})",
                _environment_line(run.environment)]
    lines = [f"devlint verify: {cases} from {len(run.records)} record{'s' if len(run.records) != 1 else ''} "
             f"(reference: {run.reference})"]
    for rec in run.records:
        where = f", {rec['path']}" if rec.get("path") else ""
        lines.append(f"{rec['label']}: {_environment_line(rec.get('environment') or {})}"
                     f" (recorded {rec.get('created')} on {rec.get('host')}{where})")
    return lines


def render_text(run: VerifyRun) -> str:
    n = len(run.results)
    lines = [*_header(run), ""]
    rows: list[list[str]] = [["case", *run.devices]]
    for r in run.results:
        rows.append([r.case.name, *(_cell(r.devices[d]) for d in run.devices)])
        if r.case.original is not None:
            rows.append(["  original", *(
                _ORIG_CELL[r.devices[d].original.status] if r.devices[d].original else "-"
                for d in run.devices)])
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        lines.append("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip())
    lines.append("")
    lines.append("details:")
    for r in run.results:
        lines.extend("  " + line for line in _details(r))
    counts = {s: sum(1 for r in run.results if r.status == s) for s in ("ok", "mismatch", "error", "n/a")}
    lines.append("")
    lines.append(
        f"{n} cases: {counts['ok']} ok, {counts['mismatch']} mismatch, {counts['error']} error, "
        f"{counts['n/a']} n/a"
    )
    return "\n".join(lines) + "\n"


def _device_dict(res: DeviceResult) -> dict:
    out = {
        "status": res.status,
        "message": res.message,
        "where": res.where,
        "is_reference": res.is_reference,
        "compared_with": res.compared_with,
        "figures": worst(res.comparisons) if res.comparisons else None,
        "comparisons": [c.to_dict() for c in res.comparisons],
        "checks": [c.to_dict() for c in res.checks],
        "notes": list(res.notes),
        "original": None,
    }
    o = res.original
    if o is not None:
        out["original"] = {
            "status": o.status,
            "message": o.message,
            "where": o.where,
            "figures": worst(o.comparisons) if o.comparisons else None,
            "comparisons": [c.to_dict() for c in o.comparisons],
            "checks": [c.to_dict() for c in o.checks],
            "notes": list(o.notes),
        }
    return out


def to_json_dict(run: VerifyRun) -> dict:
    from devlint._version import __version__

    return {
        "schema_version": JSON_SCHEMA_VERSION,
        "devlint_version": __version__,
        "environment": run.environment,
        "records": run.records,
        "devices": run.devices,
        "reference": run.reference,
        "cases": [
            {
                "name": r.case.name,
                "target": r.case.target,
                "description": r.case.description,
                "has_original": r.case.original is not None,
                "status": r.status,
                "reference": r.reference,
                "results": {d: _device_dict(res) for d, res in r.devices.items()},
            }
            for r in run.results
        ],
        "summary": {
            "cases": len(run.results),
            **{s: sum(1 for r in run.results if r.status == s) for s in ("ok", "mismatch", "error", "n/a")},
            "exit_code": run.exit_code,
        },
    }


def render_json(run: VerifyRun) -> str:
    return json.dumps(to_json_dict(run), indent=2) + "\n"
