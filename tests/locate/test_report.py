"""Reading an issue report (jitctx.locate.report) and turning it into terms (jitctx.locate.terms): issue 31.

The reports are ``fixtures_repo/reports/*.md``, written as users file them:
a traceback after an IPython banner, an environment dump, a pip freeze and
a long log; an error message; an option; a config key; JavaScript, Java, Go
and Rust traces.
"""

from __future__ import annotations

import pytest
from conftest import FIXTURES

from jitctx.locate import answer as A
from jitctx.locate import evidence as E
from jitctx.locate import pointers as P
from jitctx.locate import rank as L
from jitctx.locate.report import Frame, read_report
from jitctx.locate.terms import KIND_BUDGET, MAX_TERMS, task_terms

REPORTS = FIXTURES / "reports"


def _report(name: str) -> str:
    return (REPORTS / name).read_text()


def test_issue_31_python_traceback_frames_innermost_first():
    r = read_report(_report("python-traceback.md"))
    assert r.frames[0] == Frame("/home/ana/.venv/lib/python3.11/site-packages/shop/pricing.py", 9, "apply_discount", "python", 0)
    assert [f.function for f in r.frames] == ["apply_discount", "total", None]  # ``<module>`` is no function
    assert "'spring'" in r.messages[0] or r.messages[0] == "'spring'"


@pytest.mark.parametrize(
    ("name", "first"),
    [
        ("javascript-trace.md", Frame("web/checkout.js", 4, "readQuantity", "js", 0)),
        ("java-trace.md", Frame("jdk/internal/util/Preconditions.java", 64, "outOfBounds", "java", 0)),
        ("go-trace.md", Frame("/home/ana/src/shop/go/ledger/ledger.go", 8, "Last", "go", 0)),
        ("rust-panic.md", Frame("rust/src/stock.rs", 8, None, "rust", 0)),
    ],
)
def test_issue_31_frames_of_other_languages(name, first):
    r = read_report(_report(name))
    assert r.frames[0] == first
    if name == "java-trace.md":
        assert Frame("com/shop/Invoice.java", 13, "lineAt", "java", 3) in r.frames


def test_issue_31_boilerplate_is_recognised_and_said():
    text = _report("python-traceback.md")
    r = read_report(text)
    what = {w for _a, _b, w in r.boilerplate}
    assert {"environment", "package versions", "a banner", "a long log", "template"} <= what
    t = task_terms(text)
    # the dump's and the log's words are capped (``platform``, ``numpy``, ``installed``), the frames' kept
    assert sum(1 for k in t.kinds.values() if k == "boilerplate") <= KIND_BUDGET["boilerplate"]
    assert t.kinds.get("pricing") == "frame" and t.kinds.get("applydiscount") == "frame"
    assert t.weak_left > 0
    notes = A.task_notes(text, t)
    assert any(n.startswith("read as boilerplate, weighing little") and "(environment)" in n for n in notes)


def test_issue_31_a_long_report_keeps_its_frames_wherever_they_sit():
    text = _report("python-traceback.md")
    assert text.index("pricing.py") > 6500  # past what the first 48 terms used to reach
    padded = text.replace("The platform log", " ".join(f"extra{i}word" for i in range(400)) + "\n\nThe platform log")
    t = task_terms(padded)
    assert len(t.weights) == MAX_TERMS and t.cut
    assert "pricing" in t.weights and "applydiscount" in t.weights


def test_issue_31_messages_options_paths():
    r = read_report(_report("python-message.md"))
    assert r.messages == ("quantity must be positive, got 0",)
    assert P.constant_run(r.messages[0]) == "quantity must be positive, got"
    assert P.constant_run("Invalid value 'x' for field 3 of the form") == "Invalid value"  # the longest run no variable part breaks
    assert read_report(_report("option.md")).options == ("--max-items",)
    assert read_report(_report("config-key.md")).options[0] == "tax_rate"
    r = read_report("see `src/walk.rs` and astroid.brain.brain_numpy, and import dayjs/plugin/relativeTime")
    assert r.paths == ("src/walk.rs", "dayjs/plugin/relativeTime", "astroid.brain.brain_numpy")


def test_issue_31_word_forms():
    t = task_terms("Add a `notes` option; see test.py and src/walk.rs, run with --notes")
    assert "notes" in t.weights  # a stop word as written in backticks or an option stays
    assert "py" not in t.weights and "rs" not in t.weights  # a file's extension is no term
    assert t.kinds["walk"] == "path"


def test_issue_31_exception_title_is_no_area():
    t = task_terms("TypeError: 'NoneType' object is not subscriptable in schema.load")
    assert t.weights["typeerror"] == 3  # code-like, not an area's 3 + 2


def test_issue_31_two_words_the_code_writes_as_one(tmp_path):
    from test_locate import _index, _read

    files = {
        "src/manpage.c": "static void write_manpage(FILE *out) { fputs(manpage_text, out); }\n",
        "src/output.c": "/* a page of output, one man at a time */\nint page_count(int man) { return man + page; }\n" * 3,
        **{f"src/other{i}.c": f"int other{i}(void) {{ return {i}; }}\n" for i in range(8)},
    }
    idx = _index(tmp_path, files)
    got = L.locate(idx, "the man page lacks the new flag", read=_read(files))
    assert got.terms.weights.get("manpage") == 2 and got.files[0].path == "src/manpage.c"


def test_issue_31_a_folder_names_its_entry_file():
    words = {"quarterofyear": "quarterofyear"}
    assert E.names_file("src/plugin/quarterOfYear/index.js", words) == ("quarterOfYear", ["quarterofyear"])
    assert E.names_file("src/plugin/quarterOfYear/utils.js", words) is None


def test_issue_31_a_backticked_phrase_is_no_row_of_names():
    t = task_terms("Running `pylint src while import fails` stops with `load_module`")
    assert "load_module" in t.names and not {"while", "import", "src"} & set(t.names)
    assert "while" not in t.weights and t.kinds["pylint"] == "tick"
