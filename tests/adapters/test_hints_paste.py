"""Every hint the CLI prints runs as printed (issue 33 item 1, DESIGN section 11).

Each scenario runs a subcommand on a fixture repository so that it prints a
notice, a warning or an error with a hint. From what it printed the test
collects every hint: each ``jitctx ...`` command (run as printed, from the
same working directory: it must be accepted, exit 0 or 1), each ``pass
--flag VALUE`` (added to the call that printed it and run), each other
``--flag`` named (the subcommand must take it), and checks that no hint
line is left in tool-argument syntax (``name=value``) or names a call
without its arguments ("read it with head").
"""

from __future__ import annotations

import re
import shlex

import pytest

from jitctx.adapters.cli import main
from jitctx.adapters.cli.parser import build_parser

# the lines of CLI output that hold hints (the rest is file content, paths, numbers)
_HINT_LINE = re.compile(r"^(?:\[(?:note|truncated|instructions|stale)\] |jitctx: (?:error|warning|note): |  hint: |\[… |.*  # [\d,]+ tokens$|[\d,]+ more matching file)")
_COMMAND = re.compile(r"\bjitctx ([a-z]+)\b")
_TOKEN = re.compile(r"'[^']*'|\"[^\"]*\"|[^\s'\";,()]+")
_TOOL_SYNTAX = re.compile(r"(?<![\w$-])[a-z_]+=(?!=)")
_BARE_CALL = re.compile(r"\b(?:with|use|run) (?:head|tail|glob|grep|outline|symbols|locate|notes)\b(?! \S*=)")
_PASS = re.compile(r"\bpass (--?[a-z][a-z-]*)(?: ('[^']*'|[\w.,/*-]+))?")
_FLAG = re.compile(r"(?<![\w-])(--?[a-z][a-z-]*)\b")


_PROSE = frozenset("or and to then with for in instead if as that is the a from which lists shows finds".split())


def _snake_params() -> re.Pattern:
    """The parameter names with an underscore (the library's and the assembler's): a CLI hint
    names them as flags or not at all."""
    from jitctx import query
    from jitctx.window.assemble import AssembleConfig

    names = {p.name for q in (query.FindQuery, query.SearchQuery, query.HeadQuery, query.TailQuery, query.SymbolsQuery) for p in query.params(q)}
    names |= set(AssembleConfig.__dataclass_fields__) | {"max_tokens", "readme_budget"}
    return re.compile(r"(?<![\w./-])(" + "|".join(sorted(n for n in names if "_" in n)) + r")(?![\w/-])")


_SNAKE = _snake_params()


def _parsers():
    top = build_parser()
    subs = next(a for a in top._subparsers._group_actions).choices  # type: ignore[union-attr]
    return subs


_SUBS = _parsers()


def _takes_value(command: str, flag: str) -> bool | None:
    """Whether ``flag`` of ``command`` takes a value; ``None``: no such option."""
    action = _SUBS[command]._option_string_actions.get(flag)
    return None if action is None else action.nargs != 0


def _positionals(command: str) -> int:
    return sum(1 if a.nargs in (None, "?") else 99 for a in _SUBS[command]._actions if not a.option_strings)


def commands_in(text: str) -> list[list[str]]:
    """Every ``jitctx SUB ...`` in ``text``, as argv (without ``jitctx``), read as far
    as the subcommand's positionals and options go."""
    out = []
    for m in _COMMAND.finditer(text):
        sub = m.group(1)
        if sub not in _SUBS:
            continue
        argv, room, expect_value = [sub], _positionals(sub), False
        rest = text[m.end() :]
        pos = 0
        while True:
            t = re.match(r" (" + _TOKEN.pattern + ")", rest[pos:])
            if not t:
                break
            word = t.group(1)
            if expect_value:
                argv.append(word)
                expect_value = False
            elif word.startswith("-") and len(word) > 1:
                takes = _takes_value(sub, word.rstrip(".:"))
                if takes is None:
                    break  # not one of its options: prose
                argv.append(word.rstrip(".:") if not takes else word)
                expect_value = bool(takes)
            elif room > 0 and word not in _PROSE:
                argv.append(word)
                room -= 1
            else:
                break
            pos += t.end()
        last = argv[-1]
        if not last.startswith("'") and len(last) > 1 and (last.endswith((".", ":")) or (last.endswith("]") and "[" not in last)):
            argv[-1] = last[:-1]  # the sentence's full stop (or the marker's bracket), not the value's
        out.append([shlex.split(w)[0] if w[0] in "'\"" else w for w in argv])
    return out


def hint_lines(out: str, err: str) -> list[str]:
    return [ln for ln in (out + "\n" + err).splitlines() if _HINT_LINE.match(ln)]


def _unquoted(line: str) -> str:
    return re.sub(r"'[^']*'|\"[^\"]*\"", "''", line)


def run(capsys, argv: list[str]) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 2
    out, err = capsys.readouterr()
    return code, out, err


def check_hints(capsys, argv: list[str], out: str, err: str, seen: list[str]) -> None:
    sub = argv[0]
    lines = hint_lines(out, err)
    for line in lines:
        plain = _unquoted(line)
        without_commands = _COMMAND.split(plain)[0]
        assert not _TOOL_SYNTAX.search(without_commands), f"{argv}: tool-argument syntax in a CLI hint: {line!r}"
        assert not _BARE_CALL.search(plain), f"{argv}: a call named without its arguments: {line!r}"
        assert not _SNAKE.search(without_commands), f"{argv}: a parameter named as the library spells it: {line!r}"
        for call in commands_in(line):
            seen.append(" ".join(call))
            code, o, e = run(capsys, call)
            assert code in (0, 1), f"{argv}: the hint {line!r} gave {call}, which exits {code}: {e[-400:]}"
            assert "usage:" not in e
        for m in _PASS.finditer(without_commands):
            flag, value = m.group(1), m.group(2)
            takes = _takes_value(sub, flag)
            assert takes is not None, f"{argv}: {line!r} names {flag}, which jitctx {sub} does not take"
            again = [*argv, flag, *([shlex.split(value)[0]] if takes and value else [])]
            if takes and (not value or value in _PROSE or value.isupper()):
                continue  # "pass --flag" with the value said in words, or a placeholder (--root DIR)
            seen.append(" ".join(again))
            code, _, e = run(capsys, again)
            assert code in (0, 1), f"{argv}: the hint {line!r} made {again}, which exits {code}: {e[-400:]}"
        for m in _FLAG.finditer(without_commands):
            flag = m.group(1)
            if flag in ("--", "-") or re.fullmatch(r"-\d+", flag):
                continue
            assert _takes_value(sub, flag) is not None or flag == "--help", f"{argv}: {line!r} names {flag}, which jitctx {sub} does not take"


def _big(repo, path: str, lines: int = 4000, word: str = "word") -> None:
    repo.write(path, "".join(f"{word} {i} " + "filler " * 8 + "\n" for i in range(lines)))


# (fixture, argv, setup): each prints at least one hint
SCENARIOS = [
    ("basic", ["glob", "*", "--limit", "1"], None),
    ("basic", ["glob", "src"], None),
    ("basic", ["glob", "**/*.rs"], None),
    ("basic", ["glob", "  "], None),
    ("basic", ["glob", "*", "missing-dir"], None),
    ("basic", ["glob", "*", "README.md"], None),
    ("basic", ["glob", "*", "--limit", "0"], None),
    ("basic", ["glob", "**", "--max-tokens", "200"], lambda r: [r.write(f"many/f{i}.txt", "x\n") for i in range(80)]),
    ("basic", ["grep", "a("], None),
    ("basic", ["grep", "zzzzqq"], None),
    ("basic", ["grep", "line", "--limit", "1"], None),
    ("basic", ["grep", "line", "--mode", "content", "--limit", "2"], None),
    ("basic", ["grep", "line", "--offset", "99999"], None),
    ("basic", ["grep", "a\nb"], None),
    ("basic", ["grep", "x", "-g", " "], None),
    ("basic", ["grep", "line", "--mode", "content", "--max-tokens", "200"], None),
    ("basic", ["grep", "line", "-C", "500", "--limit", "1"], None),
    ("basic", ["grep", "line", "--limit", "0"], None),
    ("basic", ["head", "text/numbers.txt", "-n", "5"], None),
    ("basic", ["head", "text/numbers.txt", "--start", "999"], None),
    ("basic", ["head", "text/numbers.txt", "--start", "10", "-n", "2"], None),
    ("basic", ["head", "src"], None),
    ("basic", ["head", "missing.py"], None),
    ("basic", ["head", "data/blob.bin"], None),
    ("basic", ["head", ".env"], None),
    ("basic", ["head", "text/numbers.txt", "-n", "5000"], None),
    ("basic", ["head", "text/numbers.txt", "--max-tokens", "200"], None),
    ("basic", ["head", "README.md", "-n", "0"], None),
    ("basic", ["tail", "text/numbers.txt", "-n", "1"], None),
    ("basic", ["tail", "src"], None),
    ("basic", ["head", "src/app.py", "--symbol", "nothing"], None),
    ("basic", ["head", "README.md", "--symbol", "x"], None),
    ("basic", ["head", "src/util/__init__.py", "--symbol", "x"], None),
    ("basic", ["head", "src/util/helpers.py", "-n", "1"], None),
    ("basic", ["head", "src/app.py", "--symbol", " "], None),
    (
        "code",
        ["head", "twice.py", "--symbol", "run"],
        lambda r: r.write("twice.py", "class A:\n    def run(self):\n        pass\n\n\nclass B:\n    def run(self):\n        pass\n"),
    ),
    ("code", ["head", "rational.py", "--symbol", "Rational.__ad"], None),
    ("code", ["outline", "rational.py", "--limit", "1"], None),
    ("basic", ["outline", "README.md"], None),
    ("basic", ["outline", "src"], None),
    ("basic", ["outline", "src/util/__init__.py"], None),
    ("code", ["symbols", "zzzq"], None),
    ("code", ["symbols", "Rational.", "--limit", "1"], None),
    ("code", ["symbols", "x", "--kind", "bogus"], None),
    ("basic", ["locate", "--task", ""], None),
    ("basic", ["locate", "--task", "greet", "--limit", "1"], None),
    ("basic", ["locate", "--task", "zzqx qqzz"], None),
    ("basic", ["notes", "add", "greet lives in helpers", "--path", "src/util/helpers.py"], None),
    ("basic", ["notes", "list"], lambda r: main(["notes", "add", "one note", "--root", str(r.root)])),
    ("basic", ["notes", "list"], None),
    ("basic", ["notes", "read"], None),
    ("basic", ["notes", "read", "--id", "9"], None),
    ("basic", ["notes", "delete", "--id", "9"], None),
    ("basic", ["notes", "list", "--path", "README.md"], None),
    ("basic", ["notes", "add", "x", "--symbol", "nope"], None),
    ("basic", ["notes", "add"], None),
    ("basic", ["preload", "--budget", "60", "--readme-budget", "20"], None),
    ("basic", ["preload"], lambda r: _big(r, "README.md", 400)),
    ("basic", ["preload", "--budget", "300"], lambda r: _big(r, "AGENTS.md", 400)),
    ("basic", ["preload", "--budget", "-1"], None),
    ("basic", ["context", "--task", ""], None),
    ("basic", ["context", "--task", "greet", "--budget", "100"], None),
    ("basic", ["context", "--task", "make greet shout"], lambda r: _big(r, "README.md", 400)),
    ("code", ["context", "--task", "fix Rational add and the list push in list.c and shapes area", "--budget", "1200"], None),
    ("basic", ["watch", "--timeout", "-1"], None),
    ("basic", ["preload", "--cwd", "missing-dir"], None),
    ("basic", ["grep", "x", "-g", "[", "--limit", "1"], None),
    ("basic", ["glob", "src/[", "--limit", "1"], None),
    ("basic", ["grep", "zzqq", "data"], None),
    ("basic", ["grep", "line", "--mode", "count", "--limit", "1"], None),
    ("basic", ["symbols", "greet", "missing-dir"], None),
    ("basic", ["tail", "debug.log", "-n", "5000"], None),
    ("basic", ["head", "text/link-to-app.py", "-n", "1"], None),
    ("basic", ["head", "my notes.txt", "-n", "1"], lambda r: r.write("my notes.txt", "one\ntwo\nthree\n")),
    ("rules_all", ["head", "svc/api.py", "-n", "1"], None),  # path-scoped rules of other agents' formats, delivered
    ("rules_all", ["preload", "--formats", "bogus"], None),
    ("basic", ["head", "src/util/helpers.py", "-n", "1"], lambda r: _big(r, "src/util/AGENTS.md", 400)),  # a nested file's cut marker
    ("basic", ["glob", "*", "--root", "/"], None),
    ("basic", ["glob", "*", "--root", ""], None),
    ("basic", ["glob", "*", "--root", "/nonexistent-jitctx"], None),
]


@pytest.mark.parametrize("fixture,argv,setup", SCENARIOS, ids=[" ".join(s[1])[:60] for s in SCENARIOS])
def test_issue_33_every_cli_hint_runs_as_printed(make_repo, capsys, monkeypatch, fixture, argv, setup):
    repo = make_repo(fixture)
    monkeypatch.chdir(repo.root)
    if setup is not None:
        setup(repo)
        capsys.readouterr()
    code, out, err = run(capsys, argv)
    lines = hint_lines(out, err)
    assert lines, f"{argv} printed no hint: {out[-300:]!r} {err[-300:]!r}"
    seen: list[str] = []
    check_hints(capsys, argv, out, err, seen)


def test_issue_33_a_hint_from_a_subfolder_names_paths_from_there(make_repo, capsys, monkeypatch):
    repo = make_repo("basic")
    monkeypatch.chdir(repo.root / "src")
    code, out, err = run(capsys, ["head", "util/helpers.py", "-n", "1"])
    assert "jitctx head util/helpers.py --start 2" in out
    seen: list[str] = []
    check_hints(capsys, ["head", "util/helpers.py", "-n", "1"], out, err, seen)
    assert seen


def test_issue_33_session_hints_run_as_printed(make_repo, capsys, monkeypatch):
    """A session's re-read notes name the call that shows the lines again."""
    from jitctx import Workspace
    from jitctx.adapters.cliview import CliView
    from jitctx.render import render_text

    repo = make_repo("code")
    monkeypatch.chdir(repo.root)
    view = CliView()
    with Workspace(repo.root) as ws:
        ws.view = view
        texts = []
        for call in (lambda: ws.head("rational.py", n=5), lambda: ws.tail("list.c", n=3), lambda: ws.outline("rational.py")):
            call()
            texts.append(render_text(call(), view=view))
    seen: list[str] = []
    for text in texts:
        assert "unchanged" in text or "not repeated" in text, text
        for call in commands_in(text):
            seen.append(" ".join(call))
            code, _, err = run(capsys, call)
            assert code in (0, 1), (call, err)
    assert len(seen) == 3 and all("--force" in s for s in seen)


@pytest.mark.parametrize(
    "text,argv",
    [
        ("read on with jitctx head src/app.py --start 68.", ["head", "src/app.py", "--start", "68"]),
        ("read it with jitctx notes read --id 3; list them", ["notes", "read", "--id", "3"]),
        ("add one with jitctx notes add 'what to remember'", ["notes", "add", "what to remember"]),
        ("e.g. jitctx locate --task 'retry timeout' or", ["locate", "--task", "retry timeout"]),
        ("list it with jitctx glob 'src/**'.", ["glob", "src/**"]),
    ],
)
def test_issue_33_commands_are_read_out_of_prose(text, argv):
    assert commands_in(text) == [argv]
