"""Task retrieval (jitctx.locate.rank): terms, roles, file ranking and regions.

The index is a real one (SQLite FTS5 in a temporary cache) filled from a
dict of files with a small extractor: ``def``/``class`` lines are
definitions, the words are ``code.words``' (the same rule locate uses).
"""

from __future__ import annotations

import re

import pytest

from jitctx.code import words
from jitctx.code.index import Index
from jitctx.code.rows import Definition
from jitctx.errors import QueryError
from jitctx.locate import answer as A
from jitctx.locate import evidence as E
from jitctx.locate import rank as L
from jitctx.locate import regions as G
from jitctx.locate import terms as T
from jitctx.locate import terms as taskterms
from jitctx.locate import weights as K


def _analyze(path: str, data: bytes):
    text = data.decode()
    lines = text.split("\n")
    defs = []
    for i, line in enumerate(lines, 1):
        body = line.strip()
        if body.startswith(("def ", "class ")):
            name = body.split()[1].split("(")[0].rstrip(":")
            end = i
            while end < len(lines) and (lines[end].startswith((" ", "\t")) or not lines[end].strip()) and end < len(lines) - 1:
                end += 1
            kind = "class" if body.startswith("class") else "function"
            defs.append(Definition(kind, name, name, i, max(i, end), body, 0, None, None))
    return defs, words.path_terms(path), words.content_terms(text)


_C_FUNCTION = re.compile(r"^[A-Za-z_][\w \t*]*?\b([A-Za-z_]\w*)\s*\([^;]*\)\s*\{")


def _analyze_c(path: str, data: bytes):
    """``_analyze`` that also knows C's function definitions (a line ``type name(args) {``)."""
    defs, path_words, content = _analyze(path, data)
    for i, line in enumerate(data.decode().split("\n"), 1):
        m = _C_FUNCTION.match(line)
        if m and not line.startswith(("def ", "class ")):
            defs.append(Definition("function", m.group(1), m.group(1), i, i, line.strip(), 0, None, None))
    return defs, path_words, content


def _index(tmp_path, files: dict[str, str], analyze=_analyze) -> Index:
    root = tmp_path / "repo"
    root.mkdir(exist_ok=True)
    entries = []
    for n, (path, text) in enumerate(sorted(files.items())):
        entries.append((path, len(text.encode()), 1_600_000_000 * 10**9, n + 1, 1_600_000_000 * 10**9))
    idx = Index.open(root, analyzer="test/1", cache_dir=str(tmp_path / "cache"))
    idx.refresh(entries, lambda p: files[p].encode(), analyze)
    return idx


def _read(files):
    return lambda p: (files[p].encode(), 0.0) if p in files else None


FILES = {
    "src/numbers.py": "class Rational:\n    def __add__(self, other):\n        return Rational(self.p * other.q + other.p * self.q)\n\n\ndef irrational_helper():\n    return 1\n",
    "src/solve.py": "def solve(expr):\n    # rational and irrational adding\n    return expr\n",
    "src/http/client.py": "def retry_request(url, timeout):\n    for attempt in range(3):\n        send(url, timeout=timeout)\n",
    "tests/test_numbers.py": "def test_rational_add():\n    assert Rational(1) + Rational(2)\n",
    "docs/numbers.md": "# Rational numbers\n\nRational adding is described here. Rational Rational.\n",
    "README.md": "myproj: a project\n",
}


def test_task_terms_split_weigh_and_drop():
    t = T.task_terms("Fix `Rational.__add__` when adding to an einsum_path in myproj", repo_name="myproj")
    assert t.weights["rational"] == T.CODE_WEIGHT  # each part of a qualified name is a name
    assert t.weights["einsumpath"] == T.CODE_WEIGHT and t.weights["einsum"] == 1 and t.weights["path"] == 1
    assert "add" not in t.weights or t.weights["add"] >= 1
    assert "myproj" not in t.weights and "myproj" in t.dropped
    assert "fix" not in t.weights and "when" not in t.weights
    assert "Rational.__add__" in t.names and "einsum_path" in t.names


def test_task_terms_camel_case_and_options():
    t = T.task_terms("JPEGLoadingContext ignores --pyargs")
    assert t.weights["jpegloadingcontext"] == T.CODE_WEIGHT and t.weights["jpeg"] == 1
    assert t.weights["pyargs"] == T.CODE_WEIGHT
    assert "JPEGLoadingContext" in t.names and "pyargs" not in t.names


@pytest.mark.parametrize("task", ["", "   ", "the and of it", "!!! ??? ...", "12 345 6789"])
def test_task_without_words_is_a_clear_error(task):
    with pytest.raises(QueryError) as e:
        T.task_terms(task)
    assert e.value.fields["field"] == "task" and e.value.hint


def test_task_not_text_is_an_error():
    with pytest.raises(QueryError):
        T.task_terms(None)  # type: ignore[arg-type]


def test_long_task_is_bounded():
    task = " ".join(f"word{i}x" for i in range(30_000))  # ~240 KB
    t = T.task_terms(task)
    assert len(t.weights) == T.MAX_TERMS and t.cut and t.chars == T.MAX_TASK_CHARS


def test_non_ascii_task_terms():
    t = T.task_terms("Größe der Übersetzung prüfen: 翻訳")
    assert "größe" in t.weights and "übersetzung" in t.weights and "翻訳" in t.weights


def test_mentions_tests_and_docs():
    assert T.task_terms("add a test for the parser").tests
    assert T.task_terms("document the parser options").docs is False
    assert T.task_terms("update the docs for parser").docs


def test_source_ranks_before_tests_and_docs(tmp_path):
    idx = _index(tmp_path, FILES)
    got = L.locate(idx, "Rational adding is wrong", read=_read(FILES))
    paths = [f.path for f in got.files]
    assert paths[0] == "src/numbers.py"
    assert paths.index("tests/test_numbers.py") > 0 and paths.index("docs/numbers.md") > 0
    assert got.files[0].role == "source"


def test_whole_words_not_substrings(tmp_path):
    files = {"a/irr.py": "irrational irrational irrational\n", "a/rat.py": "rational\n"}
    idx = _index(tmp_path, files)
    got = L.locate(idx, "rational numbers", read=_read(files))
    assert [f.path for f in got.files] == ["a/rat.py"]


def test_exact_symbol_is_the_region_and_says_why(tmp_path):
    idx = _index(tmp_path, FILES)
    got = L.locate(idx, "how is `retry_request` bounded", read=_read(FILES), count=lambda s: len(s.split()))
    top = got.files[0]
    assert top.path == "src/http/client.py"
    assert "defines retry_request" in top.why
    region = top.regions[0]
    assert region.symbol == "retry_request" and region.start_line == 1
    assert region.why[0] == "defines retry_request"
    assert region.tokens == len("\n".join(FILES["src/http/client.py"].split("\n")[0:3]).split()) or region.tokens > 0
    assert region.read_call() == "head path=src/http/client.py symbol=retry_request"  # tool syntax; the CLI shows flags


def test_line_window_without_definitions(tmp_path):
    body = "\n".join(["filler line"] * 50 + ["the frobnicate knob turns here", "frobnicate again"] + ["filler line"] * 50) + "\n"
    files = {"conf/setup.txt": body}
    idx = _index(tmp_path, files)
    got = L.locate(idx, "frobnicate knob", read=_read(files))
    (region,) = got.files[0].regions[:1]
    assert region.kind == "lines" and region.symbol is None
    assert region.start_line <= 51 <= region.end_line
    assert region.end_line - region.start_line + 1 <= G.WINDOW
    assert set(region.why) >= {"frobnicate", "knob"}


def test_repo_name_is_not_evidence(tmp_path):
    files = {f"myproj/m{i}.py": f"import myproj\nvalue{i} = 1\n" for i in range(30)}
    files["myproj/widget.py"] = "def widget():\n    return 'myproj'\n"
    idx = _index(tmp_path, files)
    got = L.locate(idx, "myproj widget", read=_read(files), repo_name="myproj")
    assert got.files[0].path == "myproj/widget.py"
    assert "myproj" not in got.terms.weights


def test_no_hits_is_an_empty_answer_that_says_so(tmp_path):
    idx = _index(tmp_path, FILES)
    got = L.locate(idx, "zebra quagga", read=_read(FILES))
    assert got.files == () and got.total == 0
    res = A.to_result(got)
    assert res.is_empty and res.results == []
    assert "no file holds any of the task's terms" in res.notice and "zebra" in res.notice


def test_unreadable_file_is_listed_without_regions(tmp_path):
    idx = _index(tmp_path, FILES)
    got = L.locate(idx, "retry_request timeout", read=lambda p: None)
    assert got.files[0].path == "src/http/client.py" and got.files[0].regions == ()


# -- through the Workspace, the CLI and the tool surface ---------------------------


def test_workspace_locate_envelope(repo):
    from jitctx.session.workspace import Workspace

    res = Workspace(repo.root).locate("make greet shout")
    assert res.tool == "locate" and res.results[0].path == "src/util/helpers.py"
    d = res.to_dict()
    assert d["results"][0]["regions"][0]["tokens"] > 0 and d["terms"] == {"greet": 1, "shout": 1}
    assert d["notes"] == [] and not res.truncated


def test_unwritable_cache_works_and_says_so(repo, tmp_path, monkeypatch):
    from jitctx.session.workspace import Workspace

    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("JITCTX_CACHE_DIR", str(blocker / "cache"))
    res = Workspace(repo.root).locate("make greet shout")
    assert res.results[0].path == "src/util/helpers.py"
    assert "kept in memory" in res.notice and "slower" in res.notice


def test_long_task_through_the_cli_is_bounded_and_says_so(repo, capsys):
    from jitctx.adapters import cli

    task = "greet shout " + " ".join(f"extra{i}word" for i in range(12_000))  # ~130 KB
    code = cli.main(["locate", "--task", task, "--root", str(repo.root), "--json"])
    d = __import__("json").loads(capsys.readouterr().out)
    assert code == 0 and d["results"][0]["path"] == "src/util/helpers.py"
    assert f"searched {T.MAX_TERMS} of its" in d["notice"] and "characters of the task were read" in d["notice"]


def test_non_ascii_task_and_identifiers(repo, capsys):
    from jitctx.adapters import cli

    repo.write("src/größe.py", "def größe_berechnen(wert):\n    return wert * 2\n")
    code = cli.main(["locate", "--task", "Größe berechnen falsch", "--root", str(repo.root), "--json"])
    d = __import__("json").loads(capsys.readouterr().out)
    assert code == 0 and d["results"][0]["path"] == "src/größe.py"
    assert cli.main(["locate", "--task", "仕様を確認", "--root", str(repo.root)]) == 1  # no file holds it: said, exit 1
    assert "no file holds any of the task's terms" in capsys.readouterr().out


def test_denied_files_are_never_located(repo, capsys):
    from jitctx.session.workspace import Workspace

    repo.write(".env", "GREET_SECRET=shout\n")
    res = Workspace(repo.root).locate("greet secret shout")
    assert ".env" not in [f.path for f in res.results]


def test_tool_dispatch_locate(repo):
    from jitctx.adapters.tools import dispatch
    from jitctx.session.workspace import Workspace

    out = dispatch("locate", {"task": "make greet shout"}, workspace=Workspace(repo.root))
    assert not out.is_error and out.data["results"][0]["path"] == "src/util/helpers.py"
    assert "src/util/helpers.py" in out.text and "shout (function" in out.text
    bad = dispatch("locate", {"task": "the and of"}, workspace=Workspace(repo.root))
    assert bad.is_error and bad.data["error"]["type"] == "query_error" and "no words to search for" in bad.text
    assert dispatch("locate", {}, workspace=Workspace(repo.root)).is_error


# -- issue 24: names first ----------------------------------------------------------


def test_issue_24_a_file_named_by_the_task_comes_first(tmp_path):
    # class 2: a task word equal to a file's name (its stem, all its sub-words, a plural
    # of it) is strong evidence, stronger than files that only say the words more often
    files = {
        "src/dummymodule.c": 'static int exec_dummy(PyObject *m)\n{\n    return PyModule_AddIntConstant(m, "x", 1);\n}\n',
        "src/moduleobject.c": "/* multi phase init of a module */\n" + "int module_init_phase(void) { multi(); phase(); init(); }\n" * 12,
        "setup.py": "ext_modules = ['dummymodule', 'othermodule']  # dummymodule built here, dummymodule\n" * 3,
        "src/phase_init.c": "int multi_phase_init(void) { return init_phase(); }\n" * 6,
        # as in a real tree: every module has an init and a phase; few are named dummymodule
        **{f"src/m{i}.c": f"int m{i}_init(void) {{ return phase({i}); }}\n" for i in range(12)},
    }
    idx = _index(tmp_path, files)
    got = L.locate(idx, "Convert dummymodule to multi-phase init", read=_read(files))
    assert got.files[0].path == "src/dummymodule.c"
    assert "name: dummymodule" in got.files[0].why


def test_issue_24_a_plural_and_a_snake_case_name_name_the_file(tmp_path):
    files = {
        "altsrc/flag.go": "package altsrc\n\nfunc applyAlias(n string) error { return nil }\n",
        "altsrc/flag_test.go": "package altsrc\n" + "func TestFlagAlias(t *testing.T) { aliases(flags); remaining(flags) }\n" * 10,
        "command.go": "package cli\n" + "func (c *Command) flags() []Flag { return c.Flags } // alias support\n" * 8,
        "default_types.go": 'package cli\n\nvar table = []string{"go", "rust"}\n',
        "types.go": "package cli\n" + "type Types struct{} // default file types default types\n" * 8,
    }
    idx = _index(tmp_path, files)
    assert L.locate(idx, "adding alias support to remaining flags", read=_read(files)).files[0].path == "altsrc/flag.go"
    assert L.locate(idx, "add USD to the default file types", read=_read(files)).files[0].path == "default_types.go"


def test_issue_24_a_sub_word_of_an_identifier_names_no_file(tmp_path):
    # `jv_invalid` is the task's word, not its sub-word `jv`: jv.c is not named by it
    files = {
        "src/jv.c": "jv jv_invalid(void) {\n  return jv_invalid_with_msg(jv_null());\n}\n" * 3,
        "src/execute.c": "/* C-coded functions may now be empty */\nstatic jv call_c_function(jv input) {\n  return jv_invalid();\n}\n",
        "src/builtin.c": "static jv f_error(jv input) { return jv_invalid_with_msg(input); }\n" * 2,
    }
    idx = _index(tmp_path, files)
    got = L.locate(idx, "Allow C-coded functions to be empty: just return a jv_invalid() without a message", read=_read(files))
    assert got.files[0].path == "src/execute.c"
    assert all(not any(w.startswith("name:") for w in f.why) for f in got.files)


def test_issue_24_a_name_defined_in_one_place_brings_its_file(tmp_path):
    # class 1: `_nsort` (a private name) and `Factory` (a capitalised word the code defines
    # once) put the defining file first, before the files that merely use the words more
    users = "x = Factory()\nfactory = Factory.create(Factory)  # empty list handled, public factory\nnsort = _nsort(items)  # empty list\n"
    files = {
        "src/sorting.py": "def _nsort(seq):\n    return sorted(seq or [])\n",
        "src/adapters.py": "class Factory:\n    visible = True\n",
        "src/gson.py": users * 6,
        "src/json_tree.py": users * 5,
        "src/bind.py": users * 4,
    }
    idx = _index(tmp_path, files)
    got = L.locate(idx, "empty list now handled in _nsort", read=_read(files))
    assert got.files[0].path == "src/sorting.py" and "defines _nsort" in got.files[0].why
    got = L.locate(idx, "Factory always wanted to be public", read=_read(files))
    assert got.files[0].path == "src/adapters.py" and "defines Factory" in got.files[0].why


def test_issue_24_a_name_table_binds_a_word_to_its_function(tmp_path):
    # class 4: "getrange" is no definition's name; the command table binds it, as a
    # string, to getrangeCommand, which t_string.c defines: that file comes first, as
    # it would for a task naming getrangeCommand. Across languages too: the Python name
    # `can_cast` reaches the C function a method table binds it to.
    filler = "".join(f"void cmd{i}Command(client *c) {{\n    reply(c, {i});\n}}\n" for i in range(40))
    files = {
        "src/server.c": '#include "server.h"\nstruct redisCommand table[] = {\n    {"get", getCommand, 2},\n'
        '    {"getrange", getrangeCommand, 4},\n};\n' + "/* large requests are handled in the networking code */\n" * 3,
        "src/t_string.c": "void getCommand(client *c) {\n    reply(c, 0);\n}\n\nvoid getrangeCommand(client *c) {\n    long start;\n}\n" + filler,
        "src/networking.c": "int processRequest(client *c) {\n    /* handle large requests, large reads */\n}\n" * 6,
        "src/cluster.c": "int clusterHandle(client *c) {\n    /* large requests, handle the large ones */\n}\n" * 6,
        "src/multiarraymodule.c": 'static struct PyMethodDef methods[] = {\n    {"can_cast", (PyCFunction)array_can_cast_safely, METH_VARARGS, NULL},\n};\n',
        "src/convert_datatype.c": "PyObject *array_can_cast_safely(PyObject *self, PyObject *args) {\n    return NULL;\n}\n" + filler,
        "numpy/core/numeric.py": "# scalars are not arrays\n" * 2 + "def result_type(*arrays):\n    return can_cast(arrays)  # not supported for scalars\n",
    }
    idx = _index(tmp_path, files, _analyze_c)
    got = L.locate(idx, "Handle large getrange requests", read=_read(files))
    assert got.files[0].path == "src/t_string.c" and "defines getrangeCommand" in got.files[0].why
    got = L.locate(idx, "`can_cast` is not supported for scalars", read=_read(files))
    assert got.files[0].path == "src/convert_datatype.c" and "defines array_can_cast_safely" in got.files[0].why
    # no binding without the file's lines (a caller that reads nothing): the plain ranking
    plain, _idf, _total = L.rank(idx, T.task_terms("Handle large getrange requests"))
    assert plain[0].path != "src/t_string.c"


def test_a_word_held_widely_is_looked_for_in_the_best_files_only(tmp_path, monkeypatch):
    # ranking every holder of a commoner word costs (5-15 times an unranked listing on a
    # 100k-file tree): above HOLDING_DF holders, the table is found among the task's best files
    files = {
        "src/server.c": 'struct redisCommand table[] = {\n    {"getrange", getrangeCommand, 4},\n};\n/* large getrange requests */\n',
        "src/t_string.c": "void getrangeCommand(client *c) {\n    long start;\n}\n" + "".join(f"void c{i}Command(client *c) {{ }}\n" for i in range(40)),
        **{f"src/f{i}.c": f"int f{i}(void) {{ return {i}; }} /* handle large requests */\n" for i in range(6)},
    }
    idx = _index(tmp_path, files, _analyze_c)
    monkeypatch.setattr(E, "HOLDING_DF", 0)
    monkeypatch.setattr(E, "_holding", lambda *a: pytest.fail("holders listed for a word above HOLDING_DF"))
    got = L.locate(idx, "Handle large getrange requests", read=_read(files))
    assert got.files[0].path == "src/t_string.c" and "defines getrangeCommand" in got.files[0].why


def test_issue_24_a_common_word_binds_nothing(tmp_path):
    # "help" is in every table: a word in more than BIND_DF files is no binding
    files = {f"src/tool{i}.c": f'static struct opt opts[] = {{\n    {{"help", tool{i}Help}},\n}};\nvoid tool{i}Help(void) {{ }}\n' for i in range(K.BIND_DF + 2)}
    files["src/module.c"] = "void moduleReply(void) {\n    /* the module help reply */\n}\n" * 4
    idx = _index(tmp_path, files, _analyze_c)
    got = L.locate(idx, "Add module help reply", read=_read(files))
    assert got.files[0].path == "src/module.c"
    assert not any(w.startswith("defines tool") for f in got.files for w in f.why)


def test_issue_24_a_task_about_listing_brings_the_files_that_list_the_name(tmp_path):
    # class 5: "Add `Method` to `__all__`": the package's __init__.py, which imports the
    # name, is the answer, not the module defining it nor the files using it most
    uses = "from pkg.methods import Method\n\n\ndef call():\n    return Method().run(Method)  # all of them\n"
    files = {
        "pkg/__init__.py": "from .methods import Method, Other\nfrom .client import call\n\n__all__ = ['Other', 'call']\n",
        "pkg/methods.py": "class Method:\n    pass\n\n\nclass Other:\n    pass\n",
        "pkg/client.py": uses * 4,
        "pkg/server.py": uses * 3,
    }
    idx = _index(tmp_path, files)
    got = L.locate(idx, "Add `Method` to `__all__`", read=_read(files))
    assert got.files[0].path == "pkg/__init__.py" and "lists Method" in got.files[0].why
    # a task not about listing: the definition first, nothing said of listings
    got = L.locate(idx, "`Method` runs twice", read=_read(files))
    assert got.files[0].path == "pkg/methods.py"
    assert not any(w.startswith("lists") for f in got.files for w in f.why)


def test_issue_24_a_table_row_is_where_a_name_is_listed(tmp_path):
    # class 5 through a name table: vim's function table lists "setcellwidths" in a row
    # over two lines; the table and the function it binds come first
    filler = "".join(f"void f{i}(typval_T *argvars) {{\n    list_append(argvars, {i}); /* function list */\n}}\n" for i in range(30))
    files = {
        "src/evalfunc.c": "static funcentry_T global_functions[] = {\n"
        '    {"setbufvar",\t3, 3, FEARG_3,\n\t\t\tret_void,\t f_setbufvar},\n'
        '    {"setcellwidths",\t1, 1, FEARG_1,\n\t\t\tret_void,\t f_setcellwidths},\n};\n',
        "src/mbyte.c": "void f_setcellwidths(typval_T *argvars) {\n    list_T *l = argvars[0].vval.v_list;\n}\n" + filler,
        "src/userfunc.c": "/* the list of user functions: every function, function list */\n" * 6 + filler,
        "src/evalvars.c": "/* functions and the list of functions */\n" * 5,
    }
    idx = _index(tmp_path, files, _analyze_c)
    got = L.locate(idx, "add the setcellwidths() function to the list of functions", read=_read(files))
    assert {f.path for f in got.files[:2]} == {"src/evalfunc.c", "src/mbyte.c"}
    assert "lists setcellwidths" in next(f for f in got.files if f.path == "src/evalfunc.c").why


def test_issue_24_a_generated_file_and_a_stub_come_after_their_sources(tmp_path):
    # class 3: parser.c (Bison's output, its banner says so) names every token many
    # times; parser.y, its source, is where the change is written. A .pyi stub beside
    # its module names every function: the module comes first.
    tokens = "".join(f"  case NUMBER_{i}: /* number literal token */ yylval = number(yytext); break;\n" for i in range(30))
    stub = "".join(f"def frob{i}(x: int) -> int: ...  # frobnicate the number\n" for i in range(20))
    files = {
        "src/parser.c": "/* A Bison parser, made by GNU Bison 3.8.2.  */\n\nint yyparse(void) {\n" + tokens * 3 + "}\n",
        "src/parser.y": "%token NUMBER\n%%\nTerm: NUMBER { $$ = number_literal($1); }\n/* a number literal */\n",
        "pkg/frob.py": "def frob1(x):\n    return x + 1  # frobnicate\n",
        "pkg/frob.pyi": stub,
    }
    idx = _index(tmp_path, files)
    got = L.locate(idx, "Accept a NUMBER literal with a leading dot", read=_read(files))
    order = [f.path for f in got.files]
    assert order.index("src/parser.y") < order.index("src/parser.c")
    assert "generated" in next(f for f in got.files if f.path == "src/parser.c").why
    assert L.rank(idx, T.task_terms("Accept a NUMBER literal with a leading dot"))[0][0].path == "src/parser.c"  # without the lines
    got = L.locate(idx, "frobnicate: frob1 returns the wrong number", read=_read(files))
    order = [f.path for f in got.files]
    assert order.index("pkg/frob.py") < order.index("pkg/frob.pyi")
    # a task about the generated file itself: no penalty
    got = L.locate(idx, "Regenerate the parser for NUMBER literal tokens", read=_read(files))
    assert "generated" not in next(f for f in got.files if f.path == "src/parser.c").why


@pytest.mark.parametrize(
    ("text", "word", "want"),
    [
        ('    {"getrange", getrangeCommand, 4},', "getrange", ["getrangeCommand"]),
        ('  {(cfunction_ptr)f_getpath, "getpath", 2},', "getpath", ["f_getpath"]),
        ('{"GETRANGE", getrangeCommand}', "getrange", ["getrangeCommand"]),
        ('x = getrange("getrange")  # getrange', "getrange", []),  # holds no other name with the word
        ("    getrangeCommand(c);", "getrange", []),  # not a string: no table row
        ('{"get", getCommand}', "get", []),  # too short to mean anything
        ('__all__ = ("Table", "TableStyle", "LongTable")', "table", []),  # strings, not names: no table row
        ('    return "xpassed", ("XPASS", {"yellow": True})\n\ndef f():\n    show_xpassed(lines)\n', "xpassed", []),  # a statement ends
        ('{MAKE_CMD("getrange","Returns a substring. O(N) where N is (the length",GETRANGE_History,getrangeCommand,3)},', "getrange", ["GETRANGE_History", "getrangeCommand"]),
        (
            '    {"setcellwidths",\t1, 1, FEARG_1,\n\t\t\tret_void,\t f_setcellwidths},\n    {"other", f_setcellwidthsx},',
            "setcellwidths",
            ["f_setcellwidths"],
        ),  # a row over two lines, up to its end
    ],
)
def test_mentions_bound(text, word, want):
    from jitctx.locate import mentions

    assert mentions.bound(text, word) == want


@pytest.mark.parametrize(
    ("text", "listed"),
    [
        ("from .methods import Method, Other\n", True),
        ("from .methods import (\n    Other,\n    Method,\n)\n", True),
        ("__all__ = ['Method']\n", True),
        ("__all__ = [\n    'Other',\n    'Method',\n]\n", True),
        ("pub use self::method::Method;\n", True),
        ("export { Method } from './method';\n", True),
        ("registry.register(Method)\n", True),
        ("m = Method()\nreturn Method\n", False),
        ("from .methods import Method\nm = Method()\n", False),  # imported to be used: no list
        ("from .methods import MethodType\n", False),
    ],
)
def test_mentions_lists(text, listed):
    from jitctx.locate import mentions

    assert mentions.lists(text, "Method") is listed


@pytest.mark.parametrize(
    ("text", "name", "declared"),
    [
        ("#define CACHE_LINE_SIZE 64\n", "CACHE_LINE_SIZE", True),
        ("const (\n\tchunkSize int = 100\n)\n", "chunkSize", True),
        ("static final int MAX = 3;\n", "MAX", True),
        ("pub const N: usize = 4;\n", "N", True),
        ("LIMIT = 10\n", "LIMIT", True),
        ("export const chunkSize = 100;\n", "chunkSize", True),
        ("x.chunkSize = 3\n", "chunkSize", False),
        ("if chunkSize == 3 {\n", "chunkSize", False),
        ("#define F(x) (x)\n", "F", False),  # a function-like macro: the outline has it
        ("const x = chunkSize\n", "chunkSize", False),
        ("def run(self):\n    remote_src = self.args.get('remote_src')\n", "remote_src", False),  # a local variable
        ("class Config:\n    MAX_SIZE = 10\n", "MAX_SIZE", True),
        ("var (\n\tdefaultTimeout = 3\n\tother = 4\n)\n", "other", True),
        ("var (\n\ta = 1\n)\nfunc f() {\n\tother = 4\n}\n", "other", False),
    ],
)
def test_mentions_declares(text, name, declared):
    from jitctx.locate import mentions

    assert mentions.declares(text, name) is declared


def test_issue_24_a_constant_the_outline_does_not_see_brings_its_file(tmp_path):
    # class 1 where no definition is outlined: "Increase chunkSize from 100 to 1000": the
    # file declaring the constant comes first, before the files using it most
    uses = "func (c *Cache) Add(items []Item) {\n\tif len(items) > chunkSize {\n\t\tsplit(items, chunkSize) // lock contention\n\t}\n}\n"
    files = {
        "src/constants.go": "package fzf\n\nconst (\n\tchunkSize int = 100\n\tqueryCacheMax int = chunkSize / 5\n)\n",
        "src/cache.go": "package fzf\n\n" + uses * 3,
        "src/chunklist.go": "package fzf\n\n" + uses * 2,
        **{f"src/f{i}.go": f"package fzf\n\nfunc f{i}() int {{ return {i} }}\n" for i in range(8)},
    }
    idx = _index(tmp_path, files)
    got = L.locate(idx, "Increase chunkSize from 100 to 1000 to reduce lock contention", read=_read(files))
    assert got.files[0].path == "src/constants.go" and "defines chunkSize" in got.files[0].why
    assert L.rank(idx, T.task_terms("Increase chunkSize from 100 to 1000 to reduce lock contention"))[0][0].path != "src/constants.go"


def test_mentions_generated():
    from jitctx.locate import mentions

    assert mentions.generated("// Code generated by protoc-gen-go. DO NOT EDIT.\npackage pb\n")
    assert mentions.generated("/* A Bison parser, made by GNU Bison 3.8.2.  */\n")
    assert not mentions.generated("/* the parser: hand-written */\nint parse(void);\n")
    assert not mentions.generated("x = 1\n" * 1000 + "# generated by hand\n")  # only the start is read


def test_vendored_code_comes_after_the_projects_own_unless_named(tmp_path, monkeypatch):
    # another project's code kept in the tree (deps/, vendor/, third_party/) is rarely
    # what a task changes; a task naming it (its folder under deps/) lifts that
    files = {
        "deps/jemalloc/src/arena.c": "void arena_lock(arena_t *arena) {\n    /* mutex usage: take the arena mutex */\n    mutex_lock(&arena->mutex);\n}\n" * 2,
        "src/lazyfree.c": "static pthread_mutex_t lazyfree_mutex;\nvoid lazyfreeFree(void) {\n    /* usage */\n    mutex_lock(&lazyfree_mutex);\n}\n",
        **{f"src/f{i}.c": f"int f{i}(void) {{\n    return {i};\n}}\n" for i in range(10)},
    }
    idx = _index(tmp_path, files)
    assert L.locate(idx, "Simplify the mutex usage", read=_read(files)).files[0].path == "src/lazyfree.c"
    assert L.locate(idx, "jemalloc: simplify the mutex usage", read=_read(files)).files[0].path == "deps/jemalloc/src/arena.c"
    assert not L.vendored("src/deps.c", T.task_terms("mutex")) and L.vendored("vendor/x/y.go", T.task_terms("mutex"))
    monkeypatch.setattr(L, "VENDOR_PRIOR", 1.0)  # without the rule the vendored copy is first
    assert L.locate(idx, "Simplify the mutex usage", read=_read(files)).files[0].path == "deps/jemalloc/src/arena.c"


def test_the_area_a_task_starts_with_weighs_more():
    # "nss: fix the build with http2": the area before the colon is what changes
    terms = T.task_terms("nss: fix compiler error when built with http2")
    assert terms.weights["nss"] == 1 + T.AREA_WEIGHT and terms.weights["compiler"] == 1
    terms = T.task_terms("Curl_wait_for_resolv: correct the timeout")
    assert terms.weights["curlwaitforresolv"] == T.CODE_WEIGHT + T.AREA_WEIGHT
    # no area: a sentence with a colon later, or a long lead-in
    assert T.task_terms("fix the build: nss and http2").weights["nss"] == 1
    assert T.task_terms("when the nss code is built with http2: fix it").weights["nss"] == 1


def test_the_area_brings_its_file_first(tmp_path, monkeypatch):
    files = {
        "lib/vtls/nss.c": "static CURLcode nss_connect(struct connectdata *conn) {\n    return nss_do_connect(conn);\n}\n",
        "lib/multi.c": "/* http2 support: built when http2 is enabled; a compiler error here */\nint http2_init(void) { return http2_setup(); }\n" * 4,
        "lib/http.c": "int http_perform(void) { /* http2 upgrade, compiler error */ return 0; }\n" * 3,
        **{f"lib/f{i}.c": f"int f{i}(void) {{ return {i}; }}\n" for i in range(8)},
    }
    idx = _index(tmp_path, files)
    task = "NSS: fix compiler error when built with the http2 support"
    assert L.locate(idx, task, read=_read(files)).files[0].path == "lib/vtls/nss.c"
    monkeypatch.setattr(taskterms, "AREA_WEIGHT", 0)  # without the rule the file saying the other words most is first
    assert L.locate(idx, task, read=_read(files)).files[0].path == "lib/multi.c"


def test_a_name_made_of_the_repositorys_own_name_is_not_looked_up():
    # "the _pytest package" in pytest: `_pytest` is the project, not a definition to find
    terms = T.task_terms("pytest.mark.hookwrapper is used nowhere in the _pytest package", repo_name="pytest")
    assert terms.names == ("pytest.mark.hookwrapper",)
    assert T.task_terms("the _pytest package", repo_name="other").names == ("_pytest",)


def test_the_ranking_is_the_same_in_every_process():
    # "config" and "configs" are both task words naming config.c: which one covers the
    # name must not depend on the set's order, which changes with each process's hash seed
    import subprocess
    import sys

    code = (
        "from jitctx.locate import evidence as E\n"
        "from jitctx.locate import terms as T\n"
        "t = T.task_terms('rewrite: keep the configs and the config comments')\n"
        "c = [E.Candidate('src/config.c', 1.0, 100, 'source'), E.Candidate('src/rewrite.c', 0.5, 100, 'source')]\n"
        "E.name_bonus(c, t, {w: 1.0 + len(w) / 10 for w in t.weights})\n"
        "print([(x.path, x.named, round(x.bonus, 6)) for x in c])\n"
    )
    seen = {
        subprocess.run([sys.executable, "-c", code], env={**__import__("os").environ, "PYTHONHASHSEED": str(seed)}, capture_output=True, text=True, check=True).stdout
        for seed in range(6)
    }
    assert len(seen) == 1, seen


@pytest.mark.parametrize(
    "text",
    [
        "const " * 300_000,  # a keyword everywhere, no value anywhere
        '{"getrange", ' + '"x' * 300_000,  # a row of unclosed strings
        "from x import " + "a, " * 500_000 + "Method",  # one 2 MB line
        ("chunkSize = 1\n    chunkSize = 2\n" * 100_000),  # the name on every line
        ('{"getrange", getrangeCommand,' + " (" * 1000 + "\n") * 1_000,  # rows that never close
    ],
)
def test_reading_lines_for_names_never_hangs(text):
    # the ranking reads these from files nobody vetted: each read is bounded per match,
    # whatever the lines (these took minutes before the bounds)
    import time

    from jitctx.locate import mentions

    text = text[:2_000_000]  # what the ranking reads of a file at most
    started = time.monotonic()
    mentions.declares(text, "chunkSize"), mentions.bound(text, "getrange"), mentions.lists(text, "Method"), mentions.generated(text)
    assert time.monotonic() - started < 5.0


def test_evidence_shows_a_compound_name_as_the_task_wrote_it(tmp_path):
    """``terms:`` names ``format_to_n`` and ``JPEGLoadingContext``, not their folded index
    terms (``formatton``, ``jpegloadingcontext``), which are in neither text."""
    files = {"src/fmt.py": "def format_to_n(out, n):\n    return JPEGLoadingContext(out)[:n]\n"}
    idx = _index(tmp_path, files)
    got = L.locate(idx, "format_to_n truncates; JPEGLoadingContext is wrong", read=_read(files))
    shown = "; ".join(got.files[0].why)
    assert "format_to_n" in shown and "JPEGLoadingContext" in shown, shown
    assert "formatton" not in shown and "jpegloadingcontext" not in shown, shown
