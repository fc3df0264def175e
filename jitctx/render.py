"""Results as compact text for a model, or as one JSON envelope; token caps.

Owns the text form (one line per reference, numbered lines for excerpts),
the JSON form, and cutting a result at whole items (or whole lines) to fit
``max_tokens``. Does not own what a result contains.
"""

from __future__ import annotations

import json
import time
from dataclasses import replace

from .refs import Excerpt, FileRef, LineRef, Result
from .text import show_name

__all__ = ["age", "fit_tokens", "human_size", "render_json", "render_text", "stale_line"]


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
    d = result.to_dict()
    text = json.dumps(d, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(d)
    return text


def _ref_line(r: FileRef, now: float | None) -> str:
    line = f"{show_name(r.path)}  {human_size(r.size)}  {age(r.mtime, now)}"
    if r.matches is not None:
        line += f"  {r.matches:,} match{'es' if r.matches != 1 else ''}"
    if r.ignored:
        line += "  [ignored]"
    if r.denied:
        line += "  [denied]"
    return line


def _line_ref(r: LineRef) -> str:
    path = show_name(r.path)
    out = [f"{path}-{c['line']}-{c['text']}" for c in r.before]
    out.append(f"{path}:{r.line}:{r.text}" if r.symbol is None else f"{path}:{r.line} [{show_name(r.symbol)}]:{r.text}")
    out.extend(f"{path}-{c['line']}-{c['text']}" for c in r.after)
    return "\n".join(out)


def _excerpt(e: Excerpt, now: float | None) -> str:
    if e.start_line is None:
        n = len(e.lines)
        numbers = range(-n, 0)
        where = f"last {n:,} lines"
    else:
        numbers = range(e.start_line, e.start_line + len(e.lines))
        where = f"lines {e.start_line:,}-{e.end_line:,} of {e.total_lines:,}" if e.lines else f"0 lines shown of {e.total_lines:,}"
    tokens = f", {e.tokens:,} tokens" if e.tokens is not None else ""
    flags = " [ignored]" if e.ignored else ""
    head = f"==> {show_name(e.path)} ({where}, {human_size(e.size)}, {age(e.mtime, now)}{tokens}){flags} <=="
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


def _symbol(s, *, in_outline: bool = False) -> str:
    """A symbol reference: an outline's row (indented by depth: lines, kind,
    signature, [tokens]) or a symbols hit (path:lines, qualname, signature, tokens)."""
    lines = f"{s.start_line}-{s.end_line}" if s.end_line != s.start_line else f"{s.start_line}"
    if in_outline:
        sig = show_name(_short_signature(s.kind, s.signature) or s.name)
        tokens = f" [{s.tokens:,}]" if s.tokens is not None else ""
        return f"{'  ' * s.depth}{lines} {s.kind} {sig}{tokens}"
    tokens = f"  ({s.tokens:,} tokens)" if s.tokens is not None else ""
    sig = f"  {show_name(s.signature)}" if s.signature else ""
    return f"{show_name(s.path)}:{lines}  {show_name(s.qualname)}{sig}{tokens}"


def render_item(item: object, now: float | None = None) -> str:
    if type(item).__name__ == "Symbol":  # structure.Symbol, not imported here (start-up cost)
        return _symbol(item)
    if isinstance(item, Excerpt):
        return _excerpt(item, now)
    if isinstance(item, LineRef):
        return _line_ref(item)
    if isinstance(item, FileRef):
        return _ref_line(item, now)
    if type(item).__name__ == "FileHit":  # locate.FileHit renders itself (a file and its regions)
        return item.render(now)  # type: ignore[attr-defined]
    return json.dumps(item, ensure_ascii=False)


_SINCE = {"read": "since you read it", "preload": "since it was put in the prefix", "instructions": "since it was shown to you"}


def stale_line(s: dict) -> str:
    """One stale entry as a plain statement of fact (no guess about who changed it)."""
    change = s.get("change", "changed")
    what = {"added": "appeared", "deleted": "was deleted"}.get(change, change)
    line = f"[stale] {show_name(str(s.get('path')))}: {what} {_SINCE.get(str(s.get('kind')), 'since it was delivered')}"
    if s.get("old_head") and s.get("new_head") and s["old_head"] != s["new_head"]:
        line += f" (HEAD {s['old_head'][:8]} -> {s['new_head'][:8]})"
    return line


def _instruction(i: dict) -> str:
    if i.get("content") is not None:
        return f"[instructions] {show_name(i['path'])} applies to files under {show_name(i.get('dir', '.'))}/:\n{i['content'].rstrip()}"
    return f"[instructions] {show_name(i['path'])} applies to files under {show_name(i.get('dir', '.'))}/; read it with head path={show_name(i['path'])}"


def _of_lines(n: object) -> str:
    return f", {n:,} lines" if isinstance(n, int) else ""


def render_text(result: Result, now: float | None = None) -> str:
    """Compact text: stale notes, instructions met just now, the items, then the notice."""
    parts = [stale_line(s) for s in result.stale]
    parts += [_instruction(i) for i in result.instructions]
    if result.tool == "outline":
        if result.results:
            where = f"{result.total:,} definitions{_of_lines(result.extra.get('lines'))}; lines kind signature [tokens]"
            parts.append(f"==> {show_name(str(result.extra.get('path')))} ({where}) <==")
        parts += [_symbol(r, in_outline=True) for r in result.results]
    else:
        parts += [render_item(r, now) for r in result.results]
    if result.notice:
        parts.append(f"[{'truncated' if result.truncated else 'note'}] {show_name(result.notice)}")  # one line, whatever names it holds
    return "\n".join(parts)


def slim_instructions(result: Result, max_tokens: int, tokenizer) -> Result:
    """Nested instructions met just now as references when, with content, they
    would take over half of ``max_tokens`` (the head call that reads each is in its line)."""
    fixed = tokenizer.count(render_text(replace(result, results=[])))
    if fixed > max_tokens // 2 and any(i.get("content") for i in result.instructions):
        result = replace(result, instructions=[{**i, "content": None} for i in result.instructions])
        result.add_notice("instructions met just now are given as references to fit max_tokens; read them with head.")
    return result


def fit_tokens(result: Result, max_tokens: int, tokenizer) -> Result:
    """Cut a list of items (refs, matching lines) at whole items to fit ``max_tokens``.

    The fixed parts (instructions, stale notes, a notice) are priced first;
    the cut is stated in the notice with the call that reads on. Excerpts are
    cut by ``peek.fit_excerpt``.
    """
    result = slim_instructions(result, max_tokens, tokenizer)
    fixed = tokenizer.count(render_text(replace(result, results=[])))
    room = max_tokens - fixed - 60  # leave room for the cut notice
    items = result.results
    kept, used = [], 0
    for item in items:
        cost = tokenizer.count(render_item(item)) + 1
        if used + cost > room:
            break
        kept.append(item)
        used += cost
    if len(kept) == len(items):
        return result
    out = replace(result, results=kept, truncated=True)
    out.add_notice(f"cut to {len(kept):,} of {len(items):,} items to fit max_tokens={max_tokens:,}; raise max_tokens, or narrow the request (offset/limit/path).")
    return out
