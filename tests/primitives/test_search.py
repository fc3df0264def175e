"""grep's query checks, text shaping, rg output parsing, backend choice and the CLI.

The behaviour shared by both engines is in ``test_backends.py``.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from jitctx import QueryError, Workspace
from jitctx.adapters import cli
from jitctx.primitives.engines import Spec
from jitctx.primitives.engines import rg as rg_mod
from jitctx.primitives.engines.py import PythonBackend, compile_pattern
from jitctx.primitives.engines.scope import Scope
from jitctx.primitives.search import around_match, pick_backend

ROOT = Path(__file__).resolve().parents[2]

# -- text shaping ------------------------------------------------------------------------


def test_window_keeps_short_lines_whole():
    assert around_match("short line", (0, 5)) == "short line"


def test_window_names_what_was_omitted_on_both_sides():
    text = "a" * 1000 + "XY" + "b" * 1000
    out = around_match(text, (1000, 1002))
    assert out == "[… 834 chars] " + "a" * 166 + "XY" + "b" * 332 + " [… 668 chars]"


def test_window_at_the_edges_and_for_a_huge_match():
    assert around_match("X" + "a" * 999, (0, 1)) == "X" + "a" * 499 + " [… 500 chars]"
    assert around_match("a" * 999 + "X", (999, 1000)) == "[… 500 chars] " + "a" * 499 + "X"
    assert around_match("m" * 2000, (0, 2000)) == "m" * 500 + " [… 1,500 chars]"


# -- rg output parsing --------------------------------------------------------------------


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


def test_parse_json_match_with_text_path():
    line = json.dumps(
        {
            "type": "match",
            "data": {
                "path": {"text": "src/a.py"},
                "lines": {"text": "x = greet()\r\n"},
                "line_number": 7,
                "absolute_offset": 0,
                "submatches": [{"match": {"text": "greet"}, "start": 4, "end": 9}],
            },
        }
    )
    assert rg_mod.parse_json_line(line) == ("match", "src/a.py", [rg_mod.Match(7, "x = greet()", ((4, 9),))])


def test_parse_json_bytes_path_and_line():
    line = json.dumps(
        {
            "type": "match",
            "data": {
                "path": {"bytes": _b64(b"caf\xe9.txt")},
                "lines": {"bytes": _b64(b"caf\xe9 needle\n")},
                "line_number": 1,
                "absolute_offset": 0,
                "submatches": [{"match": {"text": "needle"}, "start": 5, "end": 11}],
            },
        }
    )
    kind, path, matches = rg_mod.parse_json_line(line.encode())
    assert (kind, path) == ("match", os.fsdecode(b"caf\xe9.txt"))
    assert matches == [rg_mod.Match(1, "caf\ufffd needle", ((5, 11),), replaced=True)]


def test_parse_json_multiline_block_becomes_one_match_per_covered_line():
    line = json.dumps(
        {
            "type": "match",
            "data": {
                "path": {"text": "m.txt"},
                "lines": {"text": "a\nb\nc a\nb\n"},
                "line_number": 1,
                "submatches": [{"match": {"text": "a\nb"}, "start": 0, "end": 3}, {"match": {"text": "a\nb"}, "start": 6, "end": 9}],
            },
        }
    )
    _, _, matches = rg_mod.parse_json_line(line)
    assert matches == [
        rg_mod.Match(1, "a", ((0, 1),)),
        rg_mod.Match(2, "b", ((0, 1),)),
        rg_mod.Match(3, "c a", ((2, 3),)),
        rg_mod.Match(4, "b", ((0, 1),)),
    ]


def test_parse_json_other_messages():
    assert rg_mod.parse_json_line('{"type":"begin","data":{"path":{"text":"a"}}}') == ("begin", "a", [])
    assert rg_mod.parse_json_line(b"  ") is None


def test_issue_3_count_output_with_crlf_line_ends_and_cut_last_line():
    # rg --crlf ends even --count lines with \r\n; a killed rg leaves a cut last line
    out = b"a.py\x002\r\nb/c.md\x0010\r\ncaf\xe9\x001\r\npartial\x00"
    assert rg_mod.parse_count_output(out) == {"a.py": 2, "b/c.md": 10, os.fsdecode(b"caf\xe9"): 1}
    assert rg_mod.parse_count_output(b"./a.py\x002\r\n./b:c\x001\r\n") == {"a.py": 2, "b:c": 1}
    assert rg_mod.parse_count_output(b"") == {}


def test_rg_error_names_pattern_position_and_backend():
    stderr = b"rg: regex parse error:\n    (?:a(b)\n    ^\nerror: unclosed group\n"
    err = rg_mod.rg_error("a(b", stderr)
    assert err.message == "invalid regex 'a(b' at position 1 (rg backend): unclosed group"
    assert err.fields == {"pattern": "a(b", "position": 1, "backend": "rg"}
    stderr = b"rg: regex parse error:\n    (?:ab(?=c))\n         ^^^\nerror: look-around is not supported\n"
    assert rg_mod.rg_error("ab(?=c)", stderr).fields["position"] == 2
    assert rg_mod.rg_error("x", b"rg: some/file: Permission denied (os error 13)\n") is None


def test_skipped_files_from_rg_messages():
    err = b"rg: ./a/b.txt: Permission denied (os error 13)\nrg: gone.txt: IO error for operation on gone.txt: No such file or directory (os error 2)\n"
    assert rg_mod._skipped_from(err, "/repo/") == [rg_mod.Skipped("a/b.txt", "unreadable"), rg_mod.Skipped("gone.txt", "vanished")]


def test_rg_run_keeps_what_was_printed_before_the_time_cap(tmp_path):
    backend = rg_mod.RgBackend("/bin/sh")
    spec = Spec("x", deadline=time.monotonic() + 0.5)
    start = time.monotonic()
    out, _, code, cut = backend._run(["/bin/sh", "-c", "printf 'a\\0001\\n'; printf 'b\\0002'; exec sleep 10"], spec, tmp_path)
    assert time.monotonic() - start < 5
    assert (cut, code, out) == (True, None, b"a\x001\n")


# -- backends -----------------------------------------------------------------------------


def test_find_rg_uses_the_wheel_binary():
    exe = rg_mod.find_rg()
    assert exe is not None and Path(exe).name == "rg" and os.access(exe, os.X_OK)


def test_without_rg_auto_falls_back_to_python_and_rg_is_refused(monkeypatch, repo):
    monkeypatch.setattr(rg_mod, "find_rg", lambda: None)
    assert pick_backend("auto").name == "python"
    res = Workspace(repo.root).grep("greet")
    assert res.extra["backend"] == "python" and res.total == 3
    with pytest.raises(QueryError) as exc:
        pick_backend("rg")
    assert "ripgrep binary was not found" in exc.value.message


def _scope(ws, spec):
    return Scope(ws.repo, ws.policy, spec)


def test_python_reads_rust_syntax():
    rx = compile_pattern(r"[[:digit:]]+(?<tail>x)\z", fixed_strings=False, ignore_case=False)
    assert rx.search("ab 42x") and not rx.search("42x\n ")
    assert compile_pattern(r"\p{Lu}\w+", fixed_strings=False, ignore_case=False).search("über Émile").group() == "Émile"


@pytest.mark.parametrize(
    "pattern, message",
    [
        (r"(a)\1", "invalid regex '(a)\\\\1' at position 3 (python backend): backreferences are not supported (ripgrep syntax)"),
        (r"a(?=b)", "invalid regex 'a(?=b)' at position 1 (python backend): look-around is not supported (ripgrep syntax)"),
    ],
)
def test_python_refuses_what_rg_refuses(pattern, message):
    with pytest.raises(QueryError) as exc:
        compile_pattern(pattern, fixed_strings=False, ignore_case=False)
    assert exc.value.message == message


def test_unicode_classes_give_the_same_files_on_both_backends(repo):
    ws = Workspace(repo.root)
    for backend in ("rg", "python"):
        assert ws.grep(r"\p{Lu}reet", backend=backend).total == 0
        assert [r.path for r in ws.grep(r"\p{Ll}reet", backend=backend).results] == ["docs/guide.md", "src/app.py", "src/util/helpers.py"]


def test_python_catastrophic_pattern_is_bounded_by_the_cap(repo):
    repo.write("slow.txt", "x" * 5000 + "!\n")
    start = time.monotonic()
    out = PythonBackend().count(_scope(Workspace(repo.root), Spec(r"(x+x+)+y", deadline=time.monotonic() + 0.3)))
    assert out.timed_out and time.monotonic() - start < 5


# -- CLI ----------------------------------------------------------------------------------


def test_cli_text_json_and_exit_codes(repo, capsys):
    root = str(repo.root)
    assert cli.main(["grep", "greet", "--root", root]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("[instructions] src/util/AGENTS.md applies to files under src/util/")  # just in time
    assert lines[1].startswith("docs/guide.md  36 B")
    assert cli.main(["grep", "greet", "--root", root, "--json", "--mode", "content", "-C", "1", "--limit", "1"]) == 0
    env = json.loads(capsys.readouterr().out)
    assert (env["tool"], env["total"], env["truncated"], env["backend"]) == ("grep", 5, True, "rg")
    assert env["results"][0]["before"] == [{"line": 2, "text": ""}]
    assert cli.main(["grep", "no-such-text", "--root", root]) == 1
    assert capsys.readouterr().out.startswith("[note] no matches for 'no-such-text' in the repository")
    assert cli.main(["grep", "(oops", "--root", root]) == 2
    assert "invalid regex '(oops' at position 0 (rg backend)" in capsys.readouterr().err


def test_cli_pattern_after_double_dash_is_searched_for(repo, capsys):
    repo.write("flags.txt", "--files\n")
    assert cli.main(["grep", "--root", str(repo.root), "--", "--files"]) == 0
    assert capsys.readouterr().out.startswith("flags.txt")


def test_default_grep_does_not_load_the_tokenizer_and_max_tokens_does(repo):
    code = "import sys; from jitctx.adapters.cli import main; main(sys.argv[1:]); sys.stderr.write('TIKTOKEN=%s' % ('tiktoken' in sys.modules))"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    plain = subprocess.run([sys.executable, "-c", code, "grep", "greet", "--root", str(repo.root)], env=env, capture_output=True, text=True)
    assert "TIKTOKEN=False" in plain.stderr
    capped = subprocess.run([sys.executable, "-c", code, "grep", "greet", "--root", str(repo.root), "--max-tokens", "500"], env=env, capture_output=True, text=True)
    assert "TIKTOKEN=True" in capped.stderr


def test_python_backend_reports_unreadable_files_and_goes_on(repo, monkeypatch):
    from jitctx.repo.policy import Opener

    real = Opener.open

    def open_(self, rel):
        if rel == "src/app.py":
            raise PermissionError(13, "Permission denied")
        return real(self, rel)

    monkeypatch.setattr(Opener, "open", open_)
    res = Workspace(repo.root).grep("greet", backend="python")
    assert [r.path for r in res.results] == ["docs/guide.md", "src/util/helpers.py"]
    assert res.extra["skipped_files"] == [{"path": "src/app.py", "reason": "unreadable"}]
    assert res.notice == "1 file(s) vanished or could not be read and were skipped: src/app.py."


def test_issue_3_rg_count_of_a_single_file_keeps_its_path(repo):
    # rg --count prints a bare number for one explicit file unless --with-filename
    ws = Workspace(repo.root)
    backend = rg_mod.RgBackend(rg_mod.find_rg())
    out = backend.count(_scope(ws, Spec("greet", file="src/app.py", is_denied=ws.policy.is_denied)))
    assert out.counts == {"src/app.py": 2}


def test_issue_3_default_grep_never_waits_on_a_polling_timer(repo, monkeypatch):
    # Popen.wait(timeout=...) sleeps in steps of up to 50 ms after rg is done
    calls = []
    real = subprocess.Popen.wait

    def wait(self, timeout=None):
        if os.path.basename(str(self.args[0])) == "rg":  # git's processes have a time limit; rg has a timer
            calls.append(timeout)
        return real(self, timeout)

    monkeypatch.setattr(subprocess.Popen, "wait", wait)
    Workspace(repo.root).grep("greet", backend="rg")
    assert calls and all(t is None for t in calls)


def test_python_backend_leaves_an_armed_alarm_alone(repo):
    import signal

    rang = []
    old = signal.signal(signal.SIGALRM, lambda *a: rang.append(True))
    try:
        signal.setitimer(signal.ITIMER_REAL, 30)
        Workspace(repo.root).grep("greet", backend="python")
        remaining = signal.getitimer(signal.ITIMER_REAL)[0]
        assert 0 < remaining <= 30 and not rang
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def test_time_cap_returns_partial_results_marked_truncated_rg(repo, monkeypatch, tmp_path):
    # a stand-in for rg that prints one result, then hangs past the cap
    stub = tmp_path / "slow-rg"
    stub.write_text("#!/bin/sh\nprintf 'docs/guide.md\\0001\\r\\n'\nexec sleep 30\n")
    stub.chmod(0o755)
    monkeypatch.setattr(rg_mod, "find_rg", lambda: str(stub))
    start = time.monotonic()
    res = Workspace(repo.root).grep("greet", backend="rg", timeout=0.5)
    assert time.monotonic() - start < 10
    assert [r.path for r in res.results] == ["docs/guide.md"] and res.truncated
    assert res.notice == (
        "stopped at the time cap (0.5 s): results are partial (1 matching file found so far) and may not be in full path order; narrow with path=... or glob=..., or raise timeout."
    )


def test_time_cap_returns_partial_results_marked_truncated_python(repo):
    repo.write("slow.txt", "x" * 5000 + "!\n")
    res = Workspace(repo.root).grep("(x+x+)+y", backend="python", timeout=0.3)
    assert res.truncated
    assert res.notice.startswith("stopped at the time cap (0.3 s): results are partial (0 matching files found so far)")


@pytest.mark.parametrize("pattern,pos", [("def (", 4), ("(a)(b", 3), (r"\(x(", 3), ("[(](", 3), ("(", 0)])
def test_issue_3_unclosed_group_position_is_in_the_pattern(pattern, pos):
    from jitctx.primitives.engines.rg import rg_error

    stderr = f"rg: regex parse error:\n    (?:{pattern})\n    ^\nerror: unclosed group\n".encode()
    assert rg_error(pattern, stderr).fields["position"] == pos


def test_issue_3_denied_among_sees_names_with_line_breaks(repo):
    from jitctx.primitives.engines.scope import denied_among

    policy = Workspace(repo.root).policy
    assert denied_among(policy, ["prod\nserver.key", "a.txt", "x/.env"]) == {"prod\nserver.key", "x/.env"}


def test_issue_3_dead_backend_fields_are_gone():
    from dataclasses import fields

    from jitctx.primitives.engines import Outcome

    assert "searched" not in {f.name for f in fields(Outcome)}
    assert "root" not in {f.name for f in fields(Spec)}


@pytest.mark.parametrize("backend", ["python", "rg"])
def test_issue_12_a_cancelled_grep_stops_promptly(repo, backend, monkeypatch, tmp_path):
    import threading

    from jitctx import cancel
    from jitctx.primitives.engines import py as py_mod

    repo.write("slow.txt", "x" * 20000 + "\n")
    started = threading.Event()  # the grep is at work: rg runs, or the regex meets slow.txt
    if backend == "rg":  # a stand-in for rg that never ends
        stub = tmp_path / "slow-rg"
        stub.write_text(f"#!/bin/sh\n: > {tmp_path / 'rg-started'}\nexec sleep 30\n")
        stub.chmod(0o755)
        monkeypatch.setattr(rg_mod, "find_rg", lambda: str(stub))
    else:
        search = py_mod._Searcher.search

        def searching(self, text, *args, **kwargs):
            if "x" * 100 in text:  # slow.txt
                started.set()
            return search(self, text, *args, **kwargs)

        monkeypatch.setattr(py_mod._Searcher, "search", searching)
    ws = Workspace(repo.root)
    token, out = threading.Event(), {}
    worker = threading.Thread(target=lambda: out.setdefault("r", cancel.call(token, ws.grep, "(x+x+)+y", backend=backend, timeout=60)))
    worker.start()
    deadline = time.monotonic() + 15
    while not (started.is_set() or (tmp_path / "rg-started").exists()):
        assert time.monotonic() < deadline and worker.is_alive(), "the grep did not start"
        started.wait(0.01)
    cancelled_at = time.monotonic()
    token.set()
    worker.join(10)
    assert not worker.is_alive() and time.monotonic() - cancelled_at < 3
    assert out["r"].truncated


def test_issue_15_notices_count_in_the_singular_and_do_not_call_a_plain_folder_a_repository(tmp_path):
    from jitctx import Workspace

    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "a.txt").write_text("hello\n")
    ws = Workspace(tmp_path / "plain")
    empty = ws.grep("zzz").notice
    # rg's pass counts no files (issue 16: an empty result costs no extra walk); the words still fit a plain folder
    assert "under the root: searched the files not ignored by .gitignore" in empty and "repository" not in empty
    assert "1 file (all, ignored ones included) searched" in ws.grep("zzz", include_ignored=True, backend="python").notice
    assert "in the repository" not in ws.glob("*.nothing").notice


@pytest.mark.parametrize("backend", ["rg", "python"])
def test_pages_of_many_matching_files_are_the_full_order_cut(repo, backend):
    from jitctx.primitives.search import _first

    n = {f"many/f{i:02d}.txt": i % 3 + 1 for i in range(60)}  # 60 files: a page of 5 takes the heap
    for path, k in n.items():
        repo.write(path, "hit\n" * k)
    ws = Workspace(repo.root)
    by_path = sorted(n)
    by_count = sorted(n, key=lambda p: (-n[p], p))
    res = ws.grep("hit", "many", limit=5, offset=7, backend=backend)
    assert [r.path for r in res.results] == by_path[7:12] and res.total == 60
    res = ws.grep("hit", "many", mode="count", limit=5, offset=7, backend=backend)
    assert [(r.path, r.matches) for r in res.results] == [(p, n[p]) for p in by_count[7:12]]
    lines = [(p, i) for p in by_path for i in range(1, n[p] + 1)]
    res = ws.grep("hit", "many", mode="content", limit=5, offset=7, backend=backend)
    assert [(r.path, r.line) for r in res.results] == lines[7:12] and res.total == len(lines)
    counts = {f"p{i:03d}": i % 5 + 1 for i in range(200, 0, -1)}
    key = lambda p: (-counts[p], p)  # noqa: E731
    for k in (1, 7, 49, 50, 51, 200, 300):  # the heap and the sort give the same cut
        assert _first(counts, k) == sorted(counts)[:k]
        assert _first(counts, k, key=key) == sorted(counts, key=key)[:k]
