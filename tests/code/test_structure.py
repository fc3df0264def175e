"""Code structure on a workspace: outline, symbols, head --symbol, grep's symbol field.

Real tree-sitter over the ``code`` fixture (and ``basic`` for non-code files);
the index lives in the test's own cache directory (conftest sets
``JITCTX_CACHE_DIR``).
"""

from __future__ import annotations

import json
import os

import pytest

from jitctx.adapters.cli import main
from jitctx.adapters.tools import TOOLS, dispatch
from jitctx.code.outline import KINDS
from jitctx.errors import QueryError
from jitctx.query import KINDS as QUERY_KINDS
from jitctx.session.workspace import Workspace


@pytest.fixture
def code(make_repo):
    return make_repo("code")


def _ws(repo) -> Workspace:
    return Workspace(repo.root)


def test_query_kinds_are_the_outline_kinds():
    assert QUERY_KINDS == KINDS


def test_outline_lists_definitions_nested_with_lines_and_tokens(code):
    res = _ws(code).outline("rational.py")
    quals = [s.qualname for s in res.results]
    assert quals[:3] == ["Rational", "Rational.Error", "Rational.__init__"]
    assert "Rational.__add__.lift" in quals and "main.Local.run" in quals
    cls = res.results[0]
    assert (cls.kind, cls.start_line) == ("class", 9)  # the doc comment and decorator above are included
    assert all(s.tokens and s.tokens > 0 for s in res.results)
    assert res.extra["lines"] == len((code.root / "rational.py").read_bytes().splitlines())


def test_outline_text_is_an_indented_tree_far_smaller_than_the_file(code):
    ws = _ws(code)
    from jitctx.render import render_text

    text = render_text(ws.outline("rational.py"))
    lines = text.splitlines()
    assert lines[0].startswith("==> rational.py (")
    assert any(line.startswith("  ") and "method __init__(self, num, den=1) [" in line for line in lines)
    body = "".join(
        f'def step_{i}(state, value):\n    """Step {i}."""\n' + "".join(f"    state = state * {j} + value  # mix {j}\n" for j in range(12)) + "    return state\n\n\n"
        for i in range(200)
    )
    code.write("big.py", body)
    big = render_text(ws.outline("big.py"))
    assert ws.tokenizer.count(big) * 10 < ws.tokenizer.count(body)  # an outline is a tenth of the file or less


def test_outline_of_a_file_without_grammar_says_so_and_exits_1(code, capsys, monkeypatch):
    (code.root / "notes.xyz").write_text("hello\n")
    res = _ws(code).outline("notes.xyz")
    assert res.results == [] and "no outline for .xyz files" in res.notice
    monkeypatch.chdir(code.root)
    assert main(["outline", "notes.xyz"]) == 1
    assert "read it with jitctx head notes.xyz" in capsys.readouterr().out


def test_outline_refuses_folders_and_denied_files(repo):
    ws = _ws(repo)
    with pytest.raises(Exception, match="directory"):
        ws.outline("src")
    with pytest.raises(Exception, match="denied|deny"):
        ws.outline(".env")


def test_head_symbol_reads_exactly_one_definition_and_prices_it(code):
    ws = _ws(code)
    gcd = next(s for s in ws.outline("rational.py").results if s.qualname == "gcd")
    res = ws.head("rational.py", symbol="gcd")
    e = res.results[0]
    assert (e.start_line, e.end_line) == (gcd.start_line, gcd.end_line)
    assert e.content.startswith("def gcd(a, b):") and e.content.rstrip().endswith("return a")
    from jitctx.render import render_text

    assert ws.tokenizer.count(render_text(res)) == gcd.tokens  # the outline's price is what the read costs (issue 32)
    assert res.extra["symbol"]["qualname"] == "gcd"


def test_head_symbol_ambiguous_lists_candidates_with_lines(code):
    code.write("twice.py", "class A:\n    def run(self):\n        pass\n\n\nclass B:\n    def run(self):\n        pass\n")
    with pytest.raises(QueryError) as err:
        _ws(code).head("twice.py", symbol="run")
    msg = err.value.message
    assert "ambiguous" in msg and "2 definitions" in msg and "lines 2-3" in msg and "lines 7-8" in msg
    assert "head path=twice.py symbol=A.run start=2" in err.value.hint


def test_head_symbol_missing_names_the_closest(code):
    with pytest.raises(QueryError) as err:
        _ws(code).head("rational.py", symbol="Rationl")
    assert "no symbol 'Rationl'" in err.value.message and "Rational" in err.value.hint


def test_head_symbol_by_qualname_tail(code):
    res = _ws(code).head("rational.py", symbol="Local.run")
    assert res.results[0].content.strip().startswith("def run(self):")


def test_symbols_exact_then_qualified_then_prefix(code):
    ws = _ws(code)
    res = ws.symbols("Rational")
    assert res.results[0].qualname == "Rational" and res.results[0].path == "rational.py"
    members = ws.symbols("Rational.")
    assert {s.qualname for s in members.results} >= {"Rational.__init__", "Rational.Error", "Rational.value"}
    assert ws.symbols("__init__", kind="method").results[0].qualname == "Rational.__init__"


def test_symbols_source_before_tests(code):
    (code.root / "tests").mkdir()
    (code.root / "tests" / "test_gcd.py").write_text("def gcd(a, b):\n    return 1\n")
    res = _ws(code).symbols("gcd")
    assert [s.path for s in res.results] == ["rational.py", "tests/test_gcd.py"]


def test_symbols_under_a_folder_and_limit_notice(code):
    ws = _ws(code)
    (code.root / "sub").mkdir()
    (code.root / "sub" / "more.py").write_text("".join(f"def f{i}():\n    pass\n" for i in range(5)))
    res = ws.symbols("f", path="sub", limit=2)
    assert len(res.results) == 2 and res.truncated and res.total == 5 and "raise limit" in res.notice
    assert all(s.path.startswith("sub/") for s in res.results)


def test_symbols_none_found_says_so(code, capsys, monkeypatch):
    monkeypatch.chdir(code.root)
    assert main(["symbols", "NoSuchThing"]) == 1
    assert "no definition named 'NoSuchThing'" in capsys.readouterr().out


def test_index_is_incremental_and_never_stale(code):
    ws = _ws(code)
    ws.symbols("gcd")
    first = ws.code.last
    assert first.analyzed >= 10
    ws.symbols("gcd")
    assert ws.code.last.analyzed == 0
    path = code.root / "rational.py"
    path.write_text(path.read_text().replace("def gcd(a, b):", "def gcd2(a, b):"))
    res = ws.symbols("gcd2")
    assert ws.code.last.analyzed == 1
    assert res.results[0].qualname == "gcd2"  # the answer is as new as the file


def test_denied_files_are_never_indexed(repo):
    ws = _ws(repo)
    ws.symbols("greet")
    paths = ws.code.index.paths()
    assert "src/app.py" in paths
    assert not any(p.endswith(".env") or p.endswith(".pem") for p in paths)


def test_grep_content_matches_carry_their_symbol(code, capsys, monkeypatch):
    ws = _ws(code)
    res = ws.grep("return lift", mode="content")
    assert res.results[0].symbol == "Rational.__add__"
    assert res.to_dict()["results"][0]["symbol"] == "Rational.__add__"
    monkeypatch.chdir(code.root)
    assert main(["grep", "a % b", "--mode", "content"]) == 0
    assert "rational.py\n47 [gcd]:" in capsys.readouterr().out


def test_grep_symbols_make_no_index_and_use_one_once_built(code, monkeypatch):
    from jitctx.cache.folders import index_file

    where = index_file(code.root)
    res = _ws(code).grep("return lift", mode="content")  # parsed here: no index is built for a grep
    assert res.results[0].symbol == "Rational.__add__" and not os.path.exists(where)
    ws = _ws(code)
    ws.symbols("gcd")  # builds it
    assert os.path.exists(where)
    from jitctx.code import outline

    monkeypatch.setattr(outline, "outline", lambda *a, **k: pytest.fail("parsed a file the index holds"))
    assert _ws(code).grep("return lift", mode="content").results[0].symbol == "Rational.__add__"


def test_grep_content_warms_the_symbol_imports_while_rg_runs(code, monkeypatch):
    import jitctx.session.workspace as workspace
    from jitctx.primitives import search as search_mod

    calls = []
    real = search_mod.search
    monkeypatch.setattr(search_mod, "search", lambda *a, **k: calls.append(k.get("beside")) or real(*a, **k))
    ws = _ws(code)
    ws.grep("gcd", mode="content")
    ws.grep("gcd")  # files mode: no symbols to warm
    assert calls == [workspace._warm_symbols, workspace._warm_results]
    ran = []
    res, _ = real(ws.repo, ws.policy, workspace.SearchQuery.make(pattern="gcd", backend="rg"), beside=lambda: ran.append(1))
    assert ran == [1] and res.results


def test_grep_symbol_budget_goes_to_the_fewest_bytes_per_page_line(code, monkeypatch):
    from jitctx.code import structure

    filler = "".join(f"# line {i}\n" for i in range(200))
    code.write("few.py", filler + "def lone():\n    return 'HIT'\n")  # one page line, ~2.3 KB to parse
    many = "".join(f"def f{i}():\n    return 'HIT'\n" for i in range(5))
    code.write("many.py", filler + filler[: len(filler) // 2] + many)  # five page lines, ~3.5 KB
    cost = len((code.root / "many.py").read_bytes())
    monkeypatch.setattr(structure, "_PARSE_BUDGET", cost)  # room for one of the two
    res = _ws(code).grep("HIT", mode="content", glob=["*.py"])
    symbols = {(r.path, r.symbol) for r in res.results}
    assert ("many.py", "f4") in symbols and ("few.py", None) in symbols  # smallest file first would pick few.py


def test_grep_outside_definitions_has_no_symbol(code):
    res = _ws(code).grep("^LIMIT = 10", mode="content")
    assert res.results[0].symbol is None and "symbol" not in res.results[0].to_dict()


def test_unwritable_cache_still_answers(code, monkeypatch, tmp_path):
    blocked = tmp_path / "blocked"
    blocked.write_text("a file, not a folder")
    monkeypatch.setenv("JITCTX_CACHE_DIR", str(blocked / "cache"))
    ws = _ws(code)
    assert ws.symbols("gcd").results[0].qualname == "gcd"
    assert ws.code.index.path is None and ws.code.index.notice


def test_cli_outline_and_symbols_json(code, capsys, monkeypatch):
    monkeypatch.chdir(code.root)
    assert main(["outline", "tree.go", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["tool"] == "outline" and all({"kind", "qualname", "start_line", "end_line", "tokens"} <= set(r) for r in out["results"])
    assert main(["symbols", "gcd", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["results"][0]["path"] == "rational.py"
    assert main(["head", "rational.py", "--symbol", "gcd"]) == 0
    assert "def gcd(a, b):" in capsys.readouterr().out


def test_cli_symbol_errors_exit_2_with_the_candidates(code, capsys, monkeypatch):
    code.write("twice.py", "class A:\n    def run(self):\n        pass\n\n\nclass B:\n    def run(self):\n        pass\n")
    monkeypatch.chdir(code.root)
    assert main(["head", "twice.py", "--symbol", "run"]) == 2
    err = capsys.readouterr().err
    assert "ambiguous" in err and "A.run (lines" in err
    assert "jitctx head twice.py --symbol A.run --start 2" in err  # the hint, as flags, pastes back (issue 32)
    assert main(["head", "twice.py", "--symbol", "A.run", "--start", "2"]) == 0
    assert main(["head", "twice.py", "--symbol", "run", "--start", "7"]) == 0
    assert "def run(self):" in capsys.readouterr().out


def test_cli_outline_from_a_subfolder(code, capsys, monkeypatch):
    monkeypatch.chdir(code.root / "bin")
    assert main(["outline", "greet"]) in (0, 1)  # a shebang script: outlined by its interpreter's grammar
    assert "error" not in capsys.readouterr().err


def test_tools_offer_outline_symbols_and_head_symbol(code):
    assert {"outline", "symbols"} <= set(TOOLS)
    assert "symbol" in TOOLS["head"].schema()["properties"]
    ws = _ws(code)
    out = dispatch("symbols", {"query": "gcd"}, workspace=ws)
    assert not out.is_error and out.data["results"][0]["qualname"] == "gcd"
    out = dispatch("head", {"path": "rational.py", "symbol": "gcd"}, workspace=ws)
    assert not out.is_error and "def gcd" in out.text
    out = dispatch("outline", {"path": "rational.py", "limit": 0}, workspace=ws)
    assert out.is_error and "limit" in out.data["error"]["message"]


def test_index_store_lives_outside_the_repository(code):
    ws = _ws(code)
    ws.symbols("gcd")
    store = ws.code.index.path
    assert store is not None and not os.path.realpath(store).startswith(os.path.realpath(code.root))


def test_outline_of_a_file_of_many_small_methods_folds_members_to_stay_a_tenth(code):
    ws = _ws(code)
    from jitctx.render import render_text

    body = "".join(
        f"class Node{i}(Base):\n" + "".join(f"    def method_{j}(self, other: 'Node{i}') -> bool:\n        return self.v{j} == other.v{j}\n\n" for j in range(8)) + "\n"
        for i in range(150)
    )
    code.write("nodes.py", body)
    res = ws.outline("nodes.py")
    assert res.total == 150 * 9  # JSON keeps every definition
    text = render_text(res)
    assert ws.tokenizer.count(text) * 10 <= ws.tokenizer.count(body)
    assert "  method_0, method_1, method_2" in text and "folded" in text


def test_symbols_qualified_miss_names_where_the_last_part_is_defined(code):
    res = _ws(code).symbols("Fraction.gcd")
    assert res.results == [] and "gcd (rational.py:45) defines 'gcd'" in res.notice


def test_symbols_never_answer_from_a_deleted_file(code):
    ws = _ws(code)
    assert ws.symbols("gcd").results[0].path == "rational.py"
    (code.root / "rational.py").unlink()
    assert [s.path for s in ws.symbols("gcd").results] == []


def test_symbols_refresh_only_files_that_can_define(code):
    ws = _ws(code)
    code.write("notes.md", "def not_code(): pass\n")
    ws.symbols("gcd")
    assert "notes.md" not in ws.code.index.paths()  # its words wait for locate's complete refresh


def test_a_repeated_lookup_listing_is_answered_without_comparing_rows(code, monkeypatch):
    from jitctx.code import refresh as refresh_mod

    monkeypatch.setattr(refresh_mod, "PARTIAL_SHORTCUT", 2)
    ws = _ws(code)
    ws.symbols("gcd")
    monkeypatch.setattr(refresh_mod, "RACY_NS", 0)  # as if past the racy window (issue 30: patched, not slept): the next refresh trusts every row
    ws.symbols("gcd")
    ws.symbols("gcd")
    assert ws.code.last.listing_unchanged and ws.code.last.analyzed == 0
    path = code.root / "rational.py"
    path.write_text(path.read_text().replace("def gcd(a, b):", "def gcd3(a, b):"))
    assert ws.symbols("gcd3").results[0].qualname == "gcd3"  # a changed signature misses the shortcut
    assert not ws.code.last.listing_unchanged and ws.code.last.analyzed == 1


def test_a_hit_in_a_changed_script_without_extension_is_refreshed_first(code):
    ws = _ws(code)
    ws.code.refresh()  # complete: the script's definitions are stored
    hit = ws.symbols("greet", path="bin").results[0]
    assert (hit.path, hit.start_line) == ("bin/greet", 5)
    script = code.root / "bin" / "greet"
    script.write_text(script.read_text().replace('"""A script without an extension."""\n', '"""A script without an extension."""\n\n# moved down\n'))
    hit = ws.symbols("greet", path="bin").results[0]
    assert (hit.path, hit.start_line) == ("bin/greet", 7)  # never older than the file


def test_the_size_cap_is_the_index_refresh_cap():
    from jitctx.code import refresh, structure

    assert structure._MAX_BYTES == refresh.MAX_BYTES
