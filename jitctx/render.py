"""Results as compact text for a model, or as one JSON envelope; token caps.

Owns the text form (one line per reference, numbered lines for excerpts),
the JSON form, how a name with control characters is shown, and cutting a
result at whole items (or whole lines) to fit ``max_tokens``. Does not own
what a result contains.
"""

from __future__ import annotations

import time
from dataclasses import replace

from .refs import Diff, Excerpt, FileRef, LineRef, Result, Unchanged
from .text.hints import call

__all__ = ["View", "age", "fit_tokens", "human_size", "render_json", "render_text", "show_name", "stale_line"]


class View:
    """How a surface shows paths and the calls in hints. This one, the tool and
    MCP surfaces' view, shows them as they are: repo-relative paths, calls in
    tool-argument syntax (``head path=src/app.py start=68``). The CLI's view
    (``adapters/cliview``) prints paths from the working directory and calls
    as command lines. Token caps price the text through the same view."""

    def path(self, path: str) -> str:
        return path

    def hint(self, text: str) -> str:
        return text

    def calls(self, text: str) -> str:
        """A prefix's or a window's ``text`` with the calls its own lines name (cut markers,
        ``==> ... <==`` labels, the read-next block) in this view's syntax; file content as it is."""
        return text


_AS_IS = View()


def show_name(name: str) -> str:
    """A file name as text output shows it: control characters escaped
    (``\\n`` -> ``\\\\n``), so a name can never start a forged line."""
    if name.isprintable():
        return name
    out = []
    for ch in name:
        if ch.isprintable() or ch == " " or "\udc80" <= ch <= "\udcff":  # undecodable bytes print as themselves
            out.append(ch)
        elif ch in "\n\r\t":
            out.append({"\n": "\\n", "\r": "\\r", "\t": "\\t"}[ch])
        else:
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
    return "".join(out)


def human_size(n: int) -> str:
    """Bytes in human units: 512 B, 1.2 KB, 3.4 MB."""
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{int(size)} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} TB"  # pragma: no cover


def age(mtime: float, now: float | None = None) -> str:
    """Seconds since ``mtime`` as '3h ago'; future times read 'just now'."""
    delta = (time.time() if now is None else now) - mtime
    if delta < 60:
        return "just now"
    for unit, secs in (("y", 31_536_000), ("mo", 2_592_000), ("d", 86_400), ("h", 3600), ("m", 60)):
        if delta >= secs:
            return f"{int(delta // secs)}{unit} ago"
    return "just now"  # pragma: no cover


def render_json(result: Result) -> str:
    """One JSON object, UTF-8 text kept as is.

    A file name that is not UTF-8 arrives as lone surrogates; the JSON then
    escapes them (``\\udce9``) so it stays valid UTF-8, and the escaped name
    still works as a path argument.
    """
    import json  # not at start-up: a text render never needs it (~1 ms)

    d = result.to_dict()
    text = json.dumps(d, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(d)
    return text


def _ref_line(r: FileRef, now: float | None, view: View = _AS_IS) -> str:
    line = f"{show_name(view.path(r.path))}  {human_size(r.size)}  {age(r.mtime, now)}"
    if r.matches is not None:
        line += f"  {r.matches:,} match{'es' if r.matches != 1 else ''}"
    if r.ignored:
        line += "  [ignored]"
    if r.denied:
        line += "  [denied]"
    return line


def _numbered(r: LineRef) -> list[str]:
    """A match's lines under its file's heading, as ``rg --heading`` prints them:
    ``12-context``, ``13:match``, ``13 [Class.method]:match`` (the enclosing definition)."""
    out = [f"{c['line']}-{c['text']}" for c in r.before]
    out.append(f"{r.line}:{r.text}" if r.symbol is None else f"{r.line} [{show_name(r.symbol)}]:{r.text}")
    out.extend(f"{c['line']}-{c['text']}" for c in r.after)
    return out


def _span(r: LineRef) -> tuple[int, int]:
    return (r.before[0]["line"] if r.before else r.line), (r.after[-1]["line"] if r.after else r.line)


def _grouped(items: list, now: float | None, view: View) -> list[str]:
    """Items as text lines, matching lines grouped under their file (``rg --heading``):
    the path once, then its lines; a blank line between files; ``--`` between groups of
    context lines that are not adjacent in one file. Other items as they are. The JSON
    form is unchanged: one object per match, each with its path."""
    out: list[str] = []
    prev: LineRef | None = None
    context = any(isinstance(r, LineRef) and (r.before or r.after) for r in items)
    for item in items:
        if not isinstance(item, LineRef):
            out.append(render_item(item, now, view))
            prev = None
            continue
        out.extend(_heading(item, prev, context, view))
        out.extend(_numbered(item))
        prev = item
    return out


def _heading(item: LineRef, prev: LineRef | None, context: bool, view: View) -> list[str]:
    """What goes before a match's lines: its file's heading (after a blank line) when it
    starts a file, ``--`` when it is not adjacent to the match before it, else nothing."""
    if prev is None or item.path != prev.path:
        return ([""] if prev is not None else []) + [show_name(view.path(item.path))]
    if context and _span(item)[0] > _span(prev)[1] + 1:
        return ["--"]
    return []


def _excerpt(e: Excerpt, now: float | None, view: View = _AS_IS) -> str:
    if e.start_line is None:
        n = len(e.lines)
        numbers = range(-n, 0)
        where = f"last {n:,} lines"
    else:
        numbers = range(e.start_line, e.start_line + len(e.lines))
        of = f" of {e.total_lines:,}" if e.total_lines is not None else ", total not counted"  # over 8 MiB: the notice says so
        where = f"lines {e.start_line:,}-{e.end_line:,}{of}" if e.lines else f"0 lines shown{of}"
    tokens = f", {e.tokens:,} tokens" if e.tokens is not None else ""
    flags = " [ignored]" if e.ignored else ""
    head = f"==> {show_name(view.path(e.path))} ({where}, {human_size(e.size)}, {age(e.mtime, now)}{tokens}){flags} <=="
    body = [f"{num:>6}\t{text}" for num, text in zip(numbers, e.lines)]
    return "\n".join([head, *body])


_KEYWORDS = {"function": ("def ", "func ", "fn ", "function "), "method": ("def ", "func ", "fn ", "function "), "constructor": ("def ",)}


def _short_signature(kind: str, signature: str) -> str:
    """An outline row's signature without the keyword its kind already says
    (``def ``, ``func ``, ``class `` for a class...): outlines are read whole, so
    every row's tokens count."""
    for word in (*_KEYWORDS.get(kind, ()), kind + " "):
        if signature.startswith(word):
            signature = signature[len(word) :]
            break
    return signature[:-1].rstrip() if signature.endswith((":", "{")) else signature


def _symbol(s, *, in_outline: bool = False, view: View = _AS_IS) -> str:
    """A symbol reference: an outline's row (indented by depth: lines, kind,
    signature, [tokens]) or a symbols hit (path:lines, qualname, signature, tokens)."""
    lines = f"{s.start_line}-{s.end_line}" if s.end_line != s.start_line else f"{s.start_line}"
    if in_outline:
        sig = show_name(_short_signature(s.kind, s.signature) or s.name)
        tokens = f" [{s.tokens:,}]" if s.tokens is not None else ""
        return f"{'  ' * s.depth}{lines} {s.kind} {sig}{tokens}"
    tokens = f"  ({s.tokens:,} tokens)" if s.tokens is not None else ""
    sig = f"  {show_name(s.signature)}" if s.signature else ""
    return f"{show_name(view.path(s.path))}:{lines}  {show_name(s.qualname)}{sig}{tokens}"


def render_item(item: object, now: float | None = None, view: View = _AS_IS) -> str:
    if type(item).__name__ == "Symbol":  # structure.Symbol, not imported here (start-up cost)
        return _symbol(item, view=view)
    if isinstance(item, Excerpt):
        return _excerpt(item, now, view)
    if isinstance(item, Unchanged):  # a note: what was shown and when is all it says
        return f"==> {show_name(view.path(item.path))} ({item.summary()}) <=="
    if isinstance(item, Diff):
        tokens = f", {item.tokens:,} tokens" if item.tokens is not None else ""
        return f"==> {show_name(view.path(item.path))} ({item.summary()}, {human_size(item.size)}, {age(item.mtime, now)}{tokens}) <==\n" + item.content.rstrip("\n")
    if isinstance(item, LineRef):  # on its own: under its file's heading
        return "\n".join([show_name(view.path(item.path)), *_numbered(item)])
    if isinstance(item, FileRef):
        return _ref_line(item, now, view)
    if type(item).__name__ in ("FileHit", "Note"):  # locate.FileHit, notes.Note render themselves
        return item.render(now, view)  # type: ignore[attr-defined]
    import json

    return json.dumps(item, ensure_ascii=False)


_SINCE = {"read": "since you read it", "preload": "since it was put in the prefix", "instructions": "since it was shown to you"}


def stale_line(s: dict, view: View = _AS_IS) -> str:
    """One stale entry as a plain statement of fact (no guess about who changed it)."""
    change = s.get("change", "changed")
    what = {"added": "appeared", "deleted": "was deleted"}.get(change, change)
    line = f"[stale] {show_name(view.path(str(s.get('path'))))}: {what} {_SINCE.get(str(s.get('kind')), 'since it was delivered')}"
    if s.get("old_head") and s.get("new_head") and s["old_head"] != s["new_head"]:
        line += f" (HEAD {s['old_head'][:8]} -> {s['new_head'][:8]})"
    return line


def _instruction(i: dict, view: View = _AS_IS) -> str:
    path = show_name(view.path(i["path"]))
    rule = i.get("rule")
    read = f"read it with {call('head', path=i['path'], start=rule['start'] if rule and rule.get('start', 1) > 1 else None)}"
    if rule:  # a path-scoped rule of another agent's format (DESIGN section 13)
        globs = ", ".join(rule["globs"][:3]) + (", …" if len(rule["globs"]) > 3 else "")
        what = f"{path} ({rule['format']} rule for {show_name(globs)}) applies to {show_name(view.path(rule['matched']))}"
    else:
        folder = show_name(view.path(i.get("dir", ".")))
        by = f" (imported by {show_name(view.path(i['imported_by']))})" if i.get("imported_by") else ""
        what = f"{path}{by} applies to files under {folder}/"
    if i.get("content") is not None:
        return f"[instructions] {what}:\n{view.calls(i['content'].rstrip())}"
    return f"[instructions] {what}; " + view.hint(read)


_OUTLINE_FLOOR = 4000  # characters (~1,000 tokens): an outline this small is shown whole, whatever the file's size


def _outline(result: Result, v: View) -> list[str]:
    """An outline as text: one row per definition when that costs at most a
    tenth of the file (by characters, ~4 per token on both sides), else
    folded: top-level rows, each one's members by name on one line (deeper
    ones counted); then, if still too long, top-level rows without signatures."""
    rows = result.results
    if not rows:
        return []
    room = max(int(result.extra.get("size") or 0) // 10, _OUTLINE_FLOOR)
    head = f"==> {show_name(v.path(str(result.extra.get('path'))))} ({result.total:,} definitions{_of_lines(result.extra.get('lines'))}"
    full = [_symbol(r, in_outline=True) for r in rows]
    if sum(map(len, full)) + len(full) <= room:
        return [head + "; lines kind signature [tokens]) <==", *full]
    for signatures in (True, False):
        out = _folded(rows, signatures)
        if sum(map(len, out)) + len(out) <= room or not signatures:
            what = "lines kind signature [tokens]" if signatures else "lines kind name [tokens]"
            note = (
                f"[note] folded to fit a tenth of the file: members by name under each definition ({what} for the rest); "
                "symbols with query 'Name.' lists a definition's members with lines and tokens, head with symbol reads one."
            )
            return [head + f"; {what}) <==", *out, v.hint(note)]
    return full  # pragma: no cover


def _folded(rows: list, signatures: bool) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(rows):
        top = rows[i]
        out.append(_symbol(top, in_outline=True) if signatures else _bare(top))
        members: list[str] = []
        deeper = 0
        i += 1
        while i < len(rows) and rows[i].depth > top.depth:
            if rows[i].depth == top.depth + 1:
                members.append(show_name(rows[i].name))
            else:
                deeper += 1
            i += 1
        if members or deeper:
            more = f" (+{deeper:,} nested)" if deeper else ""
            out.append(f"{'  ' * (top.depth + 1)}{', '.join(members)}{more}")
    return out


def _bare(s) -> str:
    lines = f"{s.start_line}-{s.end_line}" if s.end_line != s.start_line else f"{s.start_line}"
    tokens = f" [{s.tokens:,}]" if s.tokens is not None else ""
    return f"{'  ' * s.depth}{lines} {s.kind} {show_name(s.name)}{tokens}"


def _of_lines(n: object) -> str:
    return f", {n:,} lines" if isinstance(n, int) else ""


def render_text(result: Result, now: float | None = None, view: View | None = None) -> str:
    """Compact text: stale notes, instructions met just now, the items, then the notice.

    ``view``: how paths and hints are shown (default: as they are, for tool callers)."""
    v = view or _AS_IS
    parts = [stale_line(s, v) for s in result.stale]
    parts += [_instruction(i, v) for i in result.instructions]
    if result.tool == "outline" and not any(isinstance(r, Unchanged) for r in result.results):
        parts += _outline(result, v)
    else:
        parts += _grouped(result.results, now, v)
    if result.notice:
        parts.append(f"[{'truncated' if result.truncated else 'note'}] {show_name(v.hint(result.notice))}")  # one line, whatever names it holds
    return "\n".join(parts)


def slim_instructions(result: Result, max_tokens: int, tokenizer, view: View | None = None) -> Result:
    """Nested instructions met just now as references when, with content, they
    would take over half of ``max_tokens`` (the head call that reads each is in its line)."""
    fixed = tokenizer.count(render_text(replace(result, results=[]), view=view))
    if fixed > max_tokens // 2 and any(i.get("content") for i in result.instructions):
        result = replace(result, instructions=[{**i, "content": None} for i in result.instructions])
        result.add_notice("instructions met just now are given as references to fit max_tokens; read them with head.")
    return result


def clamp_to_rule(result: Result, max_tokens: int) -> int:
    """``max_tokens`` held to its one range (``query.clamp_tokens``); the result says so when moved."""
    from .query import clamp_tokens

    max_tokens, note = clamp_tokens(max_tokens)
    if note:
        result.add_notice(note)
    return max_tokens


def fit_tokens(result: Result, max_tokens: int, tokenizer, view: View | None = None) -> Result:
    """Cut a list of items (refs, matching lines) at whole items to fit ``max_tokens``.

    The fixed parts (instructions, stale notes, a notice) are priced first;
    the cut is stated in the notice with the call that reads on. Excerpts are
    cut by ``headtail.fit_excerpt``. ``view``: the surface's, so the priced text is the text shown.
    """
    max_tokens = clamp_to_rule(result, max_tokens)
    result = slim_instructions(result, max_tokens, tokenizer, view)
    fixed = tokenizer.count(render_text(replace(result, results=[]), view=view))
    room = max_tokens - fixed - 60  # leave room for the cut notice
    items = result.results
    v = view or _AS_IS
    context = any(isinstance(r, LineRef) and (r.before or r.after) for r in items)
    kept, used, prev = [], 0, None
    for item in items:
        if isinstance(item, LineRef):  # priced as shown: its lines, and its file's heading when it starts one
            cost = tokenizer.count("\n".join([*_heading(item, prev, context, v), *_numbered(item)])) + 1
            prev = item
        else:
            cost = tokenizer.count(render_item(item, view=v)) + 1
            prev = None
        if used + cost > room:
            break
        kept.append(item)
        used += cost
    if len(kept) == len(items):
        return result
    out = replace(result, results=kept, truncated=True)
    out.add_notice(f"cut to {len(kept):,} of {len(items):,} items to fit max_tokens={max_tokens}; raise max_tokens, or narrow the request.")
    return out
