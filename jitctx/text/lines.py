"""Bytes to lines: the binary probe, UTF-8 with replacement, BOM, line ends.

Owns the text rules of DESIGN section 2, in one place for every reader
(head/tail, grep's backends and context lines, instruction files): binary
means a NUL byte in the first 8 KiB; text is UTF-8 with replacement (and a
result says so); a BOM is stripped; ``\\r\\n`` ends a line and no ``\\r`` is
ever returned; lines split on ``\\n`` only. Does not own opening files (``policy``).
"""

from __future__ import annotations

__all__ = [
    "BINARY_PROBE",
    "BOM",
    "LONE_CR",
    "clean_line",
    "decode",
    "is_binary",
    "normalize",
    "split_lines",
    "strip_bom",
    "trim_partial",
]

BINARY_PROBE = 8192
BOM = b"\xef\xbb\xbf"
LONE_CR = "\u240d"  # a carriage return inside a line is shown as this, never returned raw


def is_binary(head: bytes) -> bool:
    """Binary means a NUL byte in the first 8 KiB."""
    return b"\0" in head[:BINARY_PROBE]


def strip_bom(data: bytes) -> bytes:
    return data[len(BOM) :] if data.startswith(BOM) else data


def decode(data: bytes) -> tuple[str, bool]:
    """UTF-8 with replacement, BOM stripped; returns (text, replaced)."""
    data = strip_bom(data)
    try:
        return data.decode("utf-8"), False
    except UnicodeDecodeError:
        return data.decode("utf-8", "replace"), True


def normalize(data: bytes) -> bytes:
    """A whole file's bytes as searched: BOM stripped, ``\\r\\n`` as ``\\n``."""
    data = strip_bom(data)
    return data.replace(b"\r\n", b"\n") if b"\r" in data else data


def clean_line(line: str) -> str:
    """One line's text as returned: a trailing ``\\r`` dropped, any other shown as U+240D."""
    if line.endswith("\r"):
        line = line[:-1]
    return line.replace("\r", LONE_CR) if "\r" in line else line


def split_lines(text: str) -> list[str]:
    """Split on ``\\n`` only; ``\\r\\n`` ends a line; no ``\\r`` is ever returned (see clean_line)."""
    if not text:
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [clean_line(ln) for ln in lines]


def trim_partial(raw: bytes) -> bytes:
    """Drop an incomplete UTF-8 sequence at the end of ``raw`` (a read that stopped mid-character)."""
    for k in range(1, min(4, len(raw)) + 1):
        b = raw[-k]
        if b & 0xC0 != 0x80:  # the lead byte (or ASCII) of the last sequence
            need = 1 if b < 0x80 else 2 if b >> 5 == 0b110 else 3 if b >> 4 == 0b1110 else 4 if b >> 3 == 0b11110 else 1
            return raw[:-k] if need > k else raw
    return raw
