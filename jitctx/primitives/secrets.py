"""A match inside a secret is no match: grep's counts never confirm a redacted secret.

A secret in an ordinary file is shown redacted (``text.redact``), but a
pattern that matches only inside it would still be counted: the totals of
every mode (and the matching line shown, redacted) would confirm or deny the
secret's bytes one guess at a time. So a matching line of a file that may
hold a secret counts only when the pattern matches the line as it is shown,
with its secrets redacted: the answer is the one a search of the redacted
file would give.

Owns which matching files may hold a secret (one of the redaction rules'
needles in their bytes) and the matching lines that are then dropped. A
file's needle check is remembered per root by its device, inode, size,
mtime and ctime, so a broad grep pays it once per file: the ctime moves on
any change, even an edit whose mtime is put back, and a file changed within
``RACY_NS`` of its check is checked again next time (the kernel's clock is
coarse: a second write in the same tick keeps the times). Does not own what
a secret is (``text.redact``), or the engines (``engines``).
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict

from ..errors import QueryError
from ..repo.policy import Opener
from ..text.lines import decode
from ..text.redact import NEEDLE_MAX, NEEDLES, holds_needle, redact_bytes, redact_lines
from .engines.scope import CONTEXT_READ, Scope, read_lines

__all__ = ["RACY_NS", "binary_match_shown", "holding_needles", "page_without", "without_secret_matches"]

RACY_NS = 2_000_000_000  # a check this close to the file's last change is not remembered
FEW = 64  # files read here for their needles; more are handed to the engine (rg reads ~13k files in 0.25 s)
_ROOTS = 8  # roots remembered (a server serves one; a library caller may open several)
_BLOCK = 1 << 20

_CHECKED: OrderedDict[str, dict[str, tuple[int, bool]]] = OrderedDict()  # root -> path -> (stat key, holds a needle)
_LOCK = threading.Lock()


def _key(st: os.stat_result) -> int:
    return hash((st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))


def holding_needles(scope: Scope, backend, stats: dict[str, os.stat_result]) -> tuple[set[str], bool]:
    """The paths of ``stats`` (regular files, each with its ``lstat`` taken before
    this call) whose bytes hold one of the redaction rules' needles; and whether the
    check was cut by the time cap (then the unchecked files are counted as holding one)."""
    root = str(scope.root)
    with _LOCK:
        known = _CHECKED.pop(root, None) or {}
        _CHECKED[root] = known
        while len(_CHECKED) > _ROOTS:
            _CHECKED.popitem(last=False)
        holding: set[str] = set()
        unknown: list[str] = []
        for path, st in stats.items():
            seen = known.get(path)
            if seen is not None and seen[0] == _key(st):
                if seen[1]:
                    holding.add(path)
            else:
                unknown.append(path)
    if not unknown:
        return holding, False
    if len(unknown) > FEW and hasattr(backend, "holding"):
        found, cut = backend.holding(scope, unknown, NEEDLES)
    else:
        found, cut = _holding(scope, unknown)
    if cut:
        return holding | set(unknown), True
    settled = time.time_ns() - RACY_NS
    with _LOCK:
        for path in unknown:
            st = stats[path]
            if st.st_ctime_ns < settled and st.st_mtime_ns < settled:
                known[path] = (_key(st), path in found)
    return holding | found, False


def _holding(scope: Scope, paths: list[str]) -> tuple[set[str], bool]:
    """The needle check read here, through the policy's opener (no link followed). The
    time cap cuts it only inside a big file: a search cut by the cap still judges the
    few files it found."""
    found: set[str] = set()
    with scope.policy.opener() as opener:
        for path in paths:
            try:
                f, _ = opener.open(path)
            except OSError:
                continue  # gone or swapped since the count: the page skips it
            with f:
                tail = b""
                read = 0
                while read < CONTEXT_READ and (block := f.read(_BLOCK)):
                    if tail and scope.spec.remaining() <= 0:  # a file's first block is always read
                        return found, True
                    read += len(block)
                    text = tail + block
                    if holds_needle(text):
                        found.add(path)
                        break
                    tail = text[-(NEEDLE_MAX - 1) :]
    return found, False


def without_secret_matches(scope: Scope, backend, counts: dict[str, int], stats: dict[str, os.stat_result]) -> tuple[dict[str, int], dict[str, frozenset[int]], bool]:
    """``counts`` with the matching lines whose match lies inside a secret taken out;
    the lines taken out per file (for the content page); whether the time cap cut the
    check (then a file it could not judge is left out whole: nothing of it is counted).

    The pattern runs with ripgrep's line semantics (``engines.py``) on a matching line as
    shown, with its secrets redacted (on the whole redacted text for a multiline pattern);
    one that engine cannot compile drops every matching line that redaction changes."""
    judged = {p: st for p, st in stats.items() if p in counts}
    holding, cut = holding_needles(scope, backend, {p: st for p, st in judged.items() if st.st_size <= CONTEXT_READ})
    holding |= {p for p, st in judged.items() if st.st_size > CONTEXT_READ}  # past what is read: each matching line judged alone
    if not holding:
        return counts, {}, cut
    from .engines.py import compile_pattern, covered_lines  # only here: a grep loads one engine

    paths = sorted(holding)
    spec = scope.spec
    try:
        rx = compile_pattern(spec.pattern, fixed_strings=spec.fixed_strings, ignore_case=spec.ignore_case)
    except QueryError:
        rx = None
    found, _, lines_cut = backend.lines(scope, paths, 1 << 62)
    cut |= lines_cut
    hidden: dict[str, frozenset[int]] = {}
    out = dict(counts)
    with scope.policy.opener() as opener:
        for path in paths:
            shown = _shown_lines(opener, path)
            if shown is None or (lines_cut and path not in found):
                out.pop(path, None)  # unread or unjudged: not counted
                continue
            raw, redacted = shown
            # a line past what was read (a file over CONTEXT_READ) is judged alone, from the engine's text
            pairs = {m.line: (raw[m.line - 1], redacted[m.line - 1]) if m.line <= len(raw) else (m.text, redact_lines([m.text])[0][0]) for m in found.get(path, [])}
            changed = {k: shown_line for k, (was, shown_line) in pairs.items() if was != shown_line}
            if not changed:
                continue  # a needle, but no secret on a matching line
            try:
                if rx is None:
                    drop = frozenset(changed)
                elif spec.multiline:  # a match may span lines: the lines it covers in the redacted text
                    covered = covered_lines("\n".join(redacted) + "\n", rx, spec)
                    if covered is None:
                        raise TimeoutError
                    drop = frozenset(k for k in pairs if k - 1 not in covered)
                else:
                    drop = frozenset(k for k, line in changed.items() if rx.search(line, timeout=max(spec.remaining(), 1e-3)) is None)
            except TimeoutError:
                out.pop(path, None)
                cut = True
                continue
            if drop:
                hidden[path] = drop
                left = counts[path] - len(drop)
                if left > 0:
                    out[path] = left
                else:
                    out.pop(path)
    return out, hidden, cut


def _shown_lines(opener: Opener, path: str) -> tuple[list[str], list[str]] | None:
    """The file's lines, and the same lines as a reader is shown them (secrets redacted)."""
    read = read_lines(opener, path)
    if read is None:
        return None
    redacted, _, _ = redact_lines(read[0])
    return read[0], redacted


def page_without(found: dict, hidden: dict[str, frozenset[int]]) -> dict:
    """A content page's matches without the lines ``without_secret_matches`` took out."""
    if not hidden:
        return found
    return {p: [m for m in ms if m.line not in hidden.get(p, ())] for p, ms in found.items()}


def binary_match_shown(scope: Scope, path: str) -> bool:
    """Whether the binary file ``path``, which the engine found to contain the
    pattern, contains it with its secrets redacted: an empty answer names a binary
    file that contains the pattern, and that must not confirm a secret either."""
    from .engines.py import compile_pattern

    spec = scope.spec
    try:
        with scope.policy.opener() as opener:
            data, _ = opener.read(path, CONTEXT_READ)
        shown = redact_bytes(data)
        if shown is data:
            return True  # no secret in it
        rx = compile_pattern(spec.pattern, fixed_strings=spec.fixed_strings, ignore_case=spec.ignore_case)
        return rx.search(decode(shown)[0], timeout=max(spec.remaining(), 1e-3)) is not None
    except (OSError, QueryError, TimeoutError):
        return False
