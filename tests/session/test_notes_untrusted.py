"""The notes file is untrusted state: never a hang, never a traceback, never a lost file;
staleness by content; control characters escaped (issue 29 items 9-10, issue 30 item 8,
issue 33 item 3)."""

from __future__ import annotations

import json
import os
import stat

import pytest

from jitctx import Workspace
from jitctx.errors import QueryError
from jitctx.session.notes import NoteStore, notes_file


@pytest.fixture
def ws(make_repo):
    repo = make_repo("basic")
    with Workspace(repo.root) as w:
        yield repo, w


def test_issue_29_a_note_on_a_file_over_8_mib_goes_stale_by_content(ws):
    repo, w = ws
    big = repo.write("big.log", b"x" * (9 * 1024 * 1024) + b"tail\n")
    before = os.stat(big)
    w.notes("add", "the log ends in tail", paths=["big.log"])
    assert w.notes("read", id=1).results[0].stale == ()
    with open(big, "r+b") as f:  # one byte changed in place, the mtime put back
        f.seek(9 * 1024 * 1024 + 1)
        f.write(b"A")
    os.utime(big, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert os.stat(big).st_size == before.st_size and os.stat(big).st_mtime_ns == before.st_mtime_ns
    assert w.notes("read", id=1).results[0].stale == ({"path": "big.log", "change": "changed"},)


def test_issue_29_control_characters_in_notes_are_escaped_in_text(ws, capsys):
    from jitctx.adapters.cli import main

    repo, w = ws
    w.notes("add", "clear \x1b[2J\x1b]0;pwned\x07 and \u202eevil\nsecond\rline\r\n")
    for argv in (["notes", "list"], ["notes", "read", "--id", "1"]):
        assert main([*argv, "--root", str(repo.root)]) == 0
        out = capsys.readouterr().out
        assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out and "\r" not in out
        assert "\\x1b[2J\\x1b]0;pwned\\x07" in out and "\\u202eevil" in out
    assert w.notes("read", id=1).results[0].text.startswith("clear \x1b[2J")  # kept as written; JSON has it exact


def test_issue_30_a_fifo_as_the_notes_file_does_not_hang(ws):
    repo, w = ws
    path = notes_file(str(repo.root))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    os.mkfifo(path)
    res = w.notes("list")  # returns: the FIFO is never opened for a blocking read
    assert res.results == [] and "not a regular file" in res.notice and "kept as" in res.notice
    assert w.notes("add", "after the fifo").results[0].id == 1
    aside = [p for p in os.listdir(os.path.dirname(path)) if ".unreadable-" in p]
    assert len(aside) == 1 and stat.S_ISFIFO(os.lstat(os.path.join(os.path.dirname(path), aside[0])).st_mode)


def test_issue_30_a_symlink_as_the_notes_file_is_not_followed(ws, tmp_path):
    repo, w = ws
    target = tmp_path / "elsewhere.json"
    target.write_text(json.dumps({"version": 1, "notes": [{"id": 1, "text": "planted", "created": 0}]}))
    path = notes_file(str(repo.root))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    os.symlink(target, path)
    assert w.notes("list").results == []  # not read through the link
    w.notes("add", "mine")
    assert "planted" in target.read_text() and "mine" not in target.read_text()  # not written through it


def test_issue_30_a_non_utf8_note_and_path_are_kept(ws):
    repo, w = ws
    name = os.fsdecode(b"caf\xe9.txt")
    repo.write(name, "x\n")
    text = os.fsdecode(b"note \xff here")
    note = w.notes("add", text, paths=[name]).results[0]
    assert note.text == text
    listed = w.notes("list").results
    assert [n.text for n in listed] == [text] and listed[0].paths[0][0] == name and not listed[0].stale
    folder = os.path.dirname(notes_file(str(repo.root)))
    assert not [p for p in os.listdir(folder) if p.endswith(".tmp")]


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder")
def test_issue_30_a_read_only_cache_is_a_clear_error(ws):
    repo, w = ws
    folder = os.path.dirname(notes_file(str(repo.root)))
    os.makedirs(folder, exist_ok=True)
    os.chmod(folder, 0o500)
    try:
        with pytest.raises(QueryError) as info:
            w.notes("add", "x")
    finally:
        os.chmod(folder, 0o700)
    assert notes_file(str(repo.root)) in info.value.message and "JITCTX_CACHE_DIR" in info.value.hint


def test_issue_30_a_cache_folder_that_cannot_be_made_is_a_clear_error(ws, monkeypatch):
    import errno

    repo, w = ws
    folder = os.path.dirname(notes_file(str(repo.root)))

    def denied(*a, **k):
        raise PermissionError(errno.EACCES, "Permission denied", folder)

    with monkeypatch.context() as m, pytest.raises(QueryError) as info:
        m.setattr(os, "makedirs", denied)
        w.notes("add", "x")
    assert notes_file(str(repo.root)) in info.value.message and "Permission denied" in info.value.message
    assert info.value.hint.startswith(f"make {folder} writable") and "JITCTX_CACHE_DIR" in info.value.hint


def test_issue_30_a_cache_that_fails_to_write_is_a_clear_error_and_leaves_no_tmp(ws, monkeypatch):
    """A full disk (ENOSPC on write), and a lock path that is not a file: the path and the fix."""
    import errno

    repo, w = ws
    w.notes("add", "kept")
    real_fdopen = os.fdopen

    class Full:
        def __init__(self, f):
            self.f = f

        def __enter__(self):
            return self

        def __exit__(self, *a):
            self.f.close()

        def write(self, data):
            raise OSError(errno.ENOSPC, "No space left on device")

    with monkeypatch.context() as m, pytest.raises(QueryError) as info:
        m.setattr(os, "fdopen", lambda fd, mode="r", *a, **k: Full(real_fdopen(fd, mode, *a, **k)) if "w" in mode else real_fdopen(fd, mode, *a, **k))
        w.notes("add", "lost")
    path = notes_file(str(repo.root))
    assert path in info.value.message and "No space left" in info.value.message and "free space" in info.value.hint
    assert not [p for p in os.listdir(os.path.dirname(path)) if p.endswith(".tmp")]
    assert [n.text for n in w.notes("list").results] == ["kept"]
    os.unlink(path + ".lock")
    os.mkfifo(path + ".lock")
    with pytest.raises(QueryError) as info:
        w.notes("add", "again")
    assert path + ".lock" in info.value.message and f"remove {path}.lock" in info.value.hint


def test_issue_30_two_unreadable_files_in_one_second_keep_both(ws, monkeypatch):
    import time

    repo, w = ws
    monkeypatch.setattr(time, "localtime", lambda *a: time.struct_time((2024, 1, 1, 0, 0, 0, 0, 1, 0)))
    path = notes_file(str(repo.root))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    for body in ("{first", "{second"):
        with open(path, "w") as f:
            f.write(body)
        assert "kept as" in w.notes("list").notice
    folder = os.path.dirname(path)
    from pathlib import Path

    kept = sorted(Path(folder, p).read_text() for p in os.listdir(folder) if ".unreadable-" in p)
    assert kept == ["{first", "{second"]


def test_issue_33_an_id_is_never_given_twice(ws):
    repo, w = ws
    store = NoteStore(str(repo.root))
    assert [store.add(t).id for t in ("a", "b")] == [1, 2]
    store.delete(2)
    assert store.add("c").id == 3
    store.delete(1)
    store.delete(3)
    assert store.list() == [] and store.add("d").id == 4
    old = notes_file(str(repo.root))  # a file written before ids were kept: one past the highest
    with open(old, "w") as f:
        json.dump({"version": 1, "notes": [{"id": 7, "text": "old", "created": 0}]}, f)
    assert store.add("e").id == 8


def test_issue_30_a_passing_read_fault_moves_nothing(ws, monkeypatch):
    """Too many open files, a permission: an error naming the file; the notes stay where they are."""
    import errno

    repo, w = ws
    w.notes("add", "kept")
    real_open = os.open

    def busy(path, *a, **k):
        if str(path) == notes_file(str(repo.root)):
            raise OSError(errno.EMFILE, "Too many open files", path)
        return real_open(path, *a, **k)

    with monkeypatch.context() as m, pytest.raises(QueryError) as info:
        m.setattr(os, "open", busy)
        w.notes("list")
    assert "Too many open files" in info.value.message and notes_file(str(repo.root)) in info.value.message
    assert [n.text for n in w.notes("list").results] == ["kept"]
