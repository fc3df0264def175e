"""Notes kept outside the context window: per repository, outside the tree (issue 22).

Owns the notes of one repository: a JSON file in the cache folder
(``<cache>/notes/<folder>-<digest of the root>.json``, never inside the
served tree), written whole to a temporary file and renamed over the old
one under an exclusive lock, so two processes never lose each other's notes
and a crash never leaves half a file. A note may be tied to paths (the
sha256 of each file when the note was written) and to symbols (the sha256
of the definition's text); reading or listing a note says which of them
changed since, or went. A file that cannot be read as notes is kept aside,
never overwritten. Does not own finding definitions (the Workspace passes
what a symbol's text is now) or reading files (``policy``).
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from .errors import QueryError

__all__ = ["MAX_NOTES", "MAX_TEXT", "Note", "NoteStore", "notes_file", "stale_of", "words"]

MAX_TEXT = 20_000  # characters of one note
MAX_NOTES = 5_000  # notes of one repository
VERSION = 1


def notes_file(root: str, cache: str | None = None) -> str:
    """Where the notes of ``root`` live (beside the code index, in ``notes/``)."""
    from .cache import index_file

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
        from .render import age, show_name

        about = [view.path(p) for p, _ in self.paths] + [s for s, _ in self.symbols]
        parts = [f"#{self.id}", age(self.created, now)]
        if about:
            parts.append("about " + ", ".join(show_name(a) for a in about))
        if self.stale:
            parts.append("[stale: " + "; ".join(f"{show_name(view.path(s['path'])) if 'path' in s else s['symbol']} {s['change']} since written" for s in self.stale) + "]")
        lines = self.text.strip().splitlines() or [""]
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
        try:
            with open(self.path, encoding="utf-8") as f:
                raw = json.load(f)
            if not isinstance(raw, dict) or raw.get("version") != VERSION or not isinstance(raw.get("notes"), list):
                raise ValueError("not a notes file of this version")
            return [_note(d) for d in raw["notes"]]
        except FileNotFoundError:
            return []
        except (OSError, ValueError, TypeError, KeyError) as exc:
            aside = f"{self.path}.unreadable-{int(time.time())}"
            try:
                os.replace(self.path, aside)
            except OSError:
                raise QueryError(f"the notes file {self.path} cannot be read ({exc})", hint="move it away; nothing was written") from None
            self.notice = f"the notes file could not be read ({type(exc).__name__}) and was kept as {aside}; new notes start a new file"
            return []

    def _change(self, edit: Callable[[list[Note]], object]) -> object:
        """Read, edit and write the notes under an exclusive lock, atomically."""
        import fcntl

        os.makedirs(os.path.dirname(self.path), mode=0o700, exist_ok=True)
        lock = os.open(self.path + ".lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX)
            notes = self._load()
            out = edit(notes)
            tmp = f"{self.path}.{os.getpid()}.tmp"
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump({"version": VERSION, "notes": [n._stored() for n in notes]}, f, ensure_ascii=False)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)
            return out
        finally:
            os.close(lock)

    # -- the four actions --------------------------------------------------------------

    def add(self, text: str, paths: tuple[tuple[str, str | None], ...] = (), symbols: tuple[tuple[str, str | None], ...] = ()) -> Note:
        text = check_text(text)

        def edit(notes: list[Note]) -> Note:
            if len(notes) >= MAX_NOTES:
                raise QueryError(f"this repository has {len(notes):,} notes, the most kept", hint="delete old ones with notes action=delete id=N")
            note = Note(max((n.id for n in notes), default=0) + 1, text, time.time(), paths, symbols)
            notes.append(note)
            return note

        return self._change(edit)  # type: ignore[return-value]

    def list(self) -> list[Note]:
        return self._load()

    def read(self, note_id: int) -> Note:
        for n in self._load():
            if n.id == note_id:
                return n
        raise QueryError(f"no note with id {note_id}", hint="list them with notes action=list", field="id")

    def delete(self, note_id: int) -> Note:
        def edit(notes: list[Note]) -> Note:
            for i, n in enumerate(notes):
                if n.id == note_id:
                    return notes.pop(i)
            raise QueryError(f"no note with id {note_id}", hint="list them with notes action=list", field="id")

        return self._change(edit)  # type: ignore[return-value]


def check_text(text: object) -> str:
    if not isinstance(text, str) or not text.strip():
        raise QueryError(f"a note needs text, got {text!r}", hint="pass text='what to remember', e.g. a decision or a finding", field="text")
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


_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")


def words(text: str) -> set[str]:
    """The words a task and a note are matched by (lower case, three letters or more)."""
    return {w.lower() for w in _WORD.findall(text)}
