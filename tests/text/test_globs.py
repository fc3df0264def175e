"""Pure matching: globs (against pathspec's gitignore semantics), braces, deny names, literal scans."""

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jitctx.errors import QueryError
from jitctx.text.globs import DenyRules, compile_glob, entries_containing, expand_braces, glob_suffix, literal_run


@pytest.mark.parametrize(
    "pattern,path,hit",
    [
        ("*.py", "a.py", True),
        ("*.py", "src/a.py", True),  # no slash: any depth, as in .gitignore
        ("src/*.py", "src/a.py", True),
        ("src/*.py", "src/sub/a.py", False),  # '*' does not cross '/'
        ("**/*.py", "a.py", True),  # '**/' matches zero directories
        ("**/*.py", "x/y/z/a.py", True),
        ("src/**/*.py", "src/a.py", True),
        ("src/**", "src/x/y.txt", True),
        ("docs/", "docs/guide.md", True),
        ("*.PY", "a.py", False),
        ("[ab].py", "b.py", True),
        ("src", "src/a.py", False),  # a glob names files, not a directory prefix
    ],
)
def test_compile_glob(pattern, path, hit):
    assert (compile_glob(pattern).match(path) is not None) is hit


def test_compile_glob_ignore_case_and_bad_patterns():
    assert compile_glob("*.PY", True).match("a.py")
    with pytest.raises(QueryError, match="'!x'"):
        compile_glob("!x")


@pytest.mark.parametrize(
    "pattern,expanded",
    [
        ("*.{ts,tsx}", ["*.ts", "*.tsx"]),
        ("{src,lib}/**/*.{js,mjs}", ["src/**/*.js", "src/**/*.mjs", "lib/**/*.js", "lib/**/*.mjs"]),
        ("a{b,{c,d}}e", ["abe", "ace", "ade"]),
        ("{x}", ["{x}"]),
        ("plain/*.py", ["plain/*.py"]),
    ],
)
def test_expand_braces(pattern, expanded):
    assert expand_braces(pattern) == expanded


def test_brace_globs_match_either_choice():
    rx = compile_glob("src/**/*.{ts,tsx}")
    assert rx.match("src/a/b.tsx") and rx.match("src/b.ts") and not rx.match("src/b.js")


def test_brace_alternatives_are_linear_not_expanded():
    pattern = "{a,b}" * 18 + "*.py"  # 262,144 globs if expanded
    rx = compile_glob(pattern)
    assert rx.match("ab" * 9 + "x.py") and not rx.match("c" + "a" * 17 + "x.py")
    assert len(rx.pattern) < 40 * 18


def test_expansion_is_bounded_with_a_clear_error():
    with pytest.raises(QueryError, match="more than 1,024 globs"):
        expand_braces("{a,b,c,d}" * 10)
    with pytest.raises(QueryError, match="more than 1,024 globs"):
        compile_glob("{a/x,b/y}" * 11)  # choices holding '/' anchor differently: these do expand
    with pytest.raises(QueryError, match="the limit is 4,096"):
        compile_glob("a" * 5000)


def test_bad_globs_are_query_errors_naming_the_pattern():
    for bad in ("foo\\", "[z-a]", "!x", "#comment"):
        with pytest.raises(QueryError, match="invalid glob"):
            compile_glob(bad)


def test_glob_suffix():
    assert glob_suffix("**/*.py") == ".py" and glob_suffix("*.md") == ".md"
    assert glob_suffix("src/*.py") is None and glob_suffix("*.{ts,tsx}") is None and glob_suffix("*.py", ignore_case=True) is None


def test_deny_rules_match_base_names_and_allow_wins():
    rules = DenyRules((".env", ".env.*", "*.pem"), ("*.example",))
    assert rules.is_denied(".env") and rules.is_denied("deep/dir/.env.local") and rules.is_denied("k/server.pem")
    assert not rules.is_denied(".env.example") and not rules.is_denied("envelope.txt")


def test_entries_containing_works_on_str_and_bytes():
    assert entries_containing("a/.env\0b/x.py\0c/.env.local", [".env"], "\0") == ["a/.env", "c/.env.local"]
    assert entries_containing(b"x\0yy\0zyy", [b"yy"], b"\0") == [b"yy", b"zyy"]
    assert literal_run("*.pem") == ".pem" and literal_run("id_rsa*") == "id_rsa"


# pathspec's gitignore translation is the reference for brace-free globs
_SEG = st.sampled_from(["a", "b", "*", "?", "**", "*.py", "x?", "[ab]", "[!a]c", "d*e", ".h"])
_GLOB = st.lists(_SEG, min_size=1, max_size=4).map("/".join).flatmap(lambda g: st.sampled_from([g, "/" + g, g + "/", "**/" + g]))
_PATH = st.lists(st.sampled_from(["a", "b", "c", "x1", "a.py", "ac", "bc", "dxe", ".h", "q"]), min_size=1, max_size=5).map("/".join)


def _reference(pattern: str):
    from pathspec.patterns.gitignore.basic import GitIgnoreBasicPattern

    regex, include = GitIgnoreBasicPattern.pattern_to_regex(pattern)
    if regex is None or not include or regex == "/":
        return None  # "/" ('*/', '**/'): pathspec's form matches nothing with re.match; git means every folder
    if regex.endswith("(?:/|$)"):
        regex = regex[: -len("(?:/|$)")] + "$"
    return re.compile(regex)


@settings(max_examples=400, deadline=None)
@given(pattern=_GLOB, paths=st.lists(_PATH, min_size=1, max_size=8))
def test_globs_match_as_pathspec_gitignore_patterns_do(pattern, paths):
    ref = _reference(pattern)
    if ref is None:
        return
    ours = compile_glob(pattern)
    for p in paths:
        assert (ours.match(p) is not None) == (ref.match(p) is not None), (pattern, p)


def test_issue_12_deny_names_match_in_any_case_and_deny_a_folder_of_that_name():
    rules = DenyRules((".env", ".env.*", "*.pem", "*.key"), ("*.example",))
    assert rules.is_denied(".ENV") and rules.is_denied("a/.Env") and rules.is_denied("KEY.PEM") and rules.is_denied("x/Server.Key")
    assert rules.is_denied(".env/config.txt") and rules.is_denied("deep/.ENV/x/y.py")
    assert not rules.is_denied(".ENV.EXAMPLE") and not rules.is_denied("envs/x.txt")
