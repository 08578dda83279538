"""Decoding of source files and offset <-> (row, column) conversion."""
from __future__ import annotations

import bisect
import codecs
import re
from dataclasses import dataclass
from itertools import accumulate

# Python's tokenizer ends lines at \r\n, \r and \n only (not at \f, \v or U+2028,
# which str.splitlines() would also split on).
_NEWLINE = re.compile(r"\r\n|\r|\n")


@dataclass
class SourceFile:
    """A file's text as the engine sees it, and what is needed to write it back unchanged."""

    text: str
    encoding: str = "utf-8"
    bom: bool = False
    errors: str = "strict"  # "surrogateescape": bytes that do not decode are kept as they are

    @classmethod
    def from_bytes(cls, data: bytes, lenient: bool = False) -> "SourceFile":
        """Python's decoding (BOM, coding cookie, else UTF-8). lenient (shell scripts, which
        the shell runs whatever their bytes): bytes that do not decode, or a cookie that
        names no encoding, do not stop the read; every byte comes back out of to_bytes."""
        import tokenize
        import io

        bom = data.startswith(codecs.BOM_UTF8)
        try:
            encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        except SyntaxError as e:
            # a cookie naming an unknown encoding, or contradicting the BOM: Python refuses
            # to run the file, so it is not read as UTF-8 either (DL902)
            if not lenient and str(e).startswith(("unknown encoding", "encoding problem")):
                raise LookupError(str(e)) from None
            encoding = "utf-8"  # undecodable bytes on the first lines: the decode says where
        if encoding == "utf-8-sig":
            encoding = "utf-8"
        body = data[len(codecs.BOM_UTF8):] if bom else data
        try:
            return cls(body.decode(encoding), encoding, bom)
        except UnicodeDecodeError:
            if not lenient:
                raise
            return cls(body.decode(encoding, "surrogateescape"), encoding, bom, "surrogateescape")

    def to_bytes(self, text: str | None = None) -> bytes:
        out = (self.text if text is None else text).encode(self.encoding, self.errors)
        return codecs.BOM_UTF8 + out if self.bom else out


def newline_of(text: str) -> str:
    """The file's dominant line ending, used for lines a fix inserts."""
    m = _NEWLINE.search(text)
    return m.group(0) if m else "\n"


class Locator:
    """Maps character offsets to 1-based rows and columns and back; columns count characters."""

    __slots__ = ("text", "_starts")

    def __init__(self, text: str):
        self.text = text
        if "\r" in text:
            self._starts = [0, *[m.end() for m in _NEWLINE.finditer(text)]]
        else:  # the same starts, from the lines' lengths (~4x faster)
            self._starts = list(accumulate(map((1).__add__, map(len, text.split("\n")[:-1])),
                                           initial=0))

    @property
    def line_count(self) -> int:
        return len(self._starts)

    def line_start(self, row: int) -> int:
        """Offset of the first character of 1-based row."""
        if row - 1 >= len(self._starts):
            return len(self.text)
        return self._starts[row - 1]

    def line_end(self, row: int) -> int:
        """Offset just past the last character of 1-based row (before its newline)."""
        if row >= len(self._starts):
            return len(self.text)
        end = self._starts[row]
        while end > self._starts[row - 1] and self.text[end - 1] in "\r\n":
            end -= 1
        return end

    def line(self, row: int) -> str:
        return self.text[self.line_start(row):self.line_end(row)]

    def offset(self, row: int, utf8_col: int) -> int:
        """Offset of an `ast` position: 1-based row, column in UTF-8 bytes."""
        start = self.line_start(row)
        if utf8_col == 0:
            return start
        line = self.text[start:self.line_end(row)]
        if line.isascii():
            return start + utf8_col
        return start + len(line.encode("utf-8")[:utf8_col].decode("utf-8", errors="ignore"))

    def rowcol(self, offset: int) -> tuple[int, int]:
        """1-based (row, column) of an offset."""
        row = bisect.bisect_right(self._starts, offset)
        return row, offset - self._starts[row - 1] + 1
