"""JUnit XML: one test suite per file with findings, one failed test case per finding."""
from __future__ import annotations

import xml.etree.ElementTree as ET
from itertools import groupby

from devlint.reporters import cell_prefix, relative_path


def report(diagnostics, out, ctx) -> None:
    root = ET.Element("testsuites", name="devlint", tests=str(max(1, len(diagnostics))),
                      failures=str(len(diagnostics)), errors="0")
    if not diagnostics:
        suite = ET.SubElement(root, "testsuite", name="devlint", tests="1", failures="0",
                              errors="0")
        ET.SubElement(suite, "testcase", name="No errors found", classname="devlint")
    for path, group in groupby(diagnostics, key=lambda d: d.path):
        group = list(group)
        rel = relative_path(path)
        suite = ET.SubElement(root, "testsuite", name=rel, tests=str(len(group)),
                              failures=str(len(group)), errors="0")
        for d in group:
            row, col = d.location
            case = ET.SubElement(suite, "testcase", name=f"org.devlint.{d.code}",
                                 classname=rel, file=rel, line=str(1 if d.cell else row))
            failure = ET.SubElement(case, "failure", message=d.message, type=d.code)
            where = f"{cell_prefix(d).replace(':', ', ')}line {row}, col {col}"
            failure.text = f"{where}, {d.code} {d.message}"
    ET.indent(root)
    out.write('<?xml version="1.0" encoding="UTF-8"?>\n')
    out.write(ET.tostring(root, encoding="unicode"))
    out.write("\n")
