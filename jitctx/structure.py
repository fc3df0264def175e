"""Code structure for a workspace: the index kept current, outlines, symbols, one definition.

Owns composing the on-disk index (``code.index``) with the repository: the
listing it is refreshed with (the discovery universe, denied names left out,
regular files only), reading through the safe-open seam, progress on a
terminal, and the primitives built on it: ``outline`` (one file),
``symbols`` (definitions by name across the repository), ``find_symbol``
(the one definition ``head --symbol`` reads) and ``enclosing`` (the
qualname grep's content matches carry). Answers are never older than the
file: the files a call answers about are refreshed first (stat signature,
then content hash). Does not own extraction (``code.analyze``), the store
(``code.index``) or rendering.
"""

from __future__ import annotations

import os
import stat
import sys
import time
from dataclasses import replace

from .cache import index_file
from .errors import PathError, QueryError
from .hints import call
from .refs import Result, mtime_of
from .text import is_binary

TYPE_CHECKING = False  # as typing's (workspace.py says why)
if TYPE_CHECKING:
    from collections.abc import Callable

    from .code.index import Index
    from .code.rows import Definition, RefreshStats
    from .policy import PathPolicy
    from .repo import Repo

__all__ = ["CodeIndex", "Symbol", "resolve_file"]

_MAX_BYTES = 2 * 1024 * 1024  # files larger than this are neither parsed nor indexed: code.refresh.MAX_BYTES (a test keeps them equal)
# Source bytes grep parses per call for its symbol field where the index has no fresh row
# (tree-sitter: ~10 ms per 80 KB; a page of 36 files cost grep 0.14-0.35 s unbounded). Spent
# on the files with the fewest bytes per page line first, 192 KiB annotate as many lines as
# 256 KiB did smallest file first (real tree, TODO/FIXME/`return NULL` pages: 39/63/45 of 100 vs 37/58/51)
_PARSE_BUDGET = 192 * 1024


class Symbol:
    """A definition as a reference (DESIGN 9): where it is and what reading it costs."""

    __slots__ = ("depth", "end_line", "kind", "mtime", "name", "path", "qualname", "signature", "size", "start_line", "tokens")

    def __init__(self, path: str, size: int, mtime: float, d: Definition) -> None:
        self.path, self.size, self.mtime = path, size, mtime
        self.kind, self.name, self.qualname = d.kind, d.name, d.qualname
        self.start_line, self.end_line, self.signature = d.start_line, d.end_line, d.signature
        self.tokens, self.depth = d.tokens, d.depth

    @property
    def lines(self) -> int:
        return self.end_line - self.start_line + 1

    def to_dict(self) -> dict[str, object]:
        return {
            "path": self.path,
            "size": self.size,
            "mtime": self.mtime,
            "kind": self.kind,
            "name": self.name,
            "qualname": self.qualname,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "signature": self.signature,
            "tokens": self.tokens,
            "depth": self.depth,
        }

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Symbol) and self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash((self.path, self.qualname, self.start_line))

    def __repr__(self) -> str:
        return f"Symbol({self.path}:{self.start_line}-{self.end_line} {self.kind} {self.qualname})"


def _progress_printer() -> Callable[[int, int], None] | None:
    """Progress of a cold build on a terminal (stderr), at most ~5 lines a second; None elsewhere."""
    try:
        if not sys.stderr.isatty():
            return None
    except (AttributeError, ValueError):
        return None
    last = [0.0]

    def show(done: int, total: int) -> None:
        now = time.monotonic()
        if done < total and now - last[0] < 0.2:
            return
        last[0] = now
        end = "\n" if done >= total else ""
        sys.stderr.write(f"\rjitctx: indexing {done:,}/{total:,} files (once per content; Ctrl-C is safe){end}")
        sys.stderr.flush()

    return show


class CodeIndex:
    """The index of one workspace's repository, opened on first use."""

    def __init__(self, repo: Repo, policy: PathPolicy, *, cache_dir: str | None = None, count: Callable[[str], int] | None = None) -> None:
        self.repo = repo
        self.policy = policy
        self.cache_dir = cache_dir
        self.count = count  # prices a definition when shown (the index stores none: issue 23)
        self._index: Index | None = None
        self.last: RefreshStats | None = None

    @property
    def index(self) -> Index:
        if self._index is None:
            from .code.analyze import ANALYZER
            from .code.index import Index

            self._index = Index.open(self.repo.root, analyzer=ANALYZER, cache_dir=self.cache_dir)
        return self._index

    def close(self) -> None:
        if self._index is not None:
            self._index.close()
            self._index = None

    # -- keeping it current -------------------------------------------------

    def _entries(self, paths: list[str]) -> list[tuple[str, int, int, int, int]]:
        root = str(self.repo.root) + os.sep
        is_denied = self.policy.is_denied
        names: dict[str, bool] = {}  # one verdict per distinct name: folders repeat on every path
        out = []
        lstat = os.lstat
        for rel in paths:
            denied = False
            for name in rel.split("/"):
                verdict = names.get(name)
                if verdict is None:
                    verdict = names[name] = is_denied(name)
                if verdict:
                    denied = True
                    break
            if denied:
                continue
            try:
                st = lstat(root + rel)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode):
                out.append((rel, st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns))
        return out

    def _read(self, opener) -> Callable[[str], bytes | None]:
        def read(rel: str) -> bytes | None:
            try:
                data, _ = opener.read(rel, _MAX_BYTES + 1)
            except OSError:
                return None
            return data

        return read

    def refresh(
        self, paths: list[str] | None = None, *, progress: bool | Callable[[int, int], None] = True, entries: list | None = None, complete: bool | None = None
    ) -> RefreshStats:
        """Bring the index up to date: with the whole universe (``paths`` None), or
        only with ``paths`` (repo-relative files; others are left as they are),
        or with ``entries`` already statted (``_entries``; a partial listing).
        ``progress``: a line on a terminal (True), or ``progress(done, total)``."""
        from .code.analyze import analyze

        complete = (paths is None and entries is None) if complete is None else complete
        if entries is None:
            entries = self._entries(self.repo.files() if paths is None else paths)
        workers = min(os.cpu_count() or 1, 4) if len(entries) > 200 else 1
        with self.policy.opener() as opener:
            self.last = self.index.refresh(
                entries,
                self._read(opener),
                analyze,
                complete=complete,
                max_bytes=_MAX_BYTES,
                workers=workers,
                progress=progress if callable(progress) else _progress_printer() if progress else None,
            )
        return self.last

    def pending(self, entries: list) -> tuple[list[str], list[str], list[str]]:
        """What a complete refresh with ``entries`` (``_entries`` of the universe) would read,
        hash again and remove, without doing it (``code.refresh.pending``)."""
        return self.index.pending(entries, max_bytes=_MAX_BYTES)

    def entries(self, paths: list[str] | None = None) -> list:
        """The universe (or ``paths`` of it, already listed) as the index is refreshed with
        it: statted, denied names out."""
        return self._entries(self.repo.files() if paths is None else paths)

    # -- the primitives -------------------------------------------------------

    def _fresh(self, rel: str) -> bool:
        """Whether the index's row for ``rel`` has the file's stat signature now."""
        entry = self._entries([rel])
        return bool(entry) and _row_matches(self.index.state(rel), entry[0])

    def priced(self, path: str, found) -> tuple[Definition, ...]:
        """``found`` (definitions of ``path``) with their tokens: the exact cost of reading
        each whole (``head --symbol``'s lines), counted now for those the index has none for
        (through ``count``, whose cache remembers them by content)."""
        if self.count is None or all(d.tokens is not None for d in found):
            return tuple(found)
        from .code.analyze import definition_text
        from .text import decode, split_lines, strip_bom

        with self.policy.opener() as opener:
            data = _peek_bytes(opener, path)
        lines = split_lines(decode(strip_bom(data))[0])
        count = self.count
        return tuple(d if d.tokens is not None else replace(d, tokens=count(definition_text(lines, d.start_line, d.end_line))) for d in found)

    def _symbol(self, path: str, d: Definition) -> Symbol:
        try:
            st = os.lstat(os.path.join(self.repo.root, path))
            size, mtime = st.st_size, mtime_of(st)
        except OSError:
            size, mtime = 0, 0.0
        return Symbol(path, size, mtime, d)

    def definitions(self, rel: str) -> tuple[Definition, ...]:
        """The definitions of one file, fresh (the file is refreshed first)."""
        self.refresh([rel], progress=False)
        return self.index.definitions(rel)

    def outline(self, rel: str, *, limit: int) -> Result:
        """One file's symbols in source order (see ``Workspace.outline``)."""
        from .code.parse import language_for

        res = Result(tool="outline")
        with self.policy.opener() as opener:
            data = _peek_bytes(opener, rel)
        if language_for(rel, data[:256]) is None:
            ext = os.path.splitext(rel)[1] or os.path.basename(rel)
            res.notice = f"no outline for {ext} files (no grammar for this file type); read it with {call('head', path=rel)}."
            return res
        found = self.definitions(rel)
        state = self.index.state(rel)
        res.total = len(found)
        res.results = [self._symbol(rel, d) for d in self.priced(rel, found[:limit])]
        if len(found) > limit:
            res.truncated = True
            res.notice = f"showing {limit:,} of {len(found):,} definitions; {call('outline', path=rel, limit=len(found))} lists them all, symbols finds one by name."
        if state is not None and state.skipped:
            res.add_notice(_skip_note(rel, state.skipped))
        elif not found:
            res.add_notice(f"{rel} has no definitions (functions, classes, types) to outline; read it with {call('head', path=rel)}.")
        res.extra = {"path": rel, "lines": _line_count(data), "size": len(data)}
        return res

    def symbols(self, query: str, *, under: str, kind: str | None, limit: int) -> Result:
        """Definitions by name across the repository (see ``Workspace.symbols``)."""
        from .code.parse import EXTENSIONS

        # only files that can hold definitions need to be current for a lookup (a quarter of a
        # large tree): git lists the tracked ones by extension; the others' words wait for
        # locate, whose refresh is complete
        suffixes = tuple(sorted("." + e for e in EXTENSIONS))
        entries: list = []
        for chunk in self.repo.file_chunks(suffix=suffixes):  # stat tracked files while git walks for the rest
            entries += self._entries(_defining(chunk))
        self.refresh(entries=entries)
        scope = "" if under in (".", "") else under
        found = self.index.find(query, kind=kind, under=scope, limit=limit)
        # a hit's file must be as the index saw it: one deleted since a complete refresh, or a
        # tracked script without an extension (not listed above) changed since, is refreshed first
        stale = [h.path for h in found.hits if not self._fresh(h.path)]
        if stale:
            if any(not _exists(self.repo.root, p) for p in stale):
                self.refresh()  # complete: removes the rows of files that left
            else:
                self.refresh(stale, progress=False)
            found = self.index.find(query, kind=kind, under=scope, limit=limit)
        res = Result(tool="symbols", total=found.total, truncated=found.truncated)
        by_file: dict[str, list] = {}
        for h in found.hits:
            by_file.setdefault(h.path, []).append(h.definition)
        priced = {p: dict(zip(map(id, ds), self.priced(p, ds))) for p, ds in by_file.items()}
        res.results = [self._symbol(h.path, priced[h.path][id(h.definition)]) for h in found.hits]
        if found.truncated:
            res.notice = f"showing {len(found.hits):,} of {found.total:,} definitions; raise limit, or narrow with path or kind (or a qualified name such as Class.method)."
        elif not found.hits:
            scope = "" if under in (".", "") else under
            res.notice = f"no definition named {query!r}" + (f" under {under}" if scope else "")
            last = query.rstrip(".").rsplit(".", 1)[-1]
            near = [h for h in self.index.find(last, kind=kind, under=scope, limit=5).hits if h.tier == "exact"] if last and last != query else []
            if near:  # Flask.route is Scaffold.route: an inherited or moved name
                res.notice += (
                    "; " + ", ".join(f"{h.definition.qualname} ({h.path}:{h.definition.start_line})" for h in near) + (" defines" if len(near) == 1 else " define") + f" {last!r}."
                )
            else:
                res.notice += "; try a prefix ('Name.' lists a class's members), or grep for the text."
        return res

    def find_symbol(self, rel: str, name: str) -> Definition:
        """The one definition of ``rel`` named ``name`` (a name, a qualname, or a
        qualname's tail on a dot boundary); ``QueryError`` when it is missing
        or ambiguous, naming the candidates."""
        found = self.definitions(rel)
        want = name.strip()
        if not want:
            raise QueryError("symbol is empty", hint=f"name one of its definitions ({call('outline', path=rel)} lists them)", field="symbol")
        exact = [d for d in found if d.qualname == want]
        if not exact:
            exact = [d for d in found if d.qualname.endswith("." + want) or d.name == want]
        if len(exact) == 1:
            return exact[0]
        if exact:
            listed = "; ".join(f"{d.qualname} (lines {d.start_line}-{d.end_line})" for d in exact[:10])
            more = f" and {len(exact) - 10} more" if len(exact) > 10 else ""
            raise QueryError(
                f"symbol {want!r} is ambiguous in {rel}: {len(exact)} definitions: {listed}{more}",
                hint=f"read one by its lines, e.g. {call('head', path=rel, start=exact[0].start_line, n=exact[0].end_line - exact[0].start_line + 1)}",
                field="symbol",
            )
        import difflib

        names = sorted({d.qualname for d in found} | {d.name for d in found})
        close = difflib.get_close_matches(want, names, n=5, cutoff=0.5)
        if not found:
            raise QueryError(
                f"no symbol {want!r} in {rel}: it has no definitions",
                hint=f"read it by lines with {call('head', path=rel)}, or find the name with {call('symbols', query=want)}",
                field="symbol",
            )
        raise QueryError(
            f"no symbol {want!r} in {rel}",
            hint=(f"closest names there: {', '.join(close)}" if close else f"list its definitions with {call('outline', path=rel)}")
            + f"; or find it across the repository with {call('symbols', query=want)}",
            field="symbol",
        )

    def enclosing(self, wanted: dict[str, list[int]]) -> dict[str, Callable[[int], Definition | None]]:
        """For grep's ``symbol`` field: per file with a grammar, a lookup from a
        line to its innermost definition. ``wanted``: path -> the lines asked
        about. Uses the index's row when the file's stat signature still
        matches it; else parses the file here up to the last of those lines
        (no index write, no token counts: the innermost definition around a
        line does not depend on what follows it), within ``_PARSE_BUDGET``
        bytes a call, the files with the fewest bytes to parse per line asked
        about first (the most lines annotated for the bytes parsed)."""
        from .code.outline import innermost_lookup, outline
        from .code.parse import language_for

        out: dict[str, Callable[[int], Definition | None]] = {}
        entries = [e for e in self._entries(sorted(wanted)) if not (language_for(e[0]) is None and os.path.splitext(e[0])[1])]
        if not entries:
            return out
        # no index built yet (no symbols or locate call): none is made here, every file is parsed
        index = self._index if self._index is not None or not os.path.exists(index_file(self.repo.root, self.cache_dir)) else self.index
        todo = []
        for entry in entries:
            rel = entry[0]
            state = index.state(rel) if index is not None else None
            if index is not None and state is not None and state.blob is not None and _row_matches(state, entry):
                defs = index.definitions(rel)
                if defs:
                    out[rel] = innermost_lookup(defs)
            elif entry[1] <= _MAX_BYTES:
                todo.append(entry)
        cuts = []  # (bytes per line asked about, path, language, the source through the last line)
        with self.policy.opener() as opener:
            for entry in todo:
                rel = entry[0]
                try:
                    data, _ = opener.read(rel, min(entry[1], _PARSE_BUDGET) + 1)
                except OSError:
                    continue
                language = language_for(rel, data[:256])
                if language is None or is_binary(data):
                    continue
                cut = _through_line(data, max(wanted[rel]))
                if cut is not None and len(cut) <= _PARSE_BUDGET:  # else the line lies past the budget's bytes
                    cuts.append((len(cut) / len(wanted[rel]), rel, language, cut))
        budget = _PARSE_BUDGET
        for _, rel, language, cut in sorted(cuts, key=lambda c: c[:2]):
            if len(cut) > budget:
                continue
            budget -= len(cut)
            found = outline(language, cut).definitions
            if found:
                out[rel] = innermost_lookup(found)
        return out


def _row_matches(state, entry: tuple) -> bool:
    """Whether a stored row (``FileState`` or None) has the stat signature of ``entry`` (``_entries``)."""
    return state is not None and (state.size, state.mtime_ns, state.inode, state.ctime_ns) == entry[1:]


def _through_line(data: bytes, line: int) -> bytes | None:
    """``data`` up to the end of line ``line`` (1-based), or None when it does not hold that line."""
    parts = data.split(b"\n", line)  # split in C: a find per line was ~5 ms of a page's lookups
    if len(parts) <= line:  # fewer line ends than that: the last line has none, or it is not there
        return data if len(parts) >= line else None
    return data[: sum(map(len, parts[:line])) + line]


def _defining(paths: list[str]) -> list[str]:
    """The paths that may have an outline: a known extension, or none (a script's shebang decides)."""
    from .code.parse import EXTENSIONS

    out = []
    for rel in paths:
        name = rel[rel.rfind("/") + 1 :]
        dot = name.rfind(".")
        if dot <= 0 or name[dot + 1 :].lower() in EXTENSIONS:
            out.append(rel)
    return out


def _exists(root, rel: str) -> bool:
    return os.path.lexists(os.path.join(root, rel))


def _skip_note(rel: str, reason: str) -> str:
    return {
        "too_large": f"{rel} is over {_MAX_BYTES // (1024 * 1024)} MB: not outlined; grep still searches it.",
        "declined": f"{rel} is binary: no outline.",
        "unreadable": f"{rel} could not be read: no outline.",
    }.get(reason, f"{rel} was not outlined ({reason}).")


def _peek_bytes(opener, rel: str) -> bytes:
    """The file's first ``_MAX_BYTES + 1`` bytes through the safe-open seam (b"" when unreadable)."""
    try:
        return opener.read(rel, _MAX_BYTES + 1)[0]
    except OSError:
        return b""


def _line_count(data: bytes) -> int | None:
    if len(data) > _MAX_BYTES:
        return None
    return data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)


def resolve_file(policy: PathPolicy, path: str) -> str:
    """``path`` (repo-relative) as a servable file's repo-relative name, or ``PathError``."""
    target = policy.resolve(path, want="file")
    if target.is_dir:
        raise PathError(f"{path} is a folder", hint="outline takes one file; list a folder's files with glob", path=path, reason="is_dir")
    return target.path
