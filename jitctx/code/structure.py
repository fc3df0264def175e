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

from ..cache.folders import index_file
from ..errors import PathError, QueryError
from ..refs import Result, mtime_of
from ..text.hints import call
from ..text.lines import is_binary

TYPE_CHECKING = False  # as typing's (workspace.py says why)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TextIO

    from ..repo.policy import PathPolicy
    from ..repo.universe import Repo
    from .index import Index
    from .rows import Definition, Lookup, RefreshStats

__all__ = ["CodeIndex", "Symbol", "resolve_file"]

_INLINE = 256  # files a lookup brings up to date itself; more: it answers from what it has (build.INLINE, the same rule)
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


def _progress_printer(stream: TextIO) -> Callable[[int, int], None] | None:
    """Progress of a cold build on a terminal (``stream``), at most ~5 lines a second; None elsewhere."""
    try:
        if not stream.isatty():
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
        stream.write(f"\rjitctx: indexing {done:,}/{total:,} files (once per content; Ctrl-C is safe){end}")
        stream.flush()

    return show


class CodeIndex:
    """The index of one workspace's repository, opened on first use."""

    progress_to: TextIO | None = None  # where a cold refresh's progress line goes, on a terminal (None: stderr)

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
            from .analyze import ANALYZER
            from .index import Index

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
        self,
        paths: list[str] | None = None,
        *,
        progress: bool | Callable[[int, int], None] = True,
        entries: list | None = None,
        complete: bool | None = None,
        parts: str = "all",
        outline_limit: int | None = -1,
    ) -> RefreshStats:
        """Bring the index up to date: with the whole universe (``paths`` None), or
        only with ``paths`` (repo-relative files; others are left as they are),
        or with ``entries`` already statted (``_entries``; a partial listing).
        ``progress``: a line on a terminal (True), or ``progress(done, total)``.
        ``parts``: ``all``, or ``words`` (the definitions left for a later refresh:
        a build's first part). ``outline_limit``: the most files still to be parsed
        that this refresh parses (more: all left to the build; None: no limit; the
        default: ``_INLINE`` for a refresh of the whole universe, none for named
        paths). Words are told again from git's copy of a blob where git holds it
        (``code.refresh``)."""
        from .analyze import analyze

        complete = (paths is None and entries is None) if complete is None else complete
        if outline_limit == -1:
            outline_limit = _INLINE if complete else None
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
                progress=progress if callable(progress) else _progress_printer(self.progress_to or sys.stderr) if progress else None,
                parts=parts,
                recall=self._recall,
                keeps=self._keeps,
                outline_limit=outline_limit,
            )
        return self.last

    def _recall(self, blobs: list[str]) -> dict[str, bytes]:
        from ..repo import gitcmd

        return gitcmd.blobs(self.repo.root, blobs) if self.repo.is_git else {}

    def _keeps(self) -> Callable[[str, str], bool] | None:
        """Whether git holds a file's content as the blob the index names (its words need
        not be kept: ``_recall`` tells them again); asked once by a large refresh."""
        from ..repo import gitcmd

        if not self.repo.is_git:
            return None
        held = gitcmd.index_blobs(self.repo.root)
        return lambda path, blob: held.get(path) == blob

    def pending(self, entries: list, *, parts: str = "words") -> tuple[list[str], list[str], list[str]]:
        """What a complete refresh with ``entries`` (``_entries`` of the universe) would read,
        hash again and remove, without doing it (``code.refresh.pending``); ``parts="all"``:
        the files whose definitions are still to come count too."""
        return self.index.pending(entries, max_bytes=_MAX_BYTES, parts=parts)

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
        """``found`` (definitions of ``path``) with their tokens: what the read that fetches
        each costs, as the caller receives it (``head path=P symbol=Q``, with ``start`` when
        the name is shared: header, numbered lines, notices; ``headtail.read_costs``), counted
        now through ``count`` (whose cache remembers the numbered lines by content)."""
        if self.count is None or not found:
            return tuple(found)
        from ..primitives.headtail import read_costs

        with self.policy.opener() as opener:
            try:
                data, st = opener.read(path, _MAX_BYTES + 1)
            except OSError:
                return tuple(found)
        if len(data) > _MAX_BYTES:
            return tuple(found)
        costs = read_costs(path, data, mtime_of(st), [(d.start_line, d.end_line, self.defined_elsewhere(path, d)) for d in found], self.count)
        return tuple(replace(d, tokens=t) for d, t in zip(found, costs))

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
        from .parse import language_for

        res = Result(tool="outline")
        with self.policy.opener() as opener:
            data = _peek_bytes(opener, rel)
        if language_for(rel, data) is None:
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

    def symbols(self, query: str, *, under: str, kind: str | None, limit: int, deadline: float | None = None) -> Result:
        """Definitions by name across the repository (see ``Workspace.symbols``). When
        more than ``_INLINE`` files that can define are new, changed or not parsed yet
        (a first call, a build under way), the answer does not wait for them: it comes
        from the part of the index that is current and the files grep finds defining the
        name, parsed now until ``deadline`` (monotonic); ``extra["partial"]`` says how
        much was left (the caller starts the build and says so)."""
        from .parse import EXTENSIONS

        scope = "" if under in (".", "") else under
        query = _dotted(query)
        rows, waiting = self.index.outlined()
        if waiting > _INLINE or (rows == 0 and (self.repo.tracked_count() or 0) > _INLINE):  # a build under way, a first call on a big tree: no listing, grep at once
            return self._symbols_partial(query, scope, kind, limit, None, None, deadline)
        # only files that can hold definitions need to be current for a lookup (a quarter of a
        # large tree): git lists the tracked ones by extension; the others' words wait for
        # locate, whose refresh is complete
        suffixes = tuple(sorted("." + e for e in EXTENSIONS))
        entries: list = []
        for chunk in self.repo.file_chunks(suffix=suffixes):  # stat tracked files while git walks for the rest
            entries += self._entries(_defining(chunk))
        work, _racy, _ = self.index.pending(entries, max_bytes=_MAX_BYTES, parts="all", complete=False)
        if len(work) > _INLINE:  # racy rows only want a hash again: done inline, as build.plan counts them
            return self._symbols_partial(query, scope, kind, limit, entries, set(work), deadline)
        self.refresh(entries=entries)
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
        return self._symbols_result(query, scope, kind, found)

    def _symbols_partial(self, query: str, scope: str, kind: str | None, limit: int, entries: list | None, behind: set[str] | None, deadline: float | None) -> Result:
        """``symbols`` from what can be had at once (see ``symbols``): grep for the lines
        that may define the name, those files parsed now (most matches first, until
        ``deadline``) and written to the index, then the index's answer without the files
        it is behind on and without any hit whose file changed since. ``entries`` and
        ``behind``: the listing and the files it is behind on, when they were listed (a
        checkout); None: not listed (the index is empty or its definitions are still being
        built: the rows still to be parsed are what it is behind on)."""
        import time

        from .rows import Lookup

        held, cut = self._defining_files(query, scope, deadline)
        if behind is None:
            behind = self.index.unoutlined()
            known = {e[0]: e for e in self._entries(held)}
            todo = [p for p in held if p in known and (p in behind or not _row_matches(self.index.state(p), known[p]))]
            rows = self.index.outlined()[0]
            listed = self.repo.tracked_count() or rows
        else:
            known = {e[0]: e for e in entries or ()}
            todo = [p for p in held if p in behind]
            listed = rows = len(entries or ())
        parsed: set[str] = set()
        for i in range(0, len(todo), 8):
            if i and deadline is not None and time.monotonic() > deadline - 0.3:  # the first files whatever the clock says
                break
            chunk = [known[p] for p in todo[i : i + 8] if p in known]
            self.refresh(entries=chunk, complete=False, progress=False)
            parsed.update(e[0] for e in chunk)
        left = behind - parsed
        not_indexed = len(left) if rows else max(listed - len(parsed), 0)  # nothing indexed yet: the whole tree is behind
        found = self.index.find(query, kind=kind, under=scope, limit=limit + min(len(left), 500))
        kept = tuple(h for h in found.hits if h.path not in left and self._fresh(h.path))
        dropped = len(found.hits) - len(kept)
        found = Lookup(kept[:limit], max(found.total - dropped, len(kept)), found.others, found.others_total)
        res = self._symbols_result(query, scope, kind, found)
        res.extra["partial"] = {"files_behind": not_indexed, "files_listed": listed, "grep_files": len(held), "parsed_now": len(parsed)}
        name = query.rstrip(".").rsplit(".", 1)[-1]
        missed = f"; {len(todo) - len(parsed):,} more files grep finds were not parsed in time" if len(todo) > len(parsed) else ""
        cut_note = f" (grep stopped at its time cap of {cut:.1f} s: files it did not reach are missing)" if cut else ""
        res.add_notice(
            f"{not_indexed:,} files are not indexed yet: this answer comes from the rest of the index and the"
            f" {len(held):,} files grep finds that may define {name!r}{cut_note} ({len(parsed):,} parsed now{missed}); it may miss a definition grep's patterns do not show."
        )
        return res

    def _defining_files(self, query: str, scope: str, deadline: float | None) -> tuple[list[str], float | None]:
        """The files with a grammar that grep finds a line in that may define the last part
        of ``query`` (a keyword before it, or an opening parenthesis after it on a line
        without ``;``: a C/C++/Java definition, not a call statement), most matches first,
        tests last; and grep's time cap when it stopped there (else None)."""
        import re
        import time

        from ..primitives.search import search
        from ..query import MAX_LIMIT, SearchQuery
        from .parse import EXTENSIONS

        name = query.rstrip(".").rsplit(".", 1)[-1]
        if not name:
            return [], None
        word = re.escape(name) + (r"\w*" if "." not in query else r"\b")  # a dotless query may be a prefix
        keywords = "def|class|struct|union|enum|interface|trait|type|typedef|func|fn|function|namespace|module|mod|macro_rules!|record|define|impl|using"
        pattern = rf"\b(?:{keywords})\b[^\n;]*?\b{word}|(?:^|[^\w.>])~?{word}\s*(?:<[^;\n]*>)?\s*\([^;\n]*$|\b{word}\s*[:=]\s*(?:async\b|function\b|class\b|\()"
        remaining = 2.0 if deadline is None else max(deadline - time.monotonic() - 0.6, 1.5)  # on a loaded machine a later answer, not an empty one
        q = SearchQuery.make(
            pattern=pattern,
            path=scope or ".",
            glob=tuple(f"*.{e}" for e in sorted(EXTENSIONS)),
            mode="count",
            ignore_case=name == name.lower(),
            limit=MAX_LIMIT,
            timeout=remaining,
        )
        try:
            res, _ = search(self.repo, self.policy, q)
        except Exception:  # noqa: BLE001 - a partial answer without grep's files is still an answer
            return [], None
        from .testpaths import is_test_path

        found = [r.path for r in res.results if getattr(r, "path", None)]  # most matches first
        cut = remaining if res.notice and "time cap" in res.notice else None
        return sorted(found, key=is_test_path), cut  # tests last: they call a name more often than they define it

    def _symbols_result(self, query: str, scope: str, kind: str | None, found: Lookup) -> Result:
        """The ``symbols`` result of a lookup: hits priced, notices for a cut list, for prefix
        matches left out, for no match (where the last part is defined)."""
        res = Result(tool="symbols", total=found.total, truncated=found.truncated)
        by_file: dict[str, list] = {}
        for h in found.hits:
            by_file.setdefault(h.path, []).append(h.definition)
        priced = {p: dict(zip(map(id, ds), self.priced(p, ds))) for p, ds in by_file.items()}
        res.results = [self._symbol(h.path, priced[h.path][id(h.definition)]) for h in found.hits]
        if found.truncated:
            res.notice = f"showing {len(found.hits):,} of {found.total:,} definitions; raise limit, or narrow with path or kind (or a qualified name such as Class.method)."
        if found.others:
            more = f" and {found.others_total - len(found.others):,} more" if found.others_total > len(found.others) else ""
            res.add_notice(
                f"{found.others_total:,} other definition{'s' if found.others_total != 1 else ''} start{'s' if found.others_total == 1 else ''} with {query!r}, not listed: "
                f"{', '.join(found.others)}{more}; ask for one by name, e.g. symbols query={found.others[0]}."
            )
        elif not found.hits:
            res.notice = f"no definition named {query!r}" + (f" under {scope}" if scope else "")
            last = query.rstrip(".").rsplit(".", 1)[-1]
            near = [h for h in self.index.find(last, kind=kind, under=scope, limit=5).hits if h.tier == "exact"] if last and last != query else []
            if near:  # Flask.route is Scaffold.route: an inherited or moved name
                res.notice += (
                    "; " + ", ".join(f"{h.definition.qualname} ({h.path}:{h.definition.start_line})" for h in near) + (" defines" if len(near) == 1 else " define") + f" {last!r}."
                )
            else:
                res.notice += "; try a prefix ('Name.' lists a class's members), or grep for the text."
        return res

    def find_symbol(self, rel: str, name: str, *, start: int = 1) -> Definition:
        """The one definition of ``rel`` named ``name`` (a name, a qualname, or a
        qualname's tail on a name boundary; ``::`` or ``.`` between the parts). Several:
        ``start`` picks the one holding that line (the innermost; the default, 1, picks
        only when one holds it), else an implementation is preferred over declarations
        and stubs (``Definition.stub``). ``QueryError`` when it is missing or still
        ambiguous, naming the candidates and the call that reads one."""
        found = self.definitions(rel)
        want = _dotted(name)
        if not want:
            raise QueryError("symbol is empty", hint=f"name one of its definitions ({call('outline', path=rel)} lists them)", field="symbol")
        exact = [d for d in found if d.qualname == want]
        if not exact:
            exact = [d for d in found if d.qualname.endswith("." + want) or d.name == want]
        if len(exact) > 1:
            holding = [d for d in exact if d.start_line <= start <= d.end_line]
            exact = [max(holding, key=lambda d: d.depth)] if holding else [d for d in exact if not d.stub] or exact
        if len(exact) == 1:
            return exact[0]
        if exact:
            listed = "; ".join(f"{d.qualname} (lines {d.start_line}-{d.end_line}{', declared only' if d.stub else ''})" for d in exact[:10])
            more = f" and {len(exact) - 10} more" if len(exact) > 10 else ""
            first = exact[0]
            raise QueryError(
                f"symbol {want!r} is ambiguous in {rel}: {len(exact)} definitions: {listed}{more}",
                hint=f"pick one by a line it holds, e.g. {call('head', path=rel, symbol=first.qualname, start=first.start_line)}",
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
            + f"; or find it across the repository with {call('symbols', query=want.rsplit('.', 1)[-1])}",
            field="symbol",
        )

    def defined_elsewhere(self, rel: str, d: Definition) -> str | None:
        """For a declaration (``d.stub``) whose implementation another file holds (a C++
        method declared in its header, a ``.pyi`` stub), the note that names it and the
        read that fetches it; else None. Found in the index by the last two parts of the
        qualname (``using namespace`` drops the first ones), the implementation whose
        qualname ends like the declaration's (or the other way round) and the shortest
        path first."""
        if not d.stub or self._index is None and not os.path.exists(index_file(self.repo.root, self.cache_dir)):
            return None
        tail = ".".join(d.qualname.split(".")[-2:])
        try:
            hits = self.index.find(tail, kind=None, under="", limit=50).hits
        except QueryError:
            return None
        mine, theirs = "." + d.qualname, None
        for h in hits:
            q = h.definition.qualname
            if h.path != rel and not h.definition.stub and h.tier in ("exact", "qualified") and (mine.endswith("." + q) or ("." + q).endswith(mine)):
                theirs = h
                break
        if theirs is None:
            return None
        e = theirs.definition
        return f"{rel} declares {d.qualname}; its definition is {theirs.path}:{e.start_line}-{e.end_line}: read it with head path={theirs.path} symbol={e.qualname}."

    def enclosing(self, wanted: dict[str, list[int]]) -> dict[str, Callable[[int], Definition | None]]:
        """For grep's ``symbol`` field: per file with a grammar, a lookup from a
        line to its innermost definition. ``wanted``: path -> the lines asked
        about. Uses the index's row when the file's stat signature still
        matches it; else parses the file here up to the last of those lines
        (no index write, no token counts: the innermost definition around a
        line does not depend on what follows it), within ``_PARSE_BUDGET``
        bytes a call, the files with the fewest bytes to parse per line asked
        about first (the most lines annotated for the bytes parsed)."""
        from .outline import innermost_lookup, outline
        from .parse import language_for

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
            if index is not None and state is not None and state.blob is not None and state.outlined and _row_matches(state, entry):
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
                language = language_for(rel, data)
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


def _dotted(name: str) -> str:
    """A qualified name as the index writes it: ``Parser::parse_ratio`` is ``Parser.parse_ratio``."""
    name = name.strip()
    return name.replace("::", ".") if "::" in name else name


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
    from .parse import EXTENSIONS

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
