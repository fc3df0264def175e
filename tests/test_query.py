"""Queries: each parameter defined once, validated the same way on every surface."""

import pytest

from jitctx.errors import QueryError
from jitctx.query import FindQuery, HeadQuery, SearchQuery, TailQuery, params

# -- SearchQuery ---------------------------------------------------------------------


def test_query_defaults():
    q = SearchQuery.make(pattern="x")
    assert q == SearchQuery(
        pattern="x",
        path=".",
        glob=(),
        ignore_case=False,
        fixed_strings=False,
        multiline=False,
        before=0,
        after=0,
        mode="files",
        limit=100,
        offset=0,
        include_ignored=False,
        backend="auto",
        timeout=20.0,
    )


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"pattern": ""}, "pattern is empty"),
        ({"pattern": 3}, "pattern must be a string, got 3"),
        ({"pattern": "a\nb"}, "pattern 'a\\nb' contains a line break, which never matches line by line"),
        ({"mode": "lines"}, "mode must be one of files, content, count; got 'lines'"),
        ({"limit": 0}, "limit must be at least 1, got 0"),
        ({"limit": True}, "limit must be an integer, got True"),
        ({"offset": -1}, "offset must be at least 0, got -1"),
        ({"context": "2"}, "context must be an integer, got '2'"),
        ({"backend": "grep"}, "backend must be one of auto, rg, python; got 'grep'"),
        ({"timeout": 0}, "timeout must be a number of seconds in (0, 600], got 0"),
        ({"glob": ["\\"]}, "invalid glob '\\\\': it ends with a lone backslash"),
        ({"glob": [""]}, "glob filter '' is empty or not a string"),
        ({"ignore_case": "yes"}, "ignore_case must be true or false, got 'yes'"),
        ({"path": 5}, "path must be a string, got 5"),
    ],
)
def test_query_rejects_bad_values(kwargs, message):
    pattern = kwargs.pop("pattern", "x")
    with pytest.raises(QueryError) as exc:
        SearchQuery.make(pattern=pattern, **kwargs)
    assert exc.value.message == message


def test_query_whitespace_pattern_is_valid_and_context_fills_both_sides():
    q = SearchQuery.make(pattern="  ", context=2, after=5)
    assert (q.pattern, q.before, q.after) == ("  ", 2, 5)


def test_query_limit_is_clamped_with_a_notice():
    q = SearchQuery.make(pattern="x", limit=50_000)
    assert q.limit == 10_000
    assert q.notice == "limit=50000 is above the maximum; clamped to 10,000."


def test_query_multiline_allows_line_breaks_and_glob_string_is_one_glob():
    q = SearchQuery.make(pattern="a\nb", multiline=True, glob="*.py")
    assert q.glob == ("*.py",)


def test_unknown_and_missing_arguments_are_named():
    with pytest.raises(QueryError, match="unknown argument 'colour'"):
        FindQuery.make(pattern="*", colour=1)
    with pytest.raises(QueryError, match="missing required argument 'path'"):
        HeadQuery.make()


def test_every_parameter_is_defined_once_with_a_description():
    for cls in (FindQuery, SearchQuery, HeadQuery, TailQuery):
        ps = params(cls)
        assert ps and all(p.arg.doc for p in ps)
        assert len({p.name for p in ps}) == len(ps)
    assert [p.name for p in params(TailQuery)] == ["path", "n", "force", "diff"]
    assert next(p for p in params(SearchQuery) if p.name == "context").nullable


def test_head_clamps_n_with_a_notice_and_refuses_a_bad_start():
    q = HeadQuery.make(path="a", n=5000)
    assert (q.n, q.notice) == (2000, "n=5000 is above the maximum; clamped to 2,000.")
    with pytest.raises(QueryError, match="start must be at least 1"):
        HeadQuery.make(path="a", start=0)


def test_a_glob_pattern_is_stripped_of_a_leading_dot_slash():
    assert FindQuery.make(pattern=" ./src/*.py ").pattern == "src/*.py"
    assert FindQuery.make(pattern="*", path=None).path == "."


def test_issue_15_context_lines_above_the_maximum_are_clamped_with_a_notice():
    q = SearchQuery.make(pattern="x", before=101)
    assert q.before == 100 and q.notice == "before=101 is above the maximum; clamped to 100."
