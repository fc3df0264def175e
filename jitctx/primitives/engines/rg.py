"""The ripgrep backend: the only place the ``rg`` binary is run.

Owns finding the binary (next to the running Python's scripts, i.e. the
``ripgrep`` wheel, then ``PATH``), building its argument lists (never a
shell; the pattern always after ``-e``), parsing ``rg --count --null`` and
``rg --json`` output (paths and lines that arrive as base64 ``bytes``
included), mapping its errors, and aligning rg's own traversal with the
Workspace's file universe:

- ``--hidden`` with ``-g '!.git'``: hidden files in, ``.git/`` out;
- ``--no-ignore-dot``: ``.ignore``/``.rgignore`` are not git's rules;
- the deny globs that mean the same to rg and that no allow glob can
  rescue as ``-g '!glob'`` overrides (``deny_globs``), so rg does not even
  read those files; every path rg returns is checked against the policy
  again anyway;
- tracked files that match an ignore rule (git lists them, rg's traversal
  skips them) are found by ``rgwalk`` and searched explicitly, on a thread
  beside the count pass; a repository-level ``core.excludesFile`` (rg reads
  only the global one) is passed as an ``--ignore-file``;
- symlinks are not followed (as ``git grep``).

A count pass (``--count``) finds the matching files and their matching-line
counts; only the page shown in content mode is searched again with
``--json``. Does not own paging, context or notices (``search``).
"""

from __future__ import annotations

import bisect
import os
import re
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

from ...errors import BackendError, QueryError
from ...refs import Skipped
from ...text.globs import DenyRules
from ...text.lines import BINARY_PROBE, decode, is_binary, strip_bom
from . import Match, Outcome, Spec, unclosed_group
from .rgwalk import Extras, tracked_extras
from .scope import Scope, SearchBackend

__all__ = ["RgBackend", "deny_globs", "find_rg", "parse_json_line", "parse_count_output", "rg_error"]

_EXE = "rg.exe" if os.name == "nt" else "rg"
_ERR_LINE = rb"^rg: (.+?): (?:IO error for operation on .+?: )?(.*?)(?: \(os error (\d+)\))?$"  # compiled on use: start-up counts


def find_rg() -> str | None:
    """The ``rg`` binary: the ``ripgrep`` wheel's (next to this Python's scripts), else ``PATH``."""
    import sysconfig

    candidates = [Path(sysconfig.get_path("scripts") or ""), Path(sys.executable).parent]
    for d in candidates:
        p = d / _EXE
        if p.is_file() and os.access(p, os.X_OK):
            return str(p)
    import shutil  # not at start-up: ~2 ms, and the wheel's binary is found first

    return shutil.which("rg")


def _text(obj: dict) -> bytes:
    """An rg JSON ``{"text": ...}`` or ``{"bytes": base64}`` value, as bytes."""
    if "bytes" in obj:
        import base64

        return base64.b64decode(obj["bytes"])
    return obj.get("text", "").encode("utf-8", "surrogateescape")


def _char(raw: bytes, offset: int) -> int:
    return len(decode(raw[:offset])[0])


def parse_json_line(line: bytes | str) -> tuple[str, str | None, list[Match]] | None:
    """One ``rg --json`` line -> (type, path, matches); ``None`` for a blank line.

    A ``match`` line spanning several lines (multiline mode) becomes one
    ``Match`` per line it covers; spans are char offsets in each line.
    """
    import json

    if not line or not line.strip():
        return None
    msg = json.loads(line)
    kind = msg.get("type")
    data = msg.get("data", {})
    path = os.fsdecode(_text(data["path"])) if isinstance(data.get("path"), dict) else None
    if kind != "match":
        return kind, path, []
    block = _text(data["lines"])
    first = data["line_number"]
    parts = block.split(b"\n")
    if parts and parts[-1] == b"" and len(parts) > 1:
        parts.pop()
    starts = [0]
    for p in parts:
        starts.append(starts[-1] + len(p) + 1)
    spans: dict[int, list[tuple[int, int]]] = {}
    for sub in data.get("submatches", []):
        s, e = sub["start"], sub["end"]
        for i, ls in enumerate(starts[:-1]):
            le = ls + len(parts[i])
            if (s <= le and e > ls) or (s == e and ls <= s <= le):
                a, b = max(s, ls) - ls, min(e, le) - ls
                spans.setdefault(i, []).append((a, max(a, b)))
    out = []
    for i, raw in enumerate(parts):
        if len(parts) > 1 and i not in spans:
            continue
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        text, replaced = decode(raw)
        out.append(Match(first + i, text, tuple((_char(raw, a), _char(raw, b)) for a, b in spans.get(i, [])), replaced))
    return kind, path, out


_COUNT_LINE = r"([^\n\0]*)\0(\d+)\r?\n"


def parse_count_output(out: bytes) -> dict[str, int]:
    """``rg --count --null`` output -> {path: matching lines}; a cut last line is dropped.

    The fast path splits the whole output at once (about 30 ms for 90k
    files); anything unexpected falls back to a line-by-line regex.
    """
    text = out.decode("utf-8", "surrogateescape")
    parts = text.replace("\r\n", "\0").split("\0")
    tail = parts.pop()
    paths, nums = parts[::2], parts[1::2]
    try:
        if tail or len(paths) != len(nums):  # a cut last line: let the regex keep only whole lines
            counts = {p: int(n) for p, n in re.findall(_COUNT_LINE, text)}
        else:
            counts = dict(zip(paths, map(int, nums)))
    except ValueError:
        counts = {p: int(n) for p, n in re.findall(_COUNT_LINE, text)}
    if text.startswith("./"):  # rg was given "." (we pass no path for the root, so this is rare)
        counts = {p[2:] if p.startswith("./") else p: n for p, n in counts.items()}
    return counts


def rg_error(pattern: str, stderr: bytes) -> QueryError | None:
    """A pattern rg refused -> ``QueryError`` naming it, the position and the backend."""
    text = stderr.decode("utf-8", "replace")
    # only rg's own verdicts on the pattern: an ignore file's bad glob ("error
    # parsing glob") is the repository's, never blamed on the caller's pattern
    if "regex parse error" not in text and "is not allowed in a regex" not in text:
        return None
    lines = text.splitlines()
    message = next((ln[len("error: ") :] for ln in lines if ln.startswith("error: ")), None) or lines[0].removeprefix("rg: ")
    pos = None
    for i, ln in enumerate(lines):
        if ln.strip() and set(ln.strip()) == {"^"} and i > 0:
            echoed = lines[i - 1][4:]
            shift = 3 if echoed == f"(?:{pattern})" else 0
            at = ln.index("^") - 4 - shift
            # rg points an unclosed group at its own (?: wrapper: find the group ourselves
            pos = at if at >= 0 else unclosed_group(pattern)
            break
    where = f" at position {pos}" if pos is not None else ""
    return QueryError(
        f"invalid regex {pattern!r}{where} (rg backend): {message}",
        hint="fix the pattern (ripgrep regex syntax), or pass fixed_strings=true to search for it literally",
        pattern=pattern,
        position=pos,
        backend="rg",
    )


def _skipped_from(stderr: bytes, root: str) -> list[Skipped]:
    out = []
    for line in stderr.splitlines():
        m = re.match(_ERR_LINE, line)
        if not m:
            continue
        path = os.fsdecode(m.group(1))
        if path.startswith(root):
            path = path[len(root) :]
        path = path[2:] if path.startswith("./") else path
        reason = "vanished" if m.group(3) == b"2" else "unreadable"
        out.append(Skipped(path, reason))
    return out


_PLAIN_GLOB = re.compile(r"(?![!#\s])[^\[\]{}\\/]+(?<!\s)")  # literal characters, '*' and '?' only


def deny_globs(deny: tuple[str, ...], allow: tuple[str, ...]) -> list[str]:
    """The deny globs rg is told to skip (``-g '!glob'``), so it does not even read those files.

    Only a glob that means the same to rg as to the policy (literal
    characters, ``*`` and ``?``: no classes, braces or escapes) and that no
    allow glob can rescue (``.env.*`` can: ``.env.example``) is passed; rg
    reads the files of the others, and the policy drops them from its output
    as it does every path rg returns. Override globs, not an ``--ignore-file``:
    rg matches an ignore file's globs against every path it walks (~25 ms of
    a grep over 100k files, measured), overrides as the names are read.
    """
    return [g for g in deny if _PLAIN_GLOB.fullmatch(g) and not _rescuable(g, allow)]


def _rescuable(glob: str, allow: tuple[str, ...]) -> bool:
    """Whether some name ``glob`` matches could also match an allow glob (case-insensitively).

    Exact for a literal name and for ``*suffix`` against ``*suffix`` allows;
    any other shape counts as rescuable (the policy then decides alone).
    """
    if not allow:
        return False
    low = glob.lower()
    if "*" not in low and "?" not in low:
        return DenyRules((low,), allow).is_denied(low) is False
    if low.startswith("*") and not any(c in low[1:] for c in "*?"):
        suffix = low[1:]
        for a in allow:
            other = a.lower()
            if not (other.startswith("*") and not any(c in other[1:] for c in "*?[]{}\\")):
                return True
            if suffix.endswith(other[1:]) or other[1:].endswith(suffix):
                return True
        return False
    return True


class RgBackend(SearchBackend):
    """ripgrep over the Workspace's universe (see the module docstring)."""

    name = "rg"

    def __init__(self, exe: str) -> None:
        self.exe = exe
        self._excludes: str | None = None

    # -- arguments ------------------------------------------------------------

    def _args(self, scope: Scope, *, traverse: bool) -> list[str]:
        spec = scope.spec
        args = [self.exe, "--no-config", "--crlf", "--hidden"]
        if traverse:
            args += ["--no-ignore-dot", "-g", "!.git"]
            for glob in deny_globs(scope.policy.deny, scope.policy.allow):
                args += ["-g", f"!{glob}"]
            blocking = scope.repo.blocking_rules() is not None
            if self._excludes and not spec.include_ignored and not blocking:
                args += ["--ignore-file", self._excludes]
            if spec.include_ignored or blocking:
                # an ignore file rg would block on (a FIFO): rg reads none, and its
                # output is held to the universe (listed by walking) afterwards
                args += ["--no-ignore-vcs", "--no-ignore-exclude", "--no-ignore-global", "--no-ignore-parent"]
            elif not scope.repo.is_git:  # the .gitignore files under the root alone, as the walk (repo.ignore)
                args += ["--no-require-git", "--no-ignore-global", "--no-ignore-exclude", "--no-ignore-parent"]
        if spec.ignore_case:
            args.append("-i")
        if spec.fixed_strings:
            args.append("-F")
        if spec.multiline:
            args.append("-U")
        return args

    def _run(self, args: list[str], spec: Spec, cwd, stdin=None, *, started: Callable[[], None] | None = None) -> tuple[bytes, bytes, int | None, bool]:
        """Run rg without a shell; on the time cap, kill it and keep what it printed.

        Output goes to temporary files, not pipes: rg writes one small block per
        file from several threads, and a pipe would wake the reader for each
        (about 0.3 s of extra wall time on 100k matching files, measured).
        ``stdin``: an open file rg reads as ``-`` (the content pass).
        ``started``: called once rg runs (the count pass starts its threads
        there: started before, their Python would hold the GIL while this
        thread spawns rg, up to ~13 ms measured).
        """
        with _scratch() as outf, _scratch() as errf:
            try:
                proc = subprocess.Popen(args, cwd=cwd, stdin=stdin if stdin is not None else subprocess.DEVNULL, stdout=outf, stderr=errf)
            except OSError as exc:
                raise BackendError(f"cannot run rg ({self.exe}): {exc}", hint="pass backend='python'", backend="rg") from None
            # A watcher kills rg at the cap or when the caller cancels;
            # ``wait(timeout=...)`` would poll with sleeps of up to 50 ms after rg is done.
            fired = threading.Event()
            done = threading.Event()

            def watch() -> None:
                while not done.wait(min(max(spec.remaining(), 0.0), _WATCH_STEP)):
                    if spec.remaining() <= 0:
                        fired.set()
                        proc.kill()
                        return

            watcher = threading.Thread(target=watch, name="jitctx-rg-cap", daemon=True)
            watcher.start()
            try:
                if started is not None:
                    started()
                code: int | None = proc.wait()
            except BaseException:  # interrupted, or a thread would not start: nothing is left running
                proc.kill()
                proc.wait()
                raise
            finally:
                done.set()
                watcher.join()
            cut = fired.is_set()
            if cut:
                code = None
            outf.seek(0)
            out = outf.read()
            errf.seek(0)
            err = errf.read()
        if cut:
            out = out[: out.rfind(b"\n") + 1]
        return out, err, code, cut

    def _check(self, spec: Spec, err: bytes, code: int | None, out: bytes) -> None:
        """Raise for a refused pattern or refused arguments; anything else rg says
        (unreadable files, a bad line in an ignore file, "no files were searched")
        is not an error of the request. rg's stderr is never quoted: it can hold
        lines of the repository's files."""
        if code in (0, 1, None):
            return
        qe = rg_error(spec.pattern, err)
        if qe is not None:
            raise qe
        if err.startswith(b"error:"):  # its argument parser: a bug on our side, not the request's
            raise BackendError(f"rg refused its arguments (exit {code})", hint="pass backend='python' to search without ripgrep, and report it", backend="rg")

    # -- the count pass ---------------------------------------------------------

    def _counts(self, scope: Scope, args: list[str], targets: list[str], started: Callable[[], None]) -> tuple[dict[str, int], list[Skipped], bool]:
        spec = scope.spec
        if spec.multiline:
            out, err, code, cut = self._run([*args, "--json", "-e", spec.pattern, "--", *targets], spec, scope.root, started=started)
            self._check(spec, err, code, out)
            lines: dict[str, set[int]] = {}
            for raw in out.split(b"\n"):
                parsed = parse_json_line(raw) if raw.strip() else None
                if parsed and parsed[0] == "match" and parsed[1] is not None:
                    path = parsed[1][2:] if parsed[1].startswith("./") else parsed[1]
                    lines.setdefault(path, set()).update(m.line for m in parsed[2])
            counts = {p: len(s) for p, s in lines.items()}
        else:
            out, err, code, cut = self._run([*args, "--count", "--with-filename", "--null", "-e", spec.pattern, "--", *targets], spec, scope.root, started=started)
            self._check(spec, err, code, out)
            counts = parse_count_output(out)
        return counts, _skipped_from(err, str(scope.root) + os.sep), cut

    def count(self, scope: Scope) -> Outcome:
        spec, repo = scope.spec, scope.repo
        if spec.file is not None:
            return self._count_file(scope)
        out = Outcome()
        self._excludes = repo.configured_excludes() if repo.is_git else None
        beside: dict[str, _Beside] = {}

        def started() -> None:
            # git's side of the universe (and its tracked-but-ignored files counted), and the caller's work, while rg walks
            if repo.is_git:
                beside["extras"] = _Beside(self._extras, scope)
            if spec.beside is not None:
                beside["work"] = _Beside(spec.beside)

        if scope.ignored_folder():  # rg would walk it (a named root is never ignored)
            started()
            counts: dict[str, int] = {}  # only its tracked files (found beside) are in the universe
            skipped: list[Skipped] = []
            cut = False
        else:
            targets = [] if spec.scope == "." else [spec.scope]
            try:
                counts, skipped, cut = self._counts(scope, self._args(scope, traverse=True), targets, started)
            except BaseException:
                for thread in beside.values():
                    thread.join()  # nothing is left running behind a refused pattern
                raise
        if "work" in beside:
            beside["work"].join()  # done long before rg, as a rule; its outcome is the caller's business
        extras = beside.get("extras")
        known, explicit = extras.result() if extras is not None else (Extras(), None)
        scope.tracked_listing = known.listing  # reused by an empty result's notice
        if repo.blocking_rules() is not None and not spec.include_ignored:
            universe = set(scope.files())
            counts = {p: n for p, n in counts.items() if p in universe}
        keep = spec.keep
        prefix = spec.prefix
        denied = scope.denied_among(list(counts))  # rg was told not to read them; never trust, check
        if denied or prefix or spec.has_filters:
            counts = {p: n for p, n in counts.items() if p.startswith(prefix) and p not in denied and keep(p)}
        out.counts = counts
        out.skipped = skipped
        out.timed_out = cut
        out.denied = known.denied
        out.denied_tracked_only = True
        if explicit is not None and not cut:
            found, skipped, cut = explicit
            out.counts.update({p: len(ms) for p, ms in found.items() if ms})
            out.skipped += skipped
            out.timed_out |= cut
        return out

    def _extras(self, scope: Scope) -> tuple[Extras, tuple[dict[str, list[Match]], list[Skipped], bool] | None]:
        """Beside the count pass: git's side of the universe (``tracked_extras``),
        then the matches in the tracked files an ignore rule matches (rg's walk
        skips them), read through the policy's opener as the content pass reads."""
        spec = scope.spec
        known = tracked_extras(scope, self._excludes)
        wanted = [p for p in known.ignored_tracked if not spec.is_denied(p) and spec.keep(p)]
        return known, self.lines(scope, wanted, 1 << 62) if wanted else None

    def _count_file(self, scope: Scope) -> Outcome:
        spec = scope.spec
        out = Outcome(binary=0, denied=0)
        path = spec.file
        assert path is not None
        if spec.is_denied(path) or not spec.keep(path):
            out.denied = int(spec.is_denied(path))
            return out
        try:
            with scope.policy.opener() as opener:
                f, _ = opener.open(path)
        except FileNotFoundError:
            out.skipped.append(Skipped(path, "vanished"))
            return out
        except OSError:
            out.skipped.append(Skipped(path, "unreadable"))
            return out
        with f:
            binary = is_binary(f.read(BINARY_PROBE))
            if binary:  # does it contain the pattern? (said in the notice; nothing of it shown)
                f.seek(0)
                out.binary = int(self._binary_match(scope, f))
                return out
        found, out.skipped, out.timed_out = self.lines(scope, [path], 1 << 62)
        out.counts = {p: len(ms) for p, ms in found.items() if ms}
        return out

    def _binary_match(self, scope: Scope, f) -> bool:
        """Whether an open binary file contains a match (rg reads it as text, on stdin)."""
        args = [*self._args(scope, traverse=False), "--text", "--encoding", "none", "-q", "-e", scope.spec.pattern, "--", "-"]
        out, err, code, _ = self._run(args, scope.spec, scope.root, stdin=f)
        self._check(scope.spec, err, code, out)
        return code == 0

    def holding(self, scope: Scope, paths: list[str], literals: tuple[str, ...]) -> tuple[set[str], bool]:
        """Which of ``paths`` (regular files when the count pass saw them) hold any of
        ``literals``; and whether the time cap cut the check. rg is named the files
        here, a batch of arguments at a time. rg follows a file swapped for a link
        since the count; what it reads is never shown, only whether a literal is in
        it, and the caller judges a file's lines from text read through the opener."""
        args = [self.exe, "--no-config", "--files-with-matches", "--null", "--fixed-strings", "--text", "--no-messages"]
        for lit in literals:
            args += ["-e", lit]
        args.append("--")
        found: set[str] = set()
        batch: list[str] = []
        size = 0
        for i, path in enumerate(paths):
            batch.append(path)
            size += len(path) + 1
            if size >= _ARGS_BATCH or i == len(paths) - 1:
                out, _, _, cut = self._run(args + batch, scope.spec, scope.root)
                found.update(os.fsdecode(p) for p in out.split(b"\0") if p)
                if cut:
                    return found, True
                batch, size = [], 0
        return found, False

    # -- the page -----------------------------------------------------------------

    def lines(self, scope: Scope, paths: list[str], upto: int) -> tuple[dict[str, list[Match]], list[Skipped], bool]:
        """The page's matching lines, from bytes read through the policy's opener.

        rg is never named the files: it follows a symlink it is named, so a link
        swapped in after the count pass could lead it out of the root or into
        a denied file. Instead the page's files are read here (no symlink
        followed anywhere on the path, regular files only, copied in blocks:
        memory stays bounded whatever the size) and handed to rg on its
        stdin, a batch at a time, with line numbers mapped back to each file. Without
        ``multiline`` a match never crosses a line end, so files can share
        one stream; with it, each file has its own.
        """

        spec = scope.spec
        found: dict[str, list[Match]] = {}
        skipped: list[Skipped] = []
        args = [*self._args(scope, traverse=False), "--text", "--encoding", "none", "--json", "-e", spec.pattern, "--", "-"]
        with scope.policy.opener() as opener, _scratch() as stream:
            batch: list[tuple[int, str]] = []  # (first line of the file in the stream, path)
            size = lines = 0

            def flush() -> bool:
                nonlocal size, lines
                stream.truncate()
                stream.seek(0)
                out, err, code, cut = self._run(args, spec, scope.root, stdin=stream)
                self._check(spec, err, code, out)
                firsts = [first for first, _ in batch]
                for raw in out.split(b"\n"):
                    parsed = parse_json_line(raw) if raw.strip() else None
                    if parsed and parsed[0] == "match":
                        for m in parsed[2]:
                            i = bisect.bisect_right(firsts, m.line) - 1
                            first, path = batch[i]
                            found.setdefault(path, []).append(Match(m.line - first + 1, m.text, m.spans, m.replaced))
                batch.clear()
                stream.seek(0)
                size = lines = 0
                return cut

            for path in paths:
                copied = _copy_page_file(opener, path, stream, skipped)
                if copied is None:
                    continue
                batch.append((lines + 1, path))
                size += copied[0]
                lines += copied[1]
                if (spec.multiline or size >= PAGE_BATCH) and flush():
                    return _first(found, upto), skipped, True
            if batch and flush():
                return _first(found, upto), skipped, True
        return _first(found, upto), skipped, False


class _Beside(threading.Thread):
    """``fn(*args)`` on a thread of its own while rg runs; ``result()`` joins and
    returns it, or raises what it raised. (Not ``concurrent.futures``: it
    imports logging and more, ~8 ms of every grep: docs/benchmarks.md.)"""

    def __init__(self, fn, *args) -> None:
        super().__init__(name="jitctx-beside-rg", daemon=True)
        self._call = (fn, args)
        self._value: object = None
        self._error: BaseException | None = None
        self.start()

    def run(self) -> None:
        fn, args = self._call
        try:
            self._value = fn(*args)
        except BaseException as exc:  # handed to result(), on the caller's thread
            self._error = exc

    def result(self):
        self.join()
        if self._error is not None:
            raise self._error
        return self._value


_WATCH_STEP = 0.1  # seconds between the watcher's looks at a cancel token
PAGE_BATCH = 16 << 20  # bytes handed to one rg process in the content pass
_ARGS_BATCH = 512 << 10  # bytes of paths named to one rg process (Linux takes 2 MiB of arguments and environment)
_BLOCK = 1 << 20


def _scratch():
    """An anonymous temporary file, deleted when closed, as ``tempfile.TemporaryFile``
    makes one on Linux (``O_TMPFILE`` in ``$TMPDIR``, ``$TEMP``, ``$TMP``, else
    ``/tmp``), without importing tempfile (shutil, random: ~3 ms of every grep,
    before rg can start); elsewhere, or when that fails, tempfile's own."""
    flag = getattr(os, "O_TMPFILE", None)
    if flag is not None:
        folder = os.environ.get("TMPDIR") or os.environ.get("TEMP") or os.environ.get("TMP") or "/tmp"
        try:
            fd = os.open(folder, flag | os.O_RDWR, 0o600)
        except OSError:
            pass
        else:
            return open(fd, "w+b")
    import tempfile

    return tempfile.TemporaryFile()


def _copy_page_file(opener, path: str, stream, skipped: list[Skipped]) -> tuple[int, int] | None:
    """Append one page file to ``stream`` as rg is to search it (BOM stripped,
    ending with a line end); (bytes, lines) written, or ``None`` (skipped:
    recorded; or binary since the count pass, left out)."""
    try:
        f, _ = opener.open(path)
    except FileNotFoundError:
        skipped.append(Skipped(path, "vanished"))
        return None
    except OSError:
        skipped.append(Skipped(path, "unreadable"))  # a symlink swapped in, not a regular file, no permission
        return None
    with f:
        try:
            block = f.read(_BLOCK)
        except OSError:
            skipped.append(Skipped(path, "unreadable"))
            return None
        if is_binary(block):
            return None
        block = strip_bom(block)
        size = lines = 0
        last = b"\n"
        while block:
            stream.write(block)
            size += len(block)
            lines += block.count(b"\n")
            last = block[-1:]
            block = f.read(_BLOCK)
    if last != b"\n":
        stream.write(b"\n")
        size += 1
        lines += 1
    return size, lines


def _first(found: dict[str, list[Match]], upto: int) -> dict[str, list[Match]]:
    """Each file's first ``upto`` matching lines, in line order, each line once."""
    return {p: sorted({m.line: m for m in ms}.values(), key=lambda m: m.line)[:upto] for p, ms in found.items()}
