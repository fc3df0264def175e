"""An issue report read for its structure: traceback frames, messages, options, paths, code, prose, boilerplate.

Owns ``read_report``: what each part of a task's text is, before any word of
it becomes a search term. A report is not a bag of words (DESIGN section
10): its traceback frames name files, lines and functions, innermost first;
an error message usually exists verbatim in the source; an option or a
config key is defined in one place; identifiers in a code block or in
backticks are names; an environment dump, a version list, an issue
template's headings or a long log are boilerplate. Pure text in, values out:
no index, no file is read. Does not own turning the parts into weighted
terms (``taskterms``) nor finding the files they point at (``locate``).

Each character of the report gets one kind (``Span``): ``frame`` (a
traceback's frame line), ``message`` (an error or warning line, a quoted
sentence), ``code`` (a code block or backticks), ``output`` (a block of
program output or a log), ``boilerplate`` (environment, versions, template
headings, a banner), ``title`` (the first line), else ``prose``.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

__all__ = ["KINDS", "OPTION", "PATH", "Frame", "Report", "Span", "read_report"]

# Strongest first: the order a term's kinds are compared in, and the order of the budget.
KINDS = ("frame", "message", "option", "path", "tick", "title", "code", "prose", "output", "boilerplate")
MAX_FRAMES = 64  # frames kept per report (a recursion's thousand frames say no more than its first)
MAX_MESSAGES = 12
MAX_PATHS = 16
MAXOPTIONS = 12
LONG_OUTPUT = 25  # lines: a code block of output longer than this is a log (boilerplate but its error lines)


@dataclass(frozen=True, slots=True)
class Frame:
    """One frame of a traceback: ``path`` as the report writes it (a Java frame's
    path is made from its class: ``com/foo/Bar.java``), ``line`` (None when not
    given), ``function`` (the last part of a qualified name), ``language``
    (python, js, java, go, rust), ``depth`` (0 for the innermost frame of its trace)."""

    path: str
    line: int | None
    function: str | None
    language: str
    depth: int


@dataclass(frozen=True, slots=True)
class Span:
    """Characters ``start``..``end`` of the report are of ``kind`` (``KINDS``)."""

    start: int
    end: int
    kind: str


@dataclass(frozen=True, slots=True)
class Report:
    """A report's parts. ``frames``: every trace's frames, each trace innermost
    first; ``messages``: error lines and quoted sentences, as written (their
    literal text is looked for in the source); ``options``: command-line options
    and config keys (``--ignore-paths``, ``rst_prolog``); ``paths``: file paths and
    module names as written (``src/walk.rs``, ``astroid.brain.brain_numpy``);
    ``spans``: what each part of the text is; ``boilerplate``: the boilerplate
    blocks, as ``(first line, last line, what)``, 1-based, for the notice."""

    frames: tuple[Frame, ...] = ()
    messages: tuple[str, ...] = ()
    options: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    spans: tuple[Span, ...] = ()
    boilerplate: tuple[tuple[int, int, str], ...] = ()

    def kind_at(self, at: int) -> str:
        """The kind of the character at offset ``at`` (prose where no span says)."""
        lo, hi = 0, len(self.spans)
        while lo < hi:
            mid = (lo + hi) // 2
            if self.spans[mid].end <= at:
                lo = mid + 1
            else:
                hi = mid
        if lo < len(self.spans) and self.spans[lo].start <= at:
            return self.spans[lo].kind
        return "prose"


# -- traceback frames ------------------------------------------------------------------

_PY_FRAME = re.compile(r'^\s*File "(?P<path>[^"\n]+)", line (?P<line>\d+)(?:, in (?P<func>[\w<>.]+))?')
_PYTEST_FRAME = re.compile(r"^(?P<path>[\w./\\-]+\.py):(?P<line>\d+):(?: in (?P<func>[\w<>]+))?")
_JS_FRAME = re.compile(r"^\s*at (?:(?:async |new )?(?P<func>[^\s(]+) )?\(?(?P<path>(?:[a-z-]+:/+|[A-Za-z]:)?[^\s():]+?\.(?:[cm]?[jt]sx?|vue|svelte)):(?P<line>\d+)(?::\d+)?\)?\s*$")
_JS_FRAME_FF = re.compile(r"^\s*(?P<func>[\w$.<>/]*)@(?P<path>\S+?\.(?:[cm]?[jt]sx?)):(?P<line>\d+)(?::\d+)?\s*$")
_JAVA_FRAME = re.compile(r"^\s*at (?:[\w.$@-]+/)?(?P<qual>[\w$.]+)\.(?P<func>[\w$<>]+)\((?P<file>[\w$]+\.(?:java|kt|scala|groovy)):(?P<line>\d+)\)")
_GO_FUNC = re.compile(r"^(?P<qual>[\w./-]+(?:\.\(\*?[\w]+\))?\.[\w.]+)\(.*\)\s*$")
_GO_PATH = re.compile(r"^\s+(?P<path>\S+\.go):(?P<line>\d+)(?: \+0x[0-9a-f]+)?\s*$")
_RUST_FUNC = re.compile(r"^\s*\d+:\s+(?:0x[0-9a-f]+ - )?(?P<qual>[\w:<>\[\]{} ,&*'$.#-]+?)(?:::h[0-9a-f]{16})?\s*$")
_RUST_AT = re.compile(r"^\s+at (?P<path>\S+?\.rs):(?P<line>\d+)(?::\d+)?\s*$")
_RUST_PANIC = re.compile(r"panicked at (?:'(?P<msg>[^\n]*)', )?(?P<path>[^\s:']+\.rs):(?P<line>\d+)(?::\d+)?:?")


def _strong(line: str, *names: str | None) -> list[tuple[int, int]]:
    """Where ``names`` (a frame's file name, its function) sit in ``line``: the words of a frame line that are evidence."""
    out = []
    for name in names:
        if name and (at := line.rfind(name)) != -1:
            out.append((at, at + len(name)))
    return out


def _frames(lines: list[str]) -> tuple[list[Frame], dict[int, list[tuple[int, int]]]]:
    """The frames of every trace in ``lines``, each trace innermost first, and the lines that
    are frames, each with where its file name and function sit (the rest of the line is not evidence)."""
    out: list[Frame] = []
    marked: dict[int, list[tuple[int, int]]] = {}
    trace: list[Frame] = []  # the current trace, in the report's order
    outer_first = False  # Python prints the innermost frame last

    def close() -> None:
        nonlocal trace
        ordered = list(reversed(trace)) if outer_first else trace
        out.extend(Frame(f.path, f.line, f.function, f.language, depth) for depth, f in enumerate(ordered))
        trace = []

    go_func: str | None = None
    rust_func: str | None = None
    for i, raw in enumerate(lines):
        line = raw.rstrip()
        got: Frame | None = None
        if m := _PY_FRAME.match(line):
            got, lang = Frame(m["path"], int(m["line"]), _last(m["func"]), "python", 0), "python"
        elif m := _JAVA_FRAME.match(line):
            package = m["qual"].rsplit(".", 1)[0].replace(".", "/") if "." in m["qual"] else ""
            path = f"{package}/{m['file']}" if package else m["file"]
            got, lang = Frame(path, int(m["line"]), m["func"], "java", 0), "java"
        elif m := _JS_FRAME.match(line) or _JS_FRAME_FF.match(line):
            got, lang = Frame(_strip_url(m["path"]), int(m["line"]), _last(m["func"]), "js", 0), "js"
        elif m := _GO_PATH.match(raw):
            got, lang = Frame(m["path"], int(m["line"]), go_func, "go", 0), "go"
            go_func = None
        elif m := _RUST_AT.match(raw):
            got, lang = Frame(m["path"], int(m["line"]), rust_func, "rust", 0), "rust"
            rust_func = None
        elif m := _PYTEST_FRAME.match(line):
            got, lang = Frame(m["path"], int(m["line"]), _last(m["func"]), "python", 0), "python"
        elif m := _GO_FUNC.match(line):
            go_func = _last(re.sub(r"\(\*?(\w+)\)", r"\1", m["qual"]))
            marked[i] = _strong(line, go_func)
            continue
        elif m := _RUST_FUNC.match(line):
            rust_func = _last(m["qual"].split("<")[0])
            marked[i] = _strong(line, rust_func)
            continue
        elif m := _RUST_PANIC.search(line):
            close()
            out.append(Frame(m["path"], int(m["line"]), None, "rust", 0))
            marked[i] = _strong(line, _stem(m["path"]))
            continue
        if got is None:
            if trace and line.strip() and not line.startswith((" ", "\t")):
                close()  # a trace ends at an unindented line (its exception) or another trace
            continue
        if trace and trace[-1].language != lang:
            close()
        outer_first = lang == "python"
        trace.append(got)
        marked[i] = _strong(line, _stem(got.path), got.function if lang not in ("go", "rust") else None)
        if len(out) + len(trace) >= MAX_FRAMES:
            break
    close()
    return out[:MAX_FRAMES], marked


def _stem(path: str) -> str:
    return path.replace("\\", "/").rsplit("/", 1)[-1].split(".", 1)[0]


def _last(qual: str | None) -> str | None:
    """A qualified function name's last part (``Foo.bar`` -> ``bar``; ``<module>``: None)."""
    if not qual:
        return None
    name = re.split(r"\.|::|/", qual)[-1]
    return name if re.fullmatch(r"[A-Za-z_$][\w$]*", name) else None


def _strip_url(path: str) -> str:
    """A JS frame's path without its scheme and host (``webpack:///./src/a.js`` -> ``src/a.js``)."""
    path = re.sub(r"^[a-z-]+://+(?:[^/]*/)?", "", path)
    return path.lstrip("./") if path.startswith("./") else path


# -- lines and blocks --------------------------------------------------------------------

_TRACE_HEAD = re.compile(
    r"^\s*(?:Traceback \(most recent call last\):|stack backtrace:|goroutine \d+ \[|note: run with `RUST_BACKTRACE|During handling of the above exception|The above exception was the direct cause)"
)
_FENCE = re.compile(r"^\s*(```+|~~~+)\s*([\w+-]*)")
_ERROR_LINE = re.compile(
    r"^\s*(?:E\s{2,})?(?:(?:[\w.]+\.)?(?P<exc>[A-Z]\w*(?:Error|Exception|Warning|Exit|Failure|Panic))|error(?:\[\w+\])?|warning|fatal|panic|FATAL|ERROR|WARN(?:ING)?|Error|Warning|Uncaught \w*Error)\s*:\s*(?P<msg>\S.*)$"
)
_CAUSED = re.compile(r"^\s*Caused by:\s*(?:[\w.$]+(?:Exception|Error)\w*:\s*)?(?P<msg>\S.*)$")
_QUOTED = re.compile(r"`[^`\n]*`|(?<![\w])\"(?P<a>[^\"\n]{8,300})\"(?![\w])|(?<![\w])'(?P<b>[^'\n]{8,300})'(?![\w])")
_TICKS = re.compile(r"``?([^`\n]{1,200}?)``?")
OPTION = re.compile(r"(?<![\w-])(--[A-Za-z][\w-]*[A-Za-z0-9])(?![\w-])")
PATH = re.compile(
    r"(?<![\w@/.-])((?:[\w@.-]+[/\\])+[\w.-]*\w|[\w-]+\.(?:py|pyi|rs|go|java|kt|js|jsx|mjs|cjs|ts|tsx|c|h|cc|cpp|cxx|hpp|hh|rb|php|cs|swift|scala|toml|ya?ml|json|ini|cfg))(?::\d+)*(?![\w/])"
)
_MODULE = re.compile(r"(?<![\w.$/-])([a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*){1,6})(?![\w(/-])")
_CONFIG_TAGS = frozenset({"toml", "ini", "yaml", "yml", "cfg", "conf", "properties", "editorconfig", "json", "jsonc"})
_IMPORT = re.compile(r"^\s*(?:from\s+\S+\s+)?import\b|^\s*(?:use|mod)\s|\brequire\s*\(|^\s*#\s*include\b")
_CONFIG = re.compile(r"^\s*\[?(?P<key>[a-z][a-z0-9]*(?:[_-][a-z0-9]+)+)\]?\s*(?:=|:)\s*\S")
# Boilerplate: an environment or version line, an issue template's heading, a banner, a pip freeze line.
_ENV_KEYS = (
    r"os|operating system|platform|system|version|versions|python|python version|node|node version|npm|yarn|rustc|cargo|go version|java|jdk|jvm|"
    r"browser|device|compiler|cmake|cpu|arch|architecture|kernel|distribution|distro|environment|env|ide|editor|shell|terminal|locale|"
    r"[\w. -]{1,30} version|installed from|install method|package version|library version|build|commit|hash|time ?zone"
)
_ENV_LINE = re.compile(r"^\s*(?:[-*+]|\d+\.)?\s*(?:\*\*|__)?(?:" + _ENV_KEYS + r")(?:\*\*|__)?\s*[:=]\s*(?:\*\*)?\S", re.IGNORECASE)
_VERSION_LINE = re.compile(r"^\s*(?:[-*+]\s*)?[\w .+/-]{1,40}?\s+v?\d+\.\d+(?:\.\d+)?(?:[\w.+-]*)?(?:\s*\(.*\))?\s*$")
_FREEZE = re.compile(r"^\s*[\w.-]+\s*(?:==|>=|<=|~=|@)\s*\S+\s*$")
_TEMPLATE = re.compile(
    r"^\s*(?:#+\s*|\*\*|__)?(?:describe the bug|bug description|bug report|expected behaviou?r|actual behaviou?r|current behaviou?r|steps to reproduce|to reproduce|"
    r"reproduction|minimal reproduction|how to reproduce|additional context|additional information|screenshots?|environment|system info(?:rmation)?|"
    r"versions?|checklist|what happened\??|what did you expect.*|what version.*|description|summary|motivation|possible solution|"
    r"feature request|is your feature request related to a problem.*|describe the solution.*|describe alternatives.*|context|"
    r"information|platform|desktop|smartphone|output|logs?|code sample.*|problem description|suggested fix|notes?)\s*(?:\*\*|__)?\s*:?\s*$",
    re.IGNORECASE,
)
_CHECKBOX = re.compile(r"^\s*[-*]\s*\[[ xX]\]\s")
_BANNER = re.compile(r"^\s*(?:Python \d\.\d+\.\d+ \(|IPython \d|Type ['\"]?(?:copyright|help)|\[GCC |\[Clang |Welcome to Node\.js|In \[\d+\]:|Out\[\d+\]:)")
_CODE_PUNCT = re.compile(r"[;{}()=]|^\s*(?:def|class|fn|func|function|import|from|use|let|const|var|return|if|for|while|pub|impl|struct|#include|package)\b")
_LOG_LINE = re.compile(r"^\s*(?:\[?\d{4}[-/]\d\d[-/]\d\d|\[?\d\d:\d\d:\d\d|\[?(?:INFO|DEBUG|WARN|WARNING|ERROR|TRACE|FATAL)\b)")
_SHELL = re.compile(r"^\s*(?:\$|>|%|PS [^>]*>|❯|➜)\s+\S")
_OUTPUT_TAGS = frozenset({"text", "txt", "console", "output", "log", "logs", "shell-session", "plaintext", "sh-session", "none"})


def _is_boilerplate(line: str) -> str | None:
    if _ENV_LINE.match(line):
        return "environment"
    if _FREEZE.match(line):
        return "package versions"
    if _BANNER.match(line):
        return "a banner"
    if _TEMPLATE.match(line) or _CHECKBOX.match(line):
        return "template"
    if _VERSION_LINE.match(line) and len(line.split()) <= 4:
        return "versions"
    return None


def read_report(text: str) -> Report:
    """The parts of the report ``text`` (see the module docstring)."""
    lines = text.split("\n")
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    kinds = ["prose"] * len(lines)
    tags = [""] * len(lines)  # a fenced block's language tag, on each of its lines
    # fenced blocks: code, or output (a tag says so, or few lines look like code)
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, tag = m.group(1), m.group(2).lower()
        j = i + 1
        while j < len(lines) and not lines[j].lstrip().startswith(fence[:3]):
            j += 1
        body = lines[i + 1 : j]
        filled = [b for b in body if b.strip()]
        logs = sum(1 for b in filled if _LOG_LINE.match(b)) >= 0.5 * max(1, len(filled))
        looks = not logs and sum(1 for b in filled if _CODE_PUNCT.search(b) and not _FREEZE.match(b)) >= 0.4 * max(1, len(filled))
        shell = sum(1 for b in filled if _SHELL.match(b)) >= 1 and tag in ("", "sh", "bash", "shell", "console", "zsh")
        kind = "output" if tag in _OUTPUT_TAGS or shell or (not tag and not looks) else "code"
        if kind == "output" and len(filled) > LONG_OUTPUT:
            kind = "log"
        kinds[i] = "boilerplate"  # the fence line itself
        for k in range(i + 1, j):
            kinds[k], tags[k] = kind, tag
        if j < len(lines):
            kinds[j] = "boilerplate"
        i = j + 1
    if lines and kinds[0] == "prose":
        kinds[0] = "title"
    frames, frame_lines = _frames(lines)
    messages: list[str] = []
    boiler: list[tuple[int, int, str]] = []
    section_boiler = False  # under a heading like "Environment" until a blank line after content
    strong: list[Span] = []  # a frame line's file name and function: the rest of it is not evidence
    for n, line in enumerate(lines):
        if n in frame_lines:
            kinds[n] = "boilerplate"
            strong.extend(Span(starts[n] + a, starts[n] + b, "frame") for a, b in frame_lines[n])
            continue
        if _TRACE_HEAD.match(line):
            kinds[n] = "boilerplate"
            continue
        m = _ERROR_LINE.match(line) or _CAUSED.match(line)
        if m and kinds[n] != "title":
            kinds[n] = "message"
            messages.append(m["msg"].strip())
            continue
        what = _is_boilerplate(line) if n else None  # the title is what the report is about
        if kinds[n] == "code" and what not in ("package versions", "a banner"):
            what = None
        if what == "template" and re.search(r"environment|system info|version|platform|desktop|smartphone|information", line, re.IGNORECASE):
            section_boiler = True
        elif not line.strip() and section_boiler and n > 0 and lines[n - 1].strip() and not _TEMPLATE.match(lines[n - 1]):
            section_boiler = False
        elif line.lstrip().startswith("#") and kinds[n] == "prose" and what is None:
            section_boiler = False
        if what is None and section_boiler and kinds[n] in ("prose", "output") and line.strip():
            what = "environment"
        if what is None and kinds[n] == "log":
            what = "a long log"
        if what is not None:
            kinds[n] = "boilerplate"
            if boiler and boiler[-1][1] >= n - 1 and boiler[-1][2] == what:
                boiler[-1] = (boiler[-1][0], n + 1, what)
            else:
                boiler.append((n + 1, n + 1, what))
    kinds = ["boilerplate" if k == "log" else k for k in kinds]
    # quoted sentences in prose and titles: messages as the user saw them
    for n, line in enumerate(lines):
        if kinds[n] not in ("prose", "title", "output"):
            continue
        for q in _QUOTED.finditer(line):
            s = (q["a"] or q["b"] or q.group(0).strip("`")).strip()  # backticks pair from the left: `-L` ... `-L` is no quote
            if sum(1 for w in s.split() if re.search(r"[A-Za-z]{2,}", w)) >= 3 and not _CODE_PUNCT.search(s):
                messages.append(s)
        if kinds[n] == "output" and re.search(r"\b(?:error|failed|cannot|can't|unable|invalid|unexpected|not found|no such)\b", line, re.IGNORECASE):
            messages.append(line.strip())
    spans = sorted(_spans(kinds, starts, lines, strong), key=lambda sp: sp.start)
    options: list[str] = []
    paths: list[str] = []
    for n, line in enumerate(lines):
        if kinds[n] == "boilerplate":
            continue
        options.extend(o for o in OPTION.findall(line) if not line.startswith("diff --git"))
        if tags[n] in _CONFIG_TAGS and (c := _CONFIG.match(line)):
            options.append(c["key"])
        for t in _TICKS.findall(line) if kinds[n] in ("prose", "title") else ():
            if re.fullmatch(r"[a-z][a-z0-9]*(?:[_-][a-z0-9]+)+", t.strip()):
                options.append(t.strip())
        if kinds[n] != "frame":
            paths.extend(p for p in PATH.findall(line) if not re.match(r"^\w+://", p) and "//" not in p)
            if kinds[n] in ("prose", "title") or _IMPORT.search(line):  # a module named, or imported; not ``self.opts.x``
                paths.extend(m for m in _MODULE.findall(line) if not m.startswith(("self.", "this.", "cls.")) and not re.fullmatch(r"[a-z]\.[a-z]", m))
    return Report(
        tuple(frames),
        tuple(dict.fromkeys(m for m in messages if m))[:MAX_MESSAGES],
        tuple(dict.fromkeys(options))[:MAXOPTIONS],
        tuple(dict.fromkeys(p.replace("\\", "/") for p in paths))[:MAX_PATHS],
        tuple(spans),
        tuple(boiler),
    )


def _spans(kinds: list[str], starts: list[int], lines: list[str], strong: list[Span]) -> list[Span]:
    """One span per run of lines of one kind (prose, the default, is left out); a frame
    line is cut around its ``strong`` spans."""
    out: list[Span] = []
    by_line: dict[int, list[Span]] = {}
    for sp in strong:
        by_line.setdefault(starts[max(0, bisect.bisect_right(starts, sp.start) - 1)], []).append(sp)
    for n, kind in enumerate(kinds):
        if kind == "prose":
            continue
        if starts[n] in by_line:
            at = starts[n]
            for sp in sorted(by_line[starts[n]], key=lambda sp: sp.start):
                if sp.start > at:
                    out.append(Span(at, sp.start, kind))
                if sp.start >= at:
                    out.append(sp)
                    at = sp.end
            out.append(Span(at, starts[n] + len(lines[n]) + 1, kind))
            continue
        end = starts[n] + len(lines[n]) + 1
        if out and out[-1].kind == kind and out[-1].end == starts[n]:
            out[-1] = Span(out[-1].start, end, kind)
        else:
            out.append(Span(starts[n], end, kind))
    return out
