"""The index-free first pass (jitctx.locate.quick): ranking, the trust boundary, the deadline.

Every test runs on a real fixture repository (``make_repo``) with the
Workspace's setup: a ``Repo``, a ``PathPolicy`` and a ``read`` through the
policy's opener, which records what it was asked to read.
"""

from __future__ import annotations

import os
import time
from typing import Any

import pytest

from jitctx.errors import QueryError
from jitctx.locate import answer as A
from jitctx.locate import quick as Q
from jitctx.refs import mtime_of
from jitctx.repo.policy import PathPolicy
from jitctx.repo.universe import Repo, find_root


class Reader:
    """``Workspace.locate``'s read, remembering every path asked for."""

    def __init__(self, policy: PathPolicy, delay: float = 0.0) -> None:
        self.policy = policy
        self.asked: list[str] = []
        self.delay = delay

    def __call__(self, rel: str) -> tuple[bytes, float] | None:
        self.asked.append(rel)
        time.sleep(self.delay)
        if self.policy.is_denied(rel):
            return None
        try:
            with self.policy.opener() as opener:
                data, st = opener.read(rel, 2 * 1024 * 1024)
        except OSError:
            return None
        return data, mtime_of(st)


def _quick(root, task: str, *, delay: float = 0.0, **kw) -> tuple[A.Located, Reader]:
    repo = Repo(find_root(root))
    policy = PathPolicy(repo.root)
    reader = Reader(policy, delay)
    return Q.quick_locate(repo, policy, task, read=reader, repo_name=repo.root.name, **kw), reader


def _paths(found: A.Located) -> list[str]:
    return [f.path for f in found.files]


def test_gold_file_ranks_first(repo):
    found, _ = _quick(repo.root, "make greet shout")
    assert _paths(found)[0] == "src/util/helpers.py"
    top = found.files[0]
    assert top.role == "source" and top.why == ("terms: shout, greet",)  # the rarer term first
    assert {r.symbol for r in top.regions} == {"greet", "shout"}  # regions come from the outline


def test_sub_words_match_and_whole_words_only(repo):
    repo.write("src/net/tls.py", "def sslHandshakeTimeout(conn):\n    return conn.retry_handshake()\n")
    repo.write("src/net/other.py", "handshakes = 'plural is another word'\n")
    found, _ = _quick(repo.root, "handshake")
    assert _paths(found) == ["src/net/tls.py"]  # other.py matched grep's substring, not the word
    assert found.files[0].regions[0].symbol == "sslHandshakeTimeout"
    assert found.total == 2  # files grep matched


def test_denied_files_are_never_read_nor_shown(repo):
    repo.write(".env", "QUAGGA_TOKEN=quagga\n")
    repo.write("secrets/server.pem", "quagga quagga\n")
    repo.write("src/zoo.py", "def greet_quagga():\n    return 'quagga'\n")
    found, reader = _quick(repo.root, "quagga")
    assert _paths(found) == ["src/zoo.py"]
    assert not [p for p in reader.asked if p.endswith((".env", ".pem"))]
    repo.write(".env", "OKAPI_KEY=okapi\n")  # a word nothing else holds
    secret_only, reader = _quick(repo.root, "okapi")
    assert secret_only.files == () and secret_only.total == 0 and reader.asked == []


def test_ignored_files_are_not_candidates(repo):
    repo.write("debug.log", "wombat wombat\n")  # *.log is ignored
    repo.write("build/notes.txt", "wombat\n")  # build/ is ignored
    found, reader = _quick(repo.root, "wombat")
    assert found.files == () and found.total == 0 and reader.asked == []


def test_files_the_index_leaves_out_are_not_candidates(repo):
    repo.write("data/huge.py", "capybara = 1\n" + "x = 0\n" * (Q.MAX_BYTES // 6))
    found, reader = _quick(repo.root, "capybara")
    assert found.files == () and found.total == 1 and reader.asked == []


def test_symlink_out_of_the_root_is_never_read(repo, tmp_path):
    outside = tmp_path / "outside.py"
    outside.write_text("def narwhal():\n    return 'narwhal'\n")
    os.symlink(outside, repo.root / "src" / "leak.py")
    repo.commit("a link out", "src/leak.py")
    found, reader = _quick(repo.root, "narwhal")
    assert found.files == () and "src/leak.py" not in reader.asked


def test_a_tiny_deadline_still_answers_quickly_and_says_so(repo):
    t = time.monotonic()
    found, _ = _quick(repo.root, "make greet shout", deadline=time.monotonic() + 0.001)
    assert time.monotonic() - t < 1.0
    assert isinstance(found, A.Located) and found.notice and "stopped at its time cap" in found.notice


def test_slow_reads_degrade_to_fewer_files_read(repo):
    for i in range(40):
        repo.write(f"src/gen/m{i:02}.py", f"def greet_{i}():\n    return 'greet'\n")
    budget = 0.6
    t = time.monotonic()
    found, reader = _quick(repo.root, "greet", delay=0.02, deadline=time.monotonic() + budget)
    assert time.monotonic() - t < budget + 0.3  # one read may end past the deadline, no more
    assert len(reader.asked) < 40 and found.files  # a ranking of what was read in time
    assert found.notice is not None and "likeliest of" in found.notice and "cut by time" in found.notice


def test_unreadable_files_are_listed_in_greps_order(repo):
    found = Q.quick_locate(Repo(find_root(repo.root)), PathPolicy(repo.root), "greet shout", read=lambda p: None)
    assert _paths(found) == ["src/util/helpers.py", "src/app.py", "docs/guide.md"]  # 4 matching lines, 2, a doc's 1
    assert all(f.regions == () and f.tokens is None for f in found.files)
    assert found.notice is not None and "none of the 3 matching files could be read" in found.notice


def test_renders_through_locate_like_the_indexed_answer(repo):
    from jitctx.session.workspace import Workspace

    ws = Workspace(repo.root)
    quick, _ = _quick(repo.root, "make greet shout", count=ws.tokenizer.count)
    indexed = ws.locate("make greet shout")

    def unscored(d: dict[str, Any]) -> dict[str, Any]:  # the scores differ (estimated IDF), the Workspace adds the session's fields
        files = [{**f, "score": None, "regions": [{**r, "score": None} for r in f["regions"]]} for f in d["results"]]
        return {**d, "results": files, "git_head": None, "instructions": None, "stale": None}

    assert unscored(A.to_result(quick).to_dict()) == unscored(indexed.to_dict())
    text = quick.files[0].render()
    assert text.startswith("src/util/helpers.py  119 B") and "1-2 greet (function" in text


def test_defines_a_code_like_name(make_repo):
    code = make_repo("code")
    found, _ = _quick(code.root, "`Rational.__add__` returns a plain int")
    top = found.files[0]
    assert top.path == "rational.py" and "defines Rational.__add__" in top.why
    assert top.regions[0].symbol == "Rational.__add__" and top.regions[0].why[0] == "defines Rational.__add__"


def test_no_hits_is_an_empty_answer_that_says_so(repo):
    found, _ = _quick(repo.root, "zebra quagga")
    res = A.to_result(found)
    assert res.is_empty and res.notice is not None and "no file holds any of the task's terms" in res.notice


def test_a_task_without_words_is_the_same_error(repo):
    with pytest.raises(QueryError) as e:
        _quick(repo.root, "the and of it")
    assert e.value.fields["field"] == "task"


@pytest.mark.parametrize(
    ("fixture", "task"),
    [
        ("basic", "make greet shout"),
        ("basic", "the app main prints hello world"),
        ("code", "`Rational.__add__` returns a plain int"),
        ("code", "`list_free` leaks the list"),
        ("code", "Tree Insert loses ordered values"),
        ("code", "the Store emits change events twice"),
    ],
)
def test_same_top_file_as_the_indexed_locate(make_repo, fixture, task):
    from jitctx.session.workspace import Workspace

    fixed = make_repo(fixture)
    quick, _ = _quick(fixed.root, task)
    indexed = Workspace(fixed.root).locate(task)
    assert _paths(quick)[0] == indexed.results[0].path
