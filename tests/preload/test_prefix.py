"""Preload (the stable prefix) and just-in-time nested instructions, on fixture repos."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import threading

import pytest

from jitctx.adapters import cli
from jitctx.errors import PathError, QueryError
from jitctx.preload import instructions
from jitctx.session.workspace import Workspace

ROOT = "==> AGENTS.md (instructions for the whole repository) <==\n# Root rules\n\nUse tabs. Run `make check` before committing.\n"
README = "==> README.md (project README) <==\n# preload fixture\n\nA repository with instruction files at many levels.\n\n## Usage\n\nRun it.\n"
A = "==> a/AGENTS.md (instructions for a/) <==\n# a rules\n\nEverything under a/ is generated; do not edit by hand.\n"
AB = "==> a/b/AGENTS.override.md (instructions for a/b/) <==\n# a/b override\n\nTemporary: skip the slow tests under a/b.\n"
ABC = "==> a/b/c/CLAUDE.md (instructions for a/b/c/) <==\n# a/b/c (Claude)\n\nFallback file: CLAUDE.md only.\n"
ABCD = "==> a/b/c/d/GEMINI.md (instructions for a/b/c/d/) <==\n# a/b/c/d (Gemini)\n\nSecond fallback: GEMINI.md only.\n"


@pytest.fixture
def pre(make_repo):
    return make_repo("preload")


def ws_of(r) -> Workspace:
    return Workspace(r.root)


def ref(r, path: str, dir_: str) -> dict:
    return {"path": path, "dir": dir_, "size": (r.root / path).stat().st_size, "mtime": 1_700_000_000.0}


def lines_of(n: int, word: str = "rule") -> str:
    return "".join(f"- {word} {i}: keep this {word} in mind when editing files here.\n" for i in range(1, n + 1))


# -- discovery and rendering ------------------------------------------------------


def test_root_only_by_default_siblings_never(pre):
    p = ws_of(pre).preload()
    assert p.text == ROOT + "\n" + README
    assert [(f.path, f.reason) for f in p.files] == [("AGENTS.md", "included"), ("README.md", "included")]
    assert p.cwd == "." and p.warnings == ()


def test_chain_root_to_cwd_in_depth_order_with_precedence_and_fallbacks(pre):
    ws = ws_of(pre)
    p = ws.preload("a/b/c/d")
    assert p.text == "\n".join([ROOT, A, AB, ABC, ABCD, README])
    assert p.tokens == ws.tokenizer.count(p.text) <= p.budget == 8000
    assert p.prefix_hash == hashlib.sha256(p.text.encode()).hexdigest()
    assert p.bytes == len(p.text.encode())
    assert p.git_head == pre.head()
    f = p.files[2]
    assert f.path == "a/b/AGENTS.override.md" and f.reason == "included" and not f.truncated
    assert f.tokens == f.included_tokens == ws.tokenizer.count("# a/b override\n\nTemporary: skip the slow tests under a/b.\n")
    assert f.size == len(b"# a/b override\n\nTemporary: skip the slow tests under a/b.\n")
    assert f.blob == pre.git("rev-parse", "HEAD:a/b/AGENTS.override.md")
    assert isinstance(f.mtime, float)


def test_to_dict_has_the_design_fields(pre):
    d = ws_of(pre).preload("a").to_dict()
    assert list(d) == ["tool", "cwd", "files", "text", "tokens", "bytes", "budget", "prefix_hash", "git_head", "warnings", "rules"]
    assert list(d["files"][0]) == ["path", "size", "mtime", "tokens", "included_tokens", "blob", "truncated", "reason"]
    json.dumps(d)


def test_configured_fallbacks_replace_the_defaults(pre):
    p = ws_of(pre).preload("a/b/c/d", fallbacks=["GEMINI.md"])
    assert p.text == "\n".join([ROOT, A, AB, ABCD, README])
    with pytest.raises(QueryError, match="plain file name"):
        ws_of(pre).preload(fallbacks=["x/CLAUDE.md"])


def test_empty_override_is_skipped_and_reported(pre):
    p = ws_of(pre).preload("empty")
    assert p.text == ROOT + "\n==> empty/AGENTS.md (instructions for empty/) <==\n# empty dir rules\n\nThe override above me is empty.\n\n" + README
    assert ("empty/AGENTS.override.md", "empty") in [(f.path, f.reason) for f in p.files]
    assert p.warnings == ("empty/AGENTS.override.md is empty, so it was skipped and empty/AGENTS.md loads instead (delete it, or give it content to replace empty/AGENTS.md)",)


def test_whitespace_only_file_counts_as_empty(pre):
    p = ws_of(pre).preload("ws")
    assert p.text == ROOT + "\n" + README
    assert [(f.path, f.reason, f.included_tokens) for f in p.files][1] == ("ws/AGENTS.md", "empty", 0)


def test_near_miss_names_are_not_read_but_warned(pre):
    p = ws_of(pre).preload("near")
    assert p.text == ROOT + "\n" + README
    assert p.warnings == ("near/agents.md is not read: instruction file names are case-sensitive (rename it to AGENTS.md)",)


def test_nothing_above_the_root_loads(pre):
    (pre.root.parent / "AGENTS.md").write_text("# outer\n\nNever loaded.\n")
    assert "outer" not in ws_of(pre).preload("a").text


def test_symlink_alias_is_loaded_once(pre):
    (pre.root / "sib" / "AGENTS.md").unlink()
    os.symlink("../AGENTS.md", pre.root / "sib" / "AGENTS.md")
    p = ws_of(pre).preload("sib")
    assert p.text == ROOT + "\n" + README
    dup = [f for f in p.files if f.path == "sib/AGENTS.md"][0]
    assert (dup.reason, dup.note, dup.included_tokens) == ("duplicate", "same file as AGENTS.md; loaded once", 0)


def test_hard_link_alias_is_loaded_once(pre):
    (pre.root / "sib" / "AGENTS.md").unlink()
    os.link(pre.root / "AGENTS.md", pre.root / "sib" / "AGENTS.md")
    p = ws_of(pre).preload("sib")
    assert p.text == ROOT + "\n" + README
    assert [f.reason for f in p.files if f.path == "sib/AGENTS.md"] == ["duplicate"]


def test_readme_that_is_an_alias_of_agents_md_is_loaded_once(pre):
    (pre.root / "README.md").unlink()
    os.symlink("AGENTS.md", pre.root / "README.md")
    p = ws_of(pre).preload()
    assert p.text == ROOT
    assert [f.reason for f in p.files] == ["included", "duplicate"]


def test_issue_12_symlink_outside_the_root_is_skipped_with_a_warning(pre, tmp_path):
    outside = tmp_path / "shared-rules.md"
    outside.write_text("# shared\n\nCompany-wide rules.\n")
    (pre.root / "sib" / "AGENTS.md").unlink()
    os.symlink(outside, pre.root / "sib" / "AGENTS.md")
    p = ws_of(pre).preload("sib")
    assert p.text == ROOT + "\n" + README  # as head refuses it, the prefix leaves it out
    assert p.warnings == ("sib/AGENTS.md is a symlink to a file outside the root; skipped, as head refuses it",)
    assert [f.reason for f in p.files if f.path == "sib/AGENTS.md"] == ["outside_root"]
    assert str(tmp_path) not in json.dumps(p.to_dict()) and "Company-wide" not in json.dumps(p.to_dict())


def test_directory_named_like_an_instruction_file_is_skipped(pre):
    (pre.root / "a" / "b" / "c" / "AGENTS.md").mkdir()
    p = ws_of(pre).preload("a/b/c")
    assert ABC in p.text
    assert "a/b/c/AGENTS.md is a directory; skipped" in p.warnings
    assert [f.reason for f in p.files if f.path == "a/b/c/AGENTS.md"] == ["not_a_file"]


def test_fifo_named_like_an_instruction_file_is_skipped_never_opened(pre):
    os.mkfifo(pre.root / "a" / "b" / "c" / "AGENTS.md")
    p = ws_of(pre).preload("a/b/c")  # opening the FIFO would hang
    assert ABC in p.text
    assert "a/b/c/AGENTS.md is not a regular file; skipped" in p.warnings


def test_broken_symlink_is_skipped_with_a_warning(pre):
    os.symlink("missing.md", pre.root / "sib" / "AGENTS.override.md")
    p = ws_of(pre).preload("sib")
    assert "==> sib/AGENTS.md (instructions for sib/) <==" in p.text
    assert "sib/AGENTS.override.md is a broken or looping symlink; skipped" in p.warnings


def test_unreadable_file_is_warned_and_the_rest_loads(pre, monkeypatch):
    real = instructions._read_bytes

    def deny(opener, rel, limit):
        if rel.endswith("AGENTS.override.md"):
            raise PermissionError(13, "Permission denied")
        return real(opener, rel, limit)

    monkeypatch.setattr(instructions, "_read_bytes", deny)
    monkeypatch.setattr(instructions, "_cache", type(instructions._cache)())
    p = ws_of(pre).preload("a/b")
    assert p.text == "\n".join([ROOT, A, "==> a/b/AGENTS.md (instructions for a/b/) <==\n# a/b rules\n\nShadowed by the override.\n", README])
    assert "a/b/AGENTS.override.md cannot be read (Permission denied); skipped" in p.warnings


def test_binary_instruction_file_is_skipped(pre):
    pre.write("sib/AGENTS.override.md", b"\x00\x01binary")
    p = ws_of(pre).preload("sib")
    assert "==> sib/AGENTS.md" in p.text
    assert "sib/AGENTS.override.md is binary (a NUL byte in its first 8 KiB); skipped" in p.warnings


# -- decoding ---------------------------------------------------------------------


def test_issue_4_bom_stripped_crlf_normalised_invalid_utf8_replaced(pre):
    pre.write("sib/AGENTS.md", b"\xef\xbb\xbf# sib\r\n\r\nbad byte: \xff here\r\n")
    p = ws_of(pre).preload("sib")
    assert "==> sib/AGENTS.md (instructions for sib/) <==\n# sib\n\nbad byte: \ufffd here\n" in p.text
    assert "\r" not in p.text and "\ufeff" not in p.text
    assert "sib/AGENTS.md has invalid UTF-8; it was replaced with U+FFFD" in p.warnings


# -- README -----------------------------------------------------------------------


def test_readme_variants_in_order_and_any_case(pre):
    (pre.root / "README.md").unlink()
    pre.write("README", "bare readme\n")
    pre.write("README.rst", "rst readme\n")
    assert ws_of(pre).preload().text.endswith("==> README.rst (project README) <==\nrst readme\n")
    (pre.root / "README.rst").unlink()
    (pre.root / "README").unlink()
    pre.write("readme.md", "lower-case readme\n")
    assert ws_of(pre).preload().text.endswith("==> readme.md (project README) <==\nlower-case readme\n")


def test_readme_budget_zero_leaves_it_out(pre):
    assert ws_of(pre).preload(readme_budget=0).text == ROOT


def test_readme_has_its_own_cap_and_a_marker(pre):
    pre.write("README.md", lines_of(400, "fact"))
    ws = ws_of(pre)
    p = ws.preload(readme_budget=200)
    readme = p.files[-1]
    assert readme.reason == "cut" and readme.truncated and readme.tokens > 200
    block = p.text.split("\n\n==> README.md")[1]
    assert ws.tokenizer.count("==> README.md" + block) <= 200
    last = block.rstrip("\n").split("\n")[-1]
    k = readme.note.split("kept lines 1-")[1].split(" ")[0]
    assert last == f"[… README.md cut to the README cap: kept lines 1-{k} of 400; read on with head path=README.md start={int(k) + 1}]"
    assert f"- fact {k}: keep" in block and f"- fact {int(k) + 1}:" not in block
    assert readme.included_tokens == ws.tokenizer.count(lines_of(int(k), "fact"))


def test_readme_is_cut_first(pre):
    pre.write("README.md", lines_of(400, "fact"))
    ws = ws_of(pre)
    whole = ws.preload(readme_budget=0).tokens
    p = ws.preload(budget=whole + 60)
    assert p.text.startswith(ROOT) and p.files[0].reason == "included"
    assert p.files[-1].reason == "cut" and p.tokens <= whole + 60


# -- budget -----------------------------------------------------------------------


def test_cut_on_line_boundaries_with_a_marker_naming_file_kept_and_head_call(pre):
    pre.write("AGENTS.md", lines_of(300))
    ws = ws_of(pre)
    p = ws.preload(budget=500, readme_budget=0)
    assert p.tokens <= 500
    body = p.text.split("\n")
    assert body[0] == "==> AGENTS.md (instructions for the whole repository) <=="
    k = len(body) - 3  # label, k lines, marker, final ""
    assert body[1 : 1 + k] == lines_of(k).rstrip("\n").split("\n")
    assert body[-2] == f"[… AGENTS.md cut to fit the preload budget: kept lines 1-{k} of 300; read on with head path=AGENTS.md start={k + 1}]"
    assert p.files[0].truncated and p.files[0].reason == "cut"
    assert f"AGENTS.md was cut to fit budget=500 tokens: kept {k} lines" in p.warnings
    # the head call the marker names reads on exactly where the cut was
    assert ws.head("AGENTS.md", 1, start=k + 1).results[0].content == lines_of(k + 1).split("\n")[k] + "\n"


def test_nearest_file_is_never_starved_by_a_huge_root_file(pre):
    pre.write("AGENTS.md", lines_of(3000))
    p = ws_of(pre).preload("a/b", budget=1000, readme_budget=0)
    assert p.tokens <= 1000
    assert p.text.endswith(AB)
    assert A in p.text
    assert [f.reason for f in p.files] == ["cut", "included", "included"]


def test_two_large_files_share_the_budget_fairly(pre):
    pre.write("AGENTS.md", lines_of(3000, "root"))
    pre.write("sib/AGENTS.md", lines_of(3000, "sib"))
    p = ws_of(pre).preload("sib", budget=2000, readme_budget=0)
    a, b = p.files
    assert a.truncated and b.truncated and p.tokens <= 2000
    assert abs(a.included_tokens - b.included_tokens) < 100


def test_tiny_budget_drops_root_most_first(pre):
    p = ws_of(pre).preload("a/b", budget=60)
    assert p.tokens <= 60
    assert p.text == AB
    assert [f.reason for f in p.files if f.reason != "empty"] == ["omitted", "omitted", "included", "omitted"]
    assert "AGENTS.md was left out of the prefix: budget=60 tokens has no room for it; read it with head path=AGENTS.md" in p.warnings
    assert p.warnings[-1] == (
        "README.md was left out of the prefix: readme_budget=2,000 and what the instruction files left of budget=60 have no room for it; read it with head path=README.md"
    )


def test_budget_zero_turns_preloading_off(pre, monkeypatch):
    monkeypatch.setattr(instructions, "_read_bytes", lambda *a: pytest.fail("read a file"))
    p = ws_of(pre).preload(budget=0)
    assert (p.text, p.tokens, p.files, p.prefix_hash) == ("", 0, (), hashlib.sha256(b"").hexdigest())


@pytest.mark.parametrize("bad", [-1, 1.5, "8000", True, None])
def test_bad_budget_is_a_query_error(pre, bad):
    with pytest.raises(QueryError, match="budget must be"):
        ws_of(pre).preload(budget=bad)
    with pytest.raises(QueryError, match="readme_budget must be"):
        ws_of(pre).preload(readme_budget=bad)


def test_bad_cwd(pre, tmp_path):
    ws = ws_of(pre)
    with pytest.raises(PathError) as e:
        ws.preload(str(tmp_path))
    assert e.value.reason == "outside_root"
    with pytest.raises(PathError) as e:
        ws.preload("../")
    assert e.value.reason == "outside_root"
    with pytest.raises(PathError) as e:
        ws.preload("a/top.py")
    assert e.value.reason == "not_a_directory"
    with pytest.raises(PathError) as e:
        ws.preload("nope")
    assert e.value.reason == "not_found"


def test_absolute_cwd_inside_the_root_works(pre):
    assert ws_of(pre).preload(str(pre.root / "a")).text == "\n".join([ROOT, A, README])


def test_issue_4_huge_instruction_file_cut_visibly_reading_only_what_is_needed(pre, monkeypatch):
    big = pre.root / "sib" / "AGENTS.md"
    line = b"- a long list of rules that goes on and on, padded to a decent width.\n"
    with open(big, "wb") as f:
        f.write(line * (50 * 1024 * 1024 // len(line) + 1))
    read = []
    real = instructions._read_bytes
    monkeypatch.setattr(instructions, "_read_bytes", lambda o, rel, limit: read.append((rel.rpartition("/")[2], limit)) or real(o, rel, limit))
    ws = ws_of(pre)
    p = ws.preload("sib")
    assert max(limit for name, limit in read if name == "AGENTS.md") <= 1024 * 1024
    f = [f for f in p.files if f.path == "sib/AGENTS.md"][0]
    assert (f.reason, f.truncated, f.tokens, f.blob) == ("cut", True, None, None)
    assert f.size == big.stat().st_size
    assert re.search(r"\[… sib/AGENTS.md cut to fit the preload budget: kept lines 1-\d+ of a 52,428,\d+-byte file; read on with head path=sib/AGENTS.md start=\d+\]\n", p.text)
    assert p.tokens <= 8000


# -- byte stability -----------------------------------------------------------------


def test_two_clones_in_different_temp_dirs_give_identical_bytes(make_repo, tmp_path):
    one, two = make_repo("preload"), make_repo("preload")
    (one.root / "AGENTS.md").write_text(lines_of(200))
    (two.root / "AGENTS.md").write_text(lines_of(200))
    one.commit("long root file")
    three = tmp_path / "elsewhere" / "clone"
    subprocess.run(["git", "clone", "-q", str(one.root), str(three)], check=True)
    outs = [Workspace(r).preload("a/b/c/d", budget=300) for r in (one.root, two.root, three)]
    assert outs[0].text == outs[1].text == outs[2].text
    assert outs[0].prefix_hash == outs[1].prefix_hash == outs[2].prefix_hash
    assert outs[0].files[0].truncated  # the cut path is byte-stable too
    assert [f.reason for f in outs[0].files] == ["cut", "included", "included", "included", "included", "omitted"]
    for r, o in zip((one.root, two.root, three), outs):
        assert str(r) not in o.text and str(tmp_path) not in o.text
        assert str(r) not in " ".join(o.warnings)
    assert not re.search(r"\d{4}-\d\d-\d\d|\d\d:\d\d", outs[0].text)


def test_warm_call_gives_the_same_prefix(pre):
    ws = ws_of(pre)
    assert ws.preload("a/b").to_dict() == ws.preload("a/b").to_dict()


def test_changed_file_changes_the_prefix(pre):
    ws = ws_of(pre)
    before = ws.preload()
    pre.write("AGENTS.md", "# Root rules\n\nUse spaces now.\n")
    after = ws.preload()
    assert after.prefix_hash != before.prefix_hash and "Use spaces now." in after.text


def test_delivered_blocks_are_recorded_in_the_ledger(pre):
    ws = ws_of(pre)
    ws.preload("a")
    items = ws.ledger._items
    assert {p: d.kind for p, d in items.items()} == {"AGENTS.md": "preload", "a/AGENTS.md": "preload", "README.md": "preload"}
    assert items["AGENTS.md"].head == pre.head()
    pre.write("a/AGENTS.md", "# changed\n")
    assert [s["path"] for s in ws.stale()] == ["a/AGENTS.md"]


# -- just in time -------------------------------------------------------------------


def test_jit_glob_delivers_references_once_intermediate_dirs_in_order(pre):
    ws = ws_of(pre)
    ws.preload("a")
    res = ws.glob("**/*.py", sort="path")
    assert res.instructions == [
        ref(pre, "a/b/AGENTS.override.md", "a/b"),
        ref(pre, "a/b/c/CLAUDE.md", "a/b/c"),
        ref(pre, "a/b/c/d/GEMINI.md", "a/b/c/d"),
        ref(pre, "empty/AGENTS.md", "empty"),
        ref(pre, "sib/AGENTS.md", "sib"),
    ]
    assert ws.glob("**/*.py").instructions == []
    assert ws.nested.delivered() == ["a/b", "a/b/c", "a/b/c/d", "empty", "sib"]
    assert {p: d.kind for p, d in ws.ledger._items.items() if d.kind == "instructions"} == {e["path"]: "instructions" for e in res.instructions}


def test_jit_head_delivers_content(pre):
    ws = ws_of(pre)
    ws.preload()
    res = ws.head("a/b/c/mid.py")
    assert res.instructions == [
        {**ref(pre, "a/AGENTS.md", "a"), "content": A.split("\n", 1)[1], "tokens": ws.tokenizer.count(A.split("\n", 1)[1]), "truncated": False},
        {**ref(pre, "a/b/AGENTS.override.md", "a/b"), "content": AB.split("\n", 1)[1], "tokens": ws.tokenizer.count(AB.split("\n", 1)[1]), "truncated": False},
        {**ref(pre, "a/b/c/CLAUDE.md", "a/b/c"), "content": ABC.split("\n", 1)[1], "tokens": ws.tokenizer.count(ABC.split("\n", 1)[1]), "truncated": False},
    ]
    assert ws.head("a/b/c/mid.py").instructions == []
    from jitctx.render import render_text

    assert render_text(ws.head("a/top.py", 1)).startswith("==> a/top.py")


def test_jit_reading_the_instruction_file_itself_does_not_repeat_it(pre):
    ws = ws_of(pre)
    assert ws.head("sib/AGENTS.md").instructions == []
    assert ws.head("sib/code.py").instructions == []
    assert [i["path"] for i in ws.glob("**/*.md", "a/b", sort="path").instructions] == ["a/AGENTS.md", "a/b/AGENTS.override.md", "a/b/c/CLAUDE.md", "a/b/c/d/GEMINI.md"]


def test_denied_fallback_name_is_refused(pre):
    with pytest.raises(QueryError, match="deny list"):
        ws_of(pre).preload(fallbacks=[".env"])


def test_jit_never_touches_the_prefix(pre):
    ws = ws_of(pre)
    first = ws.preload()
    ws.glob("**/*.py")
    assert ws.preload() == first


def test_jit_without_a_preload_treats_the_root_as_the_prefix_domain(pre):
    ws = ws_of(pre)
    res = ws.glob("top.py", "a")
    assert [i["path"] for i in res.instructions] == ["a/AGENTS.md"]  # the root file is not delivered


def test_jit_skips_dirs_at_or_above_cwd_and_files_already_in_the_prefix(pre):
    os.symlink("../../../../AGENTS.md", pre.root / "a" / "b" / "c" / "d" / "AGENTS.md")
    ws = ws_of(pre)
    ws.preload("a/b")
    res = ws.glob("**/*.py", "a", sort="path")
    # a/b/c/d's pick is an alias of the root file, already in the prefix
    assert [i["path"] for i in res.instructions] == ["a/b/c/CLAUDE.md"]


def test_jit_sees_an_instruction_file_created_later(pre):
    ws = ws_of(pre)
    assert ws.nested.on_paths(["fb/f.py"], content=False)[0] == []
    pre.write("fb/AGENTS.md", "# new\n")
    assert [i["path"] for i in ws.nested.on_paths(["fb/f.py"], content=False)[0]] == ["fb/AGENTS.md"]


def test_jit_large_file_content_is_cut_with_a_marker(pre):
    pre.write("sib/AGENTS.md", lines_of(2000))
    ws = ws_of(pre)
    (entry,) = ws.head("sib/code.py").instructions
    assert entry["truncated"] and entry["tokens"] <= 2000
    assert re.search(r"\[… sib/AGENTS.md cut to 2,000 tokens: kept lines 1-(\d+) of 2,000; read on with head path=sib/AGENTS.md start=\d+\]\n$", entry["content"])


def test_jit_is_thread_safe_each_file_delivered_once(pre):
    ws = ws_of(pre)
    paths = ["a/b/c/d/deep.py", "sib/code.py", "empty/e.py", "a/top.py", "ws/w.py", "near/n.py"]
    got: list[dict] = []
    lock = threading.Lock()
    barrier = threading.Barrier(8)

    def run():
        barrier.wait()
        for _ in range(20):
            out = ws.nested.on_paths(paths, content=False)[0]
            with lock:
                got.extend(out)

    threads = [threading.Thread(target=run) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(i["path"] for i in got) == ["a/AGENTS.md", "a/b/AGENTS.override.md", "a/b/c/CLAUDE.md", "a/b/c/d/GEMINI.md", "empty/AGENTS.md", "sib/AGENTS.md"]


def test_jit_forget_makes_a_changed_file_due_again(pre):
    ws = ws_of(pre)
    assert len(ws.head("sib/code.py").instructions) == 1
    pre.write("sib/AGENTS.md", "# sib, changed\n")
    assert [s["path"] for s in ws.stale()] == ["sib/AGENTS.md"]
    assert ws.head("sib/code.py").instructions == []
    ws.nested.forget(["sib/AGENTS.md"])
    (entry,) = ws.head("sib/code.py").instructions
    assert entry["content"] == "# sib, changed\n"


def test_jit_reset_starts_a_new_session(pre):
    ws = ws_of(pre)
    assert len(ws.nested.on_paths(["sib/code.py"], content=False)[0]) == 1
    ws.nested.reset()
    assert len(ws.nested.on_paths(["sib/code.py"], content=False)[0]) == 1


# -- CLI ----------------------------------------------------------------------------


def test_cli_text_json_and_errors(pre, capsys):
    assert cli.main(["preload", "--root", str(pre.root), "--cwd", "a"]) == 0
    assert capsys.readouterr().out == "\n".join([ROOT, A, README])
    assert cli.main(["preload", "--root", str(pre.root), "--json", "--budget", "300"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["budget"] == 300 and d["tokens"] <= 300 and d["text"].startswith(ROOT)
    assert cli.main(["preload", "--root", str(pre.root), "--budget", "0"]) == 1
    assert capsys.readouterr().out == ""
    assert cli.main(["preload", "--root", str(pre.root), "--budget", "-5"]) == 2
    assert "budget must be at least 0, got -5" in capsys.readouterr().err
    assert cli.main(["preload", "--root", str(pre.root), "--cwd", "a/top.py"]) == 2
    assert "not a directory" in capsys.readouterr().err


def test_cli_warnings_go_to_stderr(pre, capsys):
    assert cli.main(["preload", "--root", str(pre.root), "--cwd", "near"]) == 0
    out = capsys.readouterr()
    assert out.out == ROOT + "\n" + README
    warning, cost = out.err.splitlines()
    assert warning == "jitctx: warning: near/agents.md is not read: instruction file names are case-sensitive (rename it to AGENTS.md)"
    assert cost.startswith("jitctx: prefix: ")


def test_issue_4_instruction_file_linking_to_a_denied_file_is_never_shown(make_repo):
    import os as _os

    from jitctx import Workspace as _W

    repo = make_repo("basic")
    (repo.root / "AGENTS.md").unlink()
    _os.symlink(".env", repo.root / "AGENTS.md")
    _os.symlink("../.env", repo.root / "docs" / "CLAUDE.md")
    (repo.root / "README.md").unlink()
    _os.symlink(".env", repo.root / "README.md")
    ws = _W(repo.root)
    pre = ws.preload()
    assert "secret-value" not in pre.text
    assert any("deny list" in w for w in pre.warnings)
    res = ws.head("docs/guide.md")
    assert "secret-value" not in str(res.to_dict())
    assert all(i["path"] != "docs/CLAUDE.md" for i in res.instructions)
