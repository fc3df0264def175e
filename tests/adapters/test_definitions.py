"""Issue 35: one definition per primitive (``jitctx.query``), from which every surface derives.

A primitive's Query class holds its name, descriptions and fields (type, default,
description, bounds, flags); the tool schemas in every format, the MCP tool list, the
tool-call checks, the Python API's checks and the CLI's options all come from it, and
the checks run through one validator (``query.check``), worded per surface.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

import pytest

from jitctx import query
from jitctx.adapters import cli, tools
from jitctx.errors import QueryError
from jitctx.query import PRIMITIVES, FindQuery, arg, params


@dataclass(frozen=True, slots=True)
class _Probe(FindQuery):
    """glob with one more field: the definition a surface must follow."""

    name = "probe"
    summary = "a glob that also takes a depth"
    description = 'Probe. Example: {"pattern": "*"}'
    depth: int = arg("how many folders down", 3, flags=("--depth",), minimum=1, metavar="N")


def _schemas(monkeypatch) -> dict[str, dict]:
    monkeypatch.setitem(tools.TOOLS, "probe", tools._spec(_Probe))
    out = {}
    for fmt in tools.FORMATS:
        (entry,) = [t for t in tools.export_schemas(fmt) if (t.get("function") or t).get("name") == "probe"]
        out[fmt] = entry.get("function", {}).get("parameters") or entry.get("parameters") or entry["input_schema"]
    return out


def test_issue_35_a_field_added_to_a_definition_reaches_every_schema_and_check(monkeypatch):
    schemas = _schemas(monkeypatch)
    want = {"type": "integer", "minimum": 1, "description": "how many folders down"}
    assert schemas["openai"]["properties"]["depth"] == {**want, "default": 3}
    assert schemas["anthropic"]["properties"]["depth"] == {**want, "default": 3}
    assert schemas["openai-responses"]["properties"]["depth"] == {**want, "type": ["integer", "null"]}
    assert "depth" in schemas["openai-responses"]["required"] and "depth" not in schemas["openai"]["required"]
    # the tool call's check and the Python API's: the same rule, each surface's words
    with pytest.raises(QueryError) as tool_err:
        tools.parse_arguments("probe", {"pattern": "*", "depth": 0})
    assert tool_err.value.to_dict() == {
        "type": "query_error",
        "message": "probe: depth must be at least 1, got 0",
        "hint": "pass depth >= 1",
        "field": "depth",
        "tool": "probe",
    }
    with pytest.raises(QueryError) as api_err:
        _Probe.make(pattern="*", depth=0)
    assert (api_err.value.message, api_err.value.hint) == ("depth must be at least 1, got 0", "pass depth>=1")
    assert tools.parse_arguments("probe", {"pattern": "*", "depth": 7.0})[1]["depth"] == 7  # a whole JSON number
    assert _Probe.make(pattern="*", depth=7).depth == 7
    # the CLI's option
    p = argparse.ArgumentParser()
    cli.parser.query_options(p, _Probe)
    assert p.parse_args(["*", "--depth", "5"]).depth == 5 and "how many folders down (default 3)" in p.format_help()


def test_issue_35_the_mcp_tool_list_follows_the_definitions(monkeypatch):
    pytest.importorskip("mcp")
    from jitctx.adapters.mcp import tool_list

    schemas = _schemas(monkeypatch)
    listed = {t.name: t for t in tool_list()}
    assert listed["probe"].input_schema == schemas["anthropic"] and listed["probe"].description == _Probe.description
    assert [n for n, t in listed.items() if not t.annotations.read_only_hint] == [q.name for q in PRIMITIVES if q.writes] == ["notes"]


def test_issue_35_the_tools_are_the_primitives_in_order():
    assert list(tools.TOOLS) == [q.name for q in PRIMITIVES] == list(cli.parser.PRIMITIVE_COMMANDS)
    for q in PRIMITIVES:
        spec = tools.TOOLS[q.name]
        assert spec.description == q.description and q.summary
        taken = [p.name for p in (*spec.params, *spec.unlisted)]
        assert sorted(taken) == sorted([p.name for p in params(q)] + ["max_tokens"])
        assert ("max_tokens" in [p.name for p in spec.params]) == q.capped


_BAD = (None, "x", 1.5, True, [], {}, -1, 0, ["a", 1], "a" * (query.MAX_STRING + 1))


@pytest.mark.parametrize("q", PRIMITIVES, ids=lambda q: q.name)
def test_issue_35_one_validator_refuses_on_both_surfaces(q):
    """What a tool call's check refuses, the Python API refuses too (the tool's check is
    the schema's part of the same rules: sizes of strings and lists are its own)."""
    spec = tools.TOOLS[q.name]
    fields = {p.name: p for p in params(q)}
    good = {"glob": {"pattern": "*"}, "grep": {"pattern": "x"}, "symbols": {"query": "x"}, "locate": {"task": "x"}, "notes": {"action": "list"}}.get(q.name, {"path": "a"})
    for p in spec.params:
        if p.name not in fields:
            continue
        for value in _BAD:
            if value is None or (isinstance(value, (str, list)) and p.kind in ("str", "strs") and not p.arg.choices):
                continue  # null is the default; strings and lists of the right type: sizes are the tool's own limit
            try:
                tools.parse_arguments(q.name, {**good, p.name: value})
            except QueryError as exc:
                assert exc.fields["field"] == p.name and exc.message.startswith(f"{q.name}: {p.name} ")
                with pytest.raises(QueryError) as api:
                    q.make(**{**good, p.name: value})
                assert api.value.fields.get("field") == p.name, (q.name, p.name, value)


class _Recorder:
    """A Workspace stand-in: records which method a CLI call runs, with what."""

    def __init__(self, root) -> None:
        self.root = root
        self.calls: list[tuple[str, dict]] = []

    def __getattr__(self, name: str):
        from jitctx.refs import Result

        def run(**kwargs):
            self.calls.append((name, kwargs))
            return Result(tool=name)

        return run


@pytest.mark.parametrize(
    ("argv", "method", "given"),
    [
        (["glob", "*.py", "src", "--limit", "5"], "glob", {"pattern": "*.py", "path": "src", "limit": 5}),
        (["grep", "def", "-g", "*.py", "-C", "2"], "grep", {"pattern": "def", "path": "src", "glob": ["*.py"], "context": 2}),
        (["head", "app.py", "--start", "3"], "head", {"path": "src/app.py", "start": 3}),
        (["tail", "app.py", "-n", "4"], "tail", {"path": "src/app.py", "n": 4}),
        (["outline", "app.py"], "outline", {"path": "src/app.py"}),
        (["symbols", "main", "--kind", "function"], "symbols", {"query": "main", "path": "src", "kind": "function"}),
        (["locate", "--task", "fix it"], "locate", {"task": "fix it"}),
        (["notes", "add", "remember", "--path", "app.py"], "notes", {"action": "add", "text": "remember", "paths": ["src/app.py"]}),
    ],
)
def test_issue_35_the_cli_runs_every_primitive_through_one_path(tmp_path, monkeypatch, capsys, argv, method, given):
    """Each primitive's subcommand is the one table-driven command: its definition's fields
    as keywords to the Workspace's method of its name, paths from the working directory."""
    from jitctx.adapters.cli import commands

    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("x\n")
    ws = _Recorder(tmp_path)
    monkeypatch.setattr(commands, "workspace", lambda args, caller: ws)
    monkeypatch.chdir(tmp_path / "src")
    assert commands.COMMANDS[argv[0]] is commands.primitive
    assert cli.main([*argv, "--json"]) == 1  # an empty Result: nothing found
    ((name, kwargs),) = ws.calls
    assert name == method and kwargs["max_tokens"] is None
    assert {k: kwargs[k] for k in given} == given
    assert '"tool": "' + method + '"' in capsys.readouterr().out


def test_issue_35_a_hint_pastes_as_the_cli_parses_it():
    """The CLI's view of a hint puts a primitive's positional arguments where the parser takes
    them: both come from the definitions (no table of the CLI's own to keep in step)."""
    from jitctx.adapters.cli.parser import build_parser, subparser
    from jitctx.adapters.cliview import CliView, _patterns

    for q in PRIMITIVES:
        sub = subparser(build_parser(q.name), q.name)
        parsed = tuple(a.dest for a in sub._actions if not a.option_strings and a.dest != "help")
        assert _patterns().positional[q.name] == parsed, q.name
    hint = "read on with grep pattern=greet path=src ignore_case=true"
    assert CliView().hint(hint) == "read on with jitctx grep greet src --ignore-case"
