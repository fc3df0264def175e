"""Notes kept outside the context window: per repository, outside the tree (issue 22).

Owns the notes of one repository: a JSON file in the cache folder
(``<cache>/notes/<folder>-<digest of the root>.json``, never inside the
served tree), written whole to a temporary file and renamed over the old
one under an exclusive lock, so two processes never lose each other's notes
and a crash never leaves half a file. A note may be tied to paths (the
sha256 of each file when the note was written) and to symbols (the sha256
of the definition's text); reading or listing a note says which of them
changed since, or went, by content (every byte, whatever the file's size).
The notes file is opened as untrusted: a regular file only, no link
followed, no open that can block (a FIFO); a file that cannot be read as
notes is kept aside under a name of its own, never overwritten, and a cache
that cannot be written is an error naming the path and the fix. Ids are
never reused: the file keeps the next one. Note text is shown with control
characters escaped. :func:`answer` runs a notes query (the primitive: the
Workspace records and fills the session fields). Does not own finding
definitions (the code index it is given) or reading files (``policy``).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from ..errors import QueryError

__all__ = ["MAX_NOTES", "MAX_TEXT", "Note", "NoteStore", "answer", "definitions_sha", "file_sha", "notes_file", "stale_of", "words"]

MAX_TEXT = 20_000  # characters of one note
MAX_NOTES = 5_000  # notes of one repository
VERSION = 1


def notes_file(root: str, cache: str | None = None) -> str:
    """Where the notes of ``root`` live (beside the code index, in ``notes/``)."""
    from ..cache.folders import index_file

    index = index_file(root, cache)  # <cache>/index/<name>-<digest>.sqlite
    return os.path.join(os.path.dirname(os.path.dirname(index)), "notes", os.path.basename(index)[: -len(".sqlite")] + ".json")


@dataclass(frozen=True, slots=True)
class Note:
    """One note: ``id``, ``text``, ``created`` (epoch seconds); ``paths`` and ``symbols``
    it is tied to, each with the sha256 of its content when written; ``stale``: what
    changed since (``{"path" | "symbol", "change": changed | deleted}``), filled when
    listed or read."""

    id: int
    text: str
    created: float
    paths: tuple[tuple[str, str | None], ...] = ()
    symbols: tuple[tuple[str, str | None], ...] = ()
    stale: tuple[dict, ...] = field(default=())
    brief: bool = field(default=False, compare=False)  # shown as in a list: the first line

    def render(self, now: float | None, view) -> str:
        """The note in text: ``#id  age  [about ...]  [stale: ...]``, then its text
        (a list shows the first line only)."""
        from ..render import age, show_name

        about = [view.path(p) for p, _ in self.paths] + [s for s, _ in self.symbols]
        parts = [f"#{self.id}", age(self.created, now)]
        if about:
            parts.append("about " + ", ".join(show_name(a) for a in about))
        if self.stale:
            parts.append(
                "[stale: " + "; ".join(f"{show_name(view.path(s['path'])) if 'path' in s else show_name(s['symbol'])} {s['change']} since written" for s in self.stale) + "]"
            )
        lines = [show_name(ln.removesuffix("\r")) for ln in self.text.strip().split("\n")]  # control characters escaped, as in names
        if self.brief:
            first = lines[0] if len(lines[0]) <= 120 else lines[0][:117] + "..."
            return "  ".join(parts) + "  " + first + (f"  (+{len(lines) - 1} lines)" if len(lines) > 1 else "")
        return "\n".join(["  ".join(parts), *(f"  {ln}" for ln in lines)])

    def to_dict(self) -> dict[str, object]:
        return {
            "id": self.id,
            "text": self.text,
            "created": round(self.created, 3),
            "paths": [p for p, _ in self.paths],
            "symbols": [s for s, _ in self.symbols],
            "stale": list(self.stale),
        }

    def _stored(self) -> dict:
        return {"id": self.id, "text": self.text, "created": self.created, "paths": [list(p) for p in self.paths], "symbols": [list(s) for s in self.symbols]}


class NoteStore:
    """The notes of one repository. ``path``: the JSON file; ``notice``: why a file was
    set aside, if one was. Every method reads the file afresh (another process may
    have written it)."""

    def __init__(self, root: str, *, cache: str | None = None) -> None:
        self.root = os.path.realpath(root)
        self.path = notes_file(self.root, cache)
        self.notice: str | None = None
        folder = os.path.dirname(self.path)
        if os.path.realpath(folder) == self.root or os.path.realpath(folder).startswith(self.root + os.sep):
            raise QueryError(
                f"the cache folder {folder} is inside the repository {self.root}: notes are kept outside the tree", hint="set JITCTX_CACHE_DIR to a folder outside the repository"
            )

    # -- reading and writing -----------------------------------------------------

    def _load(self) -> list[Note]:
        return self._read()[0]

    def _read(self) -> tuple[list[Note], int]:
        """The notes and the next id (one more than any id ever given, deleted ones too)."""
        try:
            raw = json.loads(_read_untrusted(self.path))
            if not isinstance(raw, dict) or raw.get("version") != VERSION or not isinstance(raw.get("notes"), list):
                raise ValueError("not a notes file of this version")
            notes = [_note(d) for d in raw["notes"]]
            after = max((n.id for n in notes), default=0) + 1
            nxt = raw.get("next", after)
            if isinstance(nxt, bool) or not isinstance(nxt, int):
                raise ValueError("its next id is not a number")
            return notes, max(nxt, after)
        except FileNotFoundError:
            return [], 1
        except OSError as exc:
            if exc.errno not in (errno.EINVAL, errno.ELOOP):  # a passing fault (permissions, too many open files): said, nothing moved
                raise QueryError(f"the notes file {self.path} cannot be read ({_why(exc)})", hint=f"check that {self.path} is yours and readable; nothing was changed") from None
            bad: BaseException = exc  # a link or a FIFO where the file should be: never followed, set aside
        except (ValueError, TypeError, KeyError) as exc:  # not notes: set aside
            bad = exc
        aside = self._set_aside(bad)
        self.notice = f"the notes file could not be read ({_why(bad)}) and was kept as {aside}; new notes start a new file"
        return [], 1

    def _set_aside(self, exc: BaseException) -> str:
        """Move the unreadable notes file to a name no other one has; its new path."""
        stamp = time.strftime("%Y%m%dT%H%M%S", time.localtime())
        for k in range(1000):
            aside = f"{self.path}.unreadable-{stamp}" + (f"-{k}" if k else "")
            if os.path.lexists(aside):
                continue
            try:
                os.rename(self.path, aside)  # under the lock when writing; a same-second race lands on the next name
            except OSError as err:
                raise QueryError(
                    f"the notes file {self.path} cannot be read ({_why(exc)}) nor moved aside ({_why(err)})",
                    hint=f"move it away yourself (mv {self.path} elsewhere); nothing was written",
                ) from None
            return aside
        raise QueryError(f"the notes file {self.path} cannot be read ({_why(exc)}) and 1,000 unreadable copies are kept beside it", hint="remove the old .unreadable-* files")

    def _change(self, edit: Callable[[list[Note], int], object], *, grow: bool = False) -> object:
        """Read, edit and write the notes under an exclusive lock, atomically.
        ``edit(notes, next_id)``; with ``grow`` the next id moves past the one just given."""
        import fcntl

        folder = os.path.dirname(self.path)
        tmp = f"{self.path}.{os.getpid()}.tmp"
        try:
            os.makedirs(folder, mode=0o700, exist_ok=True)
            lock = _open_untrusted(self.path + ".lock", os.O_RDWR | os.O_CREAT)
        except OSError as exc:
            raise _unwritable(self.path, exc) from None
        try:
            fcntl.flock(lock, fcntl.LOCK_EX)
            notes, nxt = self._read()
            out = edit(notes, nxt)
            stored = {"version": VERSION, "next": nxt + 1 if grow else nxt, "notes": [n._stored() for n in notes]}
            text = json.dumps(stored, ensure_ascii=False)
            try:
                data = text.encode("utf-8")
            except UnicodeEncodeError:  # a name or text that was not UTF-8 (lone surrogates): escaped, as render_json does
                data = json.dumps(stored).encode("ascii")
            try:
                fd = _open_untrusted(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
                with os.fdopen(fd, "wb") as f:
                    f.write(data)
                    f.flush()
                    os.fsync(f.fileno())
                os.replace(tmp, self.path)
            except OSError as exc:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise _unwritable(self.path, exc) from None
            return out
        finally:
            os.close(lock)

    # -- the four actions --------------------------------------------------------------

    def add(self, text: str, paths: tuple[tuple[str, str | None], ...] = (), symbols: tuple[tuple[str, str | None], ...] = ()) -> Note:
        text = check_text(text)

        def edit(notes: list[Note], nxt: int) -> Note:
            if len(notes) >= MAX_NOTES:
                raise QueryError(f"this repository has {len(notes):,} notes, the most kept", hint=f"delete old ones, oldest first: notes action=delete id={notes[0].id}")
            note = Note(nxt, text, time.time(), paths, symbols)
            notes.append(note)
            return note

        return self._change(edit, grow=True)  # type: ignore[return-value]

    def list(self) -> list[Note]:
        return self._load()

    def read(self, note_id: int) -> Note:
        for n in self._load():
            if n.id == note_id:
                return n
        raise QueryError(f"no note with id {note_id}", hint="list them with notes action=list", field="id")

    def delete(self, note_id: int) -> Note:
        def edit(notes: list[Note], nxt: int) -> Note:
            for i, n in enumerate(notes):
                if n.id == note_id:
                    return notes.pop(i)
            raise QueryError(f"no note with id {note_id}", hint="list them with notes action=list", field="id")

        return self._change(edit)  # type: ignore[return-value]


MAX_FILE = MAX_NOTES * (MAX_TEXT * 4 + 4096)  # bytes a notes file can hold, read at most


def _open_untrusted(path: str, flags: int) -> int:
    """A descriptor of the regular file ``path``: no symlink followed, no open that waits
    (a FIFO), ``EINVAL`` for anything but a regular file. Created files are 0600."""
    fd = os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o600)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, f"not a regular file ({_kind(st.st_mode)})", path)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _read_untrusted(path: str) -> str:
    """The notes file's text (UTF-8), read as :func:`_open_untrusted` opens it, bounded."""
    with os.fdopen(_open_untrusted(path, os.O_RDONLY), "rb") as f:
        data = f.read(MAX_FILE + 1)
    if len(data) > MAX_FILE:
        raise ValueError(f"over {MAX_FILE:,} bytes")
    return data.decode("utf-8")


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a device"), (stat.S_ISBLK, "a device")):
        if test(mode):
            return name
    return "not a file"


def _why(exc: BaseException) -> str:
    """An error in a few words, without the path (the message names it once)."""
    if isinstance(exc, OSError):
        if exc.errno == errno.ELOOP:
            return "a symbolic link"
        return exc.strerror or type(exc).__name__
    if isinstance(exc, UnicodeDecodeError):
        return "not UTF-8"
    if isinstance(exc, ValueError):
        return str(exc).split(":", 1)[0][:80] or "not JSON"
    return type(exc).__name__


def _unwritable(path: str, exc: OSError) -> QueryError:
    """A cache that cannot take the notes: the path, the reason, the fix."""
    folder = os.path.dirname(path)
    named = exc.filename if isinstance(exc.filename, str) and exc.filename != path else None
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        fix = f"free space on the disk holding {folder}, or set JITCTX_CACHE_DIR to a folder on another disk (outside the repository)"
    elif exc.errno in (errno.EINVAL, errno.ELOOP) and named:
        fix = f"remove {named} (jitctx keeps only regular files there), or set JITCTX_CACHE_DIR to another folder outside the repository"
    else:
        fix = f"make {folder} writable, or set JITCTX_CACHE_DIR to a writable folder outside the repository"
    where = f" ({named}: {_why(exc)})" if named else f" ({_why(exc)})"
    return QueryError(f"the notes file {path} cannot be written{where}; nothing was written", hint=fix)


def check_text(text: object) -> str:
    if not isinstance(text, str) or not text.strip():
        raise QueryError(f"a note needs text, got {text!r}", hint="give the note's text: a finding, a decision, where to look", field="text")
    if len(text) > MAX_TEXT:
        raise QueryError(f"the note is {len(text):,} characters; the most is {MAX_TEXT:,}", hint="keep notes short: a finding, a decision, where to look", field="text")
    if "\0" in text:
        raise QueryError("the note holds a NUL character", hint="pass plain text", field="text")
    return text


def _note(d: dict) -> Note:
    return Note(int(d["id"]), str(d["text"]), float(d["created"]), tuple((str(p), h) for p, h in d.get("paths", ())), tuple((str(s), h) for s, h in d.get("symbols", ())))


def stale_of(note: Note, path_sha: Callable[[str], str | None], symbol_sha: Callable[[str], str | None]) -> Note:
    """``note`` with ``stale`` filled: each tied path or symbol whose content's sha256 is
    not the one it had when the note was written (``None`` now: deleted)."""
    out = []
    for kind, ties, now in (("path", note.paths, path_sha), ("symbol", note.symbols, symbol_sha)):
        for name, was in ties:
            cur = now(name)
            if cur != was:
                out.append({kind: name, "change": "deleted" if cur is None else "changed"})
    return Note(note.id, note.text, note.created, note.paths, note.symbols, tuple(out), note.brief)


# -- the primitive: a notes query answered (the Workspace records and fills the rest) --------


def answer(store: NoteStore, q, policy, code: Callable[[], object]):
    """``q`` (a :class:`jitctx.query.NotesQuery`) on ``store``: the Result and the paths it
    shows. Ties are hashed through ``policy``'s opener; ``code()`` is the code index
    (definitions of a symbol)."""
    from dataclasses import replace

    from ..refs import Result

    if q.action == "add":
        ties = tuple((t.path, file_sha(policy, t.path)) for t in (policy.resolve(p, want="file") for p in q.paths))
        defs = tuple((name, definitions_sha(policy, code(), name, must=True)) for name in q.symbols)
        note = store.add(q.text or "", ties, defs)
        res = Result("notes", [note], total=1)
        res.add_notice(f"note #{note.id} kept outside the tree ({store.path}); read it with notes action=read id={note.id}")
        return res, [p for p, _ in note.paths]
    if q.action == "delete":
        note = store.delete(q.id or 0)
        res = Result("notes", [replace(note, brief=True)], total=1)  # what went, so a delete is found (exit 0) and says what it removed
        res.add_notice(f"note #{note.id} deleted; its id is not given again.")
        return res, []
    found = [store.read(q.id or 0)] if q.action == "read" else store.list()
    judged = [stale_of(n, lambda rel: _current_sha(policy, rel), lambda name: definitions_sha(policy, code(), name)) for n in found]
    res = Result("notes", judged if q.action == "read" else [replace(n, brief=True) for n in judged], total=len(judged))
    if store.notice:
        res.add_notice(store.notice)
    if q.action == "list":
        stale = sum(1 for n in judged if n.stale)
        if judged:
            res.add_notice(
                f"{len(judged):,} note{'s' if len(judged) != 1 else ''}"
                + (f", {stale:,} stale (a path or symbol changed since written)" if stale else "")
                + f"; read one with notes action=read id={judged[0].id}"
            )
        else:
            res.add_notice("no notes kept for this repository; add one with notes action=add text='what to remember'")
    return res, []


def file_sha(policy, rel: str) -> str:
    """sha256 of a file's bytes, all of them whatever its size, read through the policy's
    opener (a note is stale by content, never by size and mtime)."""
    import hashlib

    h = hashlib.sha256()
    with policy.opener() as opener:
        f, _ = opener.open(rel)
        with f:
            while chunk := f.read(1 << 20):
                h.update(chunk)
    return h.hexdigest()


def _current_sha(policy, rel: str) -> str | None:
    from ..errors import JitctxError

    try:
        return file_sha(policy, policy.resolve(rel, want="file").path)
    except (JitctxError, OSError):
        return None


def definitions_sha(policy, code, name: str, *, must: bool = False) -> str | None:
    """sha256 of the text of every definition named ``name`` (overloads together), ``None``
    if there is none now (``must``: an error naming it instead)."""
    import hashlib

    from ..errors import JitctxError

    found = code.symbols(name, under="", kind=None, limit=50).results
    hits = sorted((s for s in found if s.qualname == name or s.name == name), key=lambda s: (s.path, s.start_line))
    if not hits:
        if must:
            raise QueryError(
                f"no definition named {name!r} to tie the note to", hint=f"look for it with symbols query={_last(name)!r}, or tie the note to its file instead", field="symbols"
            )
        return None
    h = hashlib.sha256()
    try:
        with policy.opener() as opener:
            for s in hits:
                data, _ = opener.read(s.path, 8 * 1024 * 1024)
                h.update(f"{s.path}:{s.qualname}\0".encode() + b"\n".join(data.split(b"\n")[s.start_line - 1 : s.end_line]) + b"\0")
    except (JitctxError, OSError):
        return None
    return h.hexdigest()


def _last(name: str) -> str:
    """A qualified name's last part (``Rational.__add__`` -> ``__add__``), what symbols finds anywhere."""
    return re.split(r"\.|::", name)[-1] or name


_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")


def words(text: str) -> set[str]:
    """The words a task and a note are matched by (lower case, three letters or more)."""
    return {w.lower() for w in _WORD.findall(text)}
