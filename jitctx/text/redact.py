"""Redaction: secrets that are unmistakable, wherever they would be shown.

Owns finding, in text about to be shown, what is a secret by its form alone,
and replacing it with a marker: private-key blocks (``-----BEGIN ... PRIVATE
KEY-----`` to its ``END`` line, every line between) and the token formats of
well-known services, each chosen because its prefix and shape cannot be an
ordinary identifier (AWS access key ids, GitHub, GitLab, Slack, Stripe live
keys, Google API keys, npm, PyPI, OpenAI and Anthropic keys). A generic
"high-entropy string" rule is not used: it redacts hashes and test data, and
an agent reading code must see those. Denied files are never read at all
(``policy``); this catches a secret that sits in an ordinary file. Pure, no
I/O; the detectors are regular expressions (a well-kept detector such as
detect-secrets scans with many plugins and costs ~100x a regex per line).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = [
    "KEY_MARK",
    "NEEDLES",
    "NEEDLE_MAX",
    "Finding",
    "holds_needle",
    "key_block_lines",
    "key_state",
    "looks_like_key_body",
    "redact_bytes",
    "redact_lines",
    "redact_result",
    "redact_text",
    "redaction_note",
]

KEY_MARK = "[redacted: private key]"

_TOKENS = (
    ("AWS access key id", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    ("GitHub token", r"\bgh[pousr]_[A-Za-z0-9]{36,255}\b|\bgithub_pat_[A-Za-z0-9_]{50,255}\b"),
    ("GitLab token", r"\bglpat-[0-9A-Za-z_-]{20,}"),
    ("Slack token", r"\bxox[abposr]-[0-9A-Za-z-]{10,}|https://hooks\.slack\.com/services/T[0-9A-Z]+/B[0-9A-Z]+/[0-9A-Za-z]{16,}"),
    ("Stripe live key", r"\b(?:sk|rk)_live_[0-9A-Za-z]{20,}\b"),
    ("Google API key", r"\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])"),
    ("npm token", r"\bnpm_[A-Za-z0-9]{36}\b"),
    ("PyPI token", r"\bpypi-AgEIcHlwaS5vcmc[0-9A-Za-z_-]{50,}"),
    ("Anthropic key", r"\bsk-ant-[a-z]+[0-9]{2}-[0-9A-Za-z_-]{80,}"),
    ("OpenAI key", r"\bsk-(?:proj-|svcacct-)?[0-9A-Za-z_-]{20,}T3BlbkFJ[0-9A-Za-z_-]{20,}|\bsk-proj-[0-9A-Za-z_-]{80,}"),
)
_TOKEN = None  # compiled on first use (one alternation of _TOKENS; ~2 ms of start-up otherwise)
_BEGIN = re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")
_END = re.compile(r"-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")
_BASE64 = re.compile(r"[A-Za-z0-9+/=]{16,}|[A-Za-z-]+: .*")  # a key body line, or a header line (Proc-Type: ...)
# a cheap test before the regexes: every rule holds one of these (and a file without any holds no secret)
NEEDLES = (
    "PRIVATE KEY",
    "AKIA",
    "ASIA",
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "glpat-",
    "xox",
    "hooks.slack.com",
    "_live_",
    "AIza",
    "npm_",
    "pypi-",
    "sk-ant-",
    "sk-proj-",
    "T3BlbkFJ",
)


def looks_like_key_body(line: str) -> bool:
    """A line that could be inside a private-key block (base64, or a PEM header)."""
    return _BASE64.fullmatch(line.strip()) is not None


def key_block_lines(lines: list[str]) -> set[int]:
    """The 1-based numbers of the lines that belong to a private-key block
    (BEGIN to END, both included): a search shows single lines, which alone
    cannot say they sit inside one."""
    out: set[int] = set()
    inside = False
    for k, line in enumerate(lines, 1):
        if not inside:
            begin = _BEGIN.search(line)
            if begin is not None:
                out.add(k)
                inside = _END.search(line, begin.end()) is None
            continue
        out.add(k)
        inside = _END.search(line) is None
    return out


def key_state(line: str, inside: bool) -> bool:
    """Whether the text is inside a private-key block after ``line``, given whether it was
    before it (``inside``): a reader that skips lines keeps this, so lines it shows later
    from inside a block are redacted although their BEGIN line is not shown."""
    if inside:
        return _END.search(line) is None
    begin = _BEGIN.search(line)
    return begin is not None and _END.search(line, begin.end()) is None


class Finding:
    """One redaction: ``what`` was found at 1-based ``line`` (of the text given)."""

    __slots__ = ("line", "what")

    def __init__(self, line: int, what: str) -> None:
        self.line, self.what = line, what

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Finding) and (self.line, self.what) == (other.line, other.what)

    def __repr__(self) -> str:
        return f"Finding({self.line}, {self.what!r})"


def _token_regex() -> re.Pattern[str]:
    global _TOKEN
    if _TOKEN is None:
        _TOKEN = re.compile("|".join(f"(?P<t{i}>{rx})" for i, (_, rx) in enumerate(_TOKENS)))
    return _TOKEN


def _tokens(line: str) -> tuple[str, list[str]]:
    found: list[str] = []

    def mark(m: re.Match) -> str:
        what = _TOKENS[int(m.lastgroup[1:])][0]  # type: ignore[index]
        found.append(what)
        return f"[redacted: {what}]"

    return _token_regex().sub(mark, line), found


def redact_lines(lines: Iterable[str], *, inside_key: bool = False) -> tuple[list[str], list[Finding], bool]:
    """``lines`` with secrets replaced; the findings (1-based line numbers);
    whether the last line is still inside a private-key block (pass it as
    ``inside_key`` to go on with the next lines). Text without a private key
    is scanned once for the rules' needles, and only the lines holding one are
    looked at (a session redacts whole files)."""
    lines = lines if isinstance(lines, list) else list(lines)
    if not inside_key:
        joined = "\n".join(lines)
        if "PRIVATE KEY" not in joined:
            at: list[int] = []
            for needle in NEEDLES:  # a C-speed search each: a regex alternation is ~20x slower
                i = joined.find(needle)
                while i != -1:
                    at.append(i)
                    i = joined.find(needle, i + 1)
            if not at:
                return lines, [], False
            from bisect import bisect_right
            from itertools import accumulate

            ends = list(accumulate(len(line) + 1 for line in lines))  # one past each line's newline
            return _redact_tokens(lines, {bisect_right(ends, i) for i in at})
    return _redact_all(lines, inside_key)


def _redact_tokens(lines: list[str], hits: set[int]) -> tuple[list[str], list[Finding], bool]:
    """Token formats only, on the lines (0-based) ``hits`` that hold a needle."""
    if not hits:
        return lines, [], False
    out = list(lines)
    findings: list[Finding] = []
    for k in sorted(hits):
        new, found = _tokens(lines[k])
        findings.extend(Finding(k + 1, what) for what in found)
        out[k] = new
    return out, findings, False


def _redact_all(lines: list[str], inside_key: bool) -> tuple[list[str], list[Finding], bool]:
    out: list[str] = []
    findings: list[Finding] = []
    run = 0  # base64-looking lines just before this one: a key's body when an END line follows
    for k, line in enumerate(lines, 1):
        if inside_key:
            if k == 1:  # the block began before these lines: its part here is a finding of its own
                findings.append(Finding(1, "private key"))
            out.append(KEY_MARK)
            if _END.search(line):
                inside_key = False
            continue
        if _BASE64.fullmatch(line.strip()):
            run += 1
        else:
            if run and _END.search(line):  # the text starts inside a key block (head --start, a tail)
                out[len(out) - run :] = [KEY_MARK] * run
                findings.append(Finding(k - run, "private key"))
                out.append(KEY_MARK)
                run = 0
                continue
            run = 0
        if not any(n in line for n in NEEDLES):
            out.append(line)
            continue
        begin = _BEGIN.search(line)
        if begin is not None:
            findings.append(Finding(k, "private key"))
            out.append(line[: begin.start()] + KEY_MARK)
            inside_key = _END.search(line, begin.end()) is None
            continue
        new, found = _tokens(line)
        findings.extend(Finding(k, what) for what in found)
        out.append(new)
    return out, findings, inside_key


def redact_text(text: str) -> tuple[str, list[Finding]]:
    """``text`` (lines ending in ``\\n``) with secrets replaced, and the findings."""
    if not any(n in text for n in NEEDLES):
        return text, []
    ends = text.endswith("\n")
    lines, findings, _ = redact_lines(text.split("\n")[:-1] if ends else text.split("\n"))
    return "\n".join(lines) + ("\n" if ends else ""), findings


_NEEDLE_BYTES = tuple(n.encode() for n in NEEDLES)
NEEDLE_MAX = max(map(len, NEEDLES))  # bytes: a needle split across two blocks lies within this much of their seam


def holds_needle(data: bytes) -> bool:
    """Whether ``data`` holds one of the rules' needles (without one, it holds no secret)."""
    return any(n in data for n in _NEEDLE_BYTES)


def redact_bytes(data: bytes) -> bytes:
    """``data`` (a file's bytes) with secrets replaced, its other bytes as they were;
    ``data`` itself when it holds no rule's needle."""
    if not holds_needle(data):
        return data
    return redact_text(data.decode("utf-8", "surrogateescape"))[0].encode("utf-8", "surrogateescape")


def redaction_note(path: str, findings: Iterable[Finding], first_line: int = 1) -> str:
    """The notice for ``findings`` in ``path`` (line numbers counted from ``first_line``)."""
    findings = list(findings)
    kinds = ", ".join(dict.fromkeys(f.what for f in findings))
    lines = ", ".join(str(f.line + first_line - 1) for f in findings[:10]) + (", …" if len(findings) > 10 else "")
    return f"{len(findings)} secret(s) ({kinds}) redacted in {path} at line(s) {lines}; their values are never shown."


def _redact_symbol(sym):
    """A definition with secrets out of its signature (and names); a copy when any was found."""
    import copy

    found: list[str] = []
    fixed = {}
    for attr in ("signature", "name", "qualname"):
        value = getattr(sym, attr, None)
        if isinstance(value, str):
            new, hits = redact_text(value)
            if hits:
                fixed[attr] = new
                found += [f.what for f in hits if attr == "signature" or not found]
    if not fixed:
        return sym, []
    sym = copy.copy(sym)
    for attr, value in fixed.items():
        setattr(sym, attr, value)
    return sym, list(dict.fromkeys(found))


def redact_result(result) -> None:
    """Replace secrets in a result's excerpts, matching lines (with their context),
    definitions' signatures and notes' text, in place, each with a notice naming
    path and line (or the note)."""
    from dataclasses import replace

    from ..refs import Excerpt, LineRef

    notes: list[str] = []
    items = []
    for item in result.results:
        if isinstance(item, Excerpt) and item.content:
            lines, findings, _ = redact_lines(item.lines)
            if findings:
                item = replace(item, content="".join(line + "\n" for line in lines))
                first = item.start_line if item.start_line is not None else 1
                notes.append(redaction_note(item.path, findings, first))
        elif isinstance(item, LineRef):
            rows = [*item.before, {"line": item.line, "text": item.text}, *item.after]
            texts, findings, _ = redact_lines(r["text"] for r in rows)
            if findings:
                fixed = [{"line": r["line"], "text": t} for r, t in zip(rows, texts)]
                k = len(item.before)
                item = replace(item, text=fixed[k]["text"], before=tuple(fixed[:k]), after=tuple(fixed[k + 1 :]))
                notes.append(redaction_note(item.path, [Finding(rows[f.line - 1]["line"], f.what) for f in findings]))
        elif type(item).__name__ == "Symbol":  # structure.Symbol (an outline row, a symbols hit): its signature is a line of the file
            item, found = _redact_symbol(item)
            if found:
                notes.append(redaction_note(item.path, [Finding(item.start_line, what) for what in found]))
        elif type(item).__name__ == "Note" and isinstance(getattr(item, "text", None), str):  # notes.Note: text a caller wrote
            text, findings = redact_text(item.text)
            if findings:
                item = replace(item, text=text)
                kinds = ", ".join(dict.fromkeys(f.what for f in findings))
                notes.append(f"{len(findings)} secret(s) ({kinds}) redacted in note #{item.id}; their values are never shown.")
        items.append(item)
    if notes:
        result.results = items
        for note in notes:
            result.add_notice(note)
