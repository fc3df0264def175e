"""Preload: instruction files and README as a byte-stable prefix.

Owns the stable prefix (DESIGN section 6): the instruction files from the
root down to the working directory, then the root README, each labelled with
its repo-relative path and cut on line boundaries with a visible marker to
fit a token budget; it returns what the prefix covers (:class:`Covered`) for
the session to record. Does not own the just-in-time delivery of nested
files (``nested``), which file governs a directory or how it is read
(``instructions``), token counting (``tokens``) or staleness (``ledger``).

Budget rules: the README is cut first (and to its own cap); every
instruction file first gets room for its label and cut marker, then the rest
is shared so that no file takes another's share (a huge root file cannot
starve the file nearest the working directory); if even labels do not fit,
files are dropped root-most first. The whole text is re-counted and fits.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .hints import call
from .instructions import Candidate, count_memo, pick_instruction, pick_readme
from .policy import PathPolicy
from .query import check_count
from .redact import redaction_note
from .refs import Delivered, mtime_of
from .tokens import Tokenizer, fit_lines

__all__ = ["Covered", "Preload", "PreloadFile", "preload"]


@dataclass(frozen=True, slots=True)
class PreloadFile:
    """One file the preload considered.

    ``tokens`` counts the whole file's text (``None`` when a very large file
    was only partly read); ``included_tokens`` the lines of it that are in the
    prefix (labels and markers not included). ``blob`` is the git blob id of
    its bytes (``None`` if not read whole). ``reason``: ``included``, ``cut``
    (to the budget or the README cap), ``omitted`` (no room even for its
    label), ``empty``, ``duplicate`` (same file as an earlier one: symlink or
    hard link), ``not_a_file``, ``broken_link``, ``unreadable``, ``binary``.
    ``note`` says more in words when there is more to say.
    """

    path: str
    size: int | None
    mtime: float | None
    tokens: int | None
    included_tokens: int
    blob: str | None
    truncated: bool
    reason: str
    note: str | None = None

    def to_dict(self) -> dict[str, Any]:
        d = {
            "path": self.path,
            "size": self.size,
            "mtime": self.mtime,
            "tokens": self.tokens,
            "included_tokens": self.included_tokens,
            "blob": self.blob,
            "truncated": self.truncated,
            "reason": self.reason,
        }
        if self.note:
            d["note"] = self.note
        return d


@dataclass(frozen=True, slots=True)
class Preload:
    """The stable prefix and how it was made.

    ``text`` is byte-identical for identical inputs; ``prefix_hash`` is its
    sha256; ``tokens`` its exact count (at most ``budget``); ``bytes`` its
    UTF-8 size. ``cwd`` is the repo-relative working directory. ``warnings``
    name every file skipped, cut or dropped and every suspicious name.
    """

    files: tuple[PreloadFile, ...]
    text: str
    tokens: int
    budget: int
    prefix_hash: str
    git_head: str | None
    warnings: tuple[str, ...]
    cwd: str = "."
    bytes: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "tool": "preload",
            "cwd": self.cwd,
            "files": [f.to_dict() for f in self.files],
            "text": self.text,
            "tokens": self.tokens,
            "bytes": self.bytes,
            "budget": self.budget,
            "prefix_hash": self.prefix_hash,
            "git_head": self.git_head,
            "warnings": list(self.warnings),
        }


def _check_budget(name: str, value: object) -> int:
    return check_count(name, value, minimum=0, hint=f"pass {name}=8000 tokens, or 0 to turn it off")[0]


def _chain(cwd: str) -> list[str]:
    """Directories from the root down to ``cwd``: ['.', 'src', 'src/app']."""
    if cwd == ".":
        return ["."]
    parts = cwd.split("/")
    return ["."] + ["/".join(parts[: i + 1]) for i in range(len(parts))]


# -- blocks -------------------------------------------------------------------


@dataclass(slots=True)
class _Block:
    cand: Candidate
    label: str
    kind: str  # instructions | readme
    min_cost: int = 0
    demand: int = 0  # estimate of the whole block's cost
    alloc: int = 0
    kept: int | None = None  # lines kept; None = omitted
    text: str = ""
    cut: bool = False
    by_cap: bool = True  # a README cut by its own cap (else by what the budget left)

    @property
    def lines(self) -> tuple[str, ...]:
        return self.cand.loaded.lines  # type: ignore[union-attr]

    def marker(self, k: int) -> str:
        loaded = self.cand.loaded
        path = self.cand.path
        why = "to the README cap" if self.kind == "readme" and self.by_cap else "to fit the preload budget"
        if loaded.complete:  # type: ignore[union-attr]
            kept = f"kept lines 1-{k:,} of {len(self.lines):,}" if k else f"kept 0 of {len(self.lines):,} lines"
        else:
            kept = f"kept lines 1-{k:,} of a {loaded.size:,}-byte file" if k else f"kept 0 lines of a {loaded.size:,}-byte file"  # type: ignore[union-attr]
        return f"[… {path} cut {why}: {kept}; read on with {call('head', path=path, start=k + 1)}]"

    def render(self, k: int, cut: bool) -> str:
        body = "".join(line + "\n" for line in self.lines[:k])
        tail = self.marker(k) + "\n" if cut else ""
        return f"{self.label}\n{body}{tail}"


def _label(path: str, kind: str, dir_: str) -> str:
    if kind == "readme":
        return f"==> {path} (project README) <=="
    scope = "the whole repository" if dir_ == "." else f"{dir_}/"
    return f"==> {path} (instructions for {scope}) <=="


def _share(extras: list[int], room: int, priority: list[int]) -> list[int]:
    """Split ``room`` so no one gets more than its demand and the rest share equally.

    Leftover single tokens go in ``priority`` order.
    """
    if sum(extras) <= room:
        return list(extras)
    order = sorted(range(len(extras)), key=lambda i: extras[i])
    left, count = room, len(extras)
    level = 0
    for i in order:
        level = left // count
        if extras[i] <= level:
            left -= extras[i]
            count -= 1
        else:
            break
    out = [min(e, level) for e in extras]
    spare = room - sum(out)
    for i in priority:
        if spare <= 0:
            break
        if out[i] < extras[i]:
            out[i] += 1
            spare -= 1
    return out


def _fill(tok, b: _Block, room: int) -> None:
    """Render ``b`` within ``room`` tokens (its cost includes the separating newline)."""
    if b.demand <= room + 4:  # estimate close: decide exactly
        full = b.render(len(b.lines), False)
        if b.cand.loaded.complete and tok.count(full) + 1 <= room:  # type: ignore[union-attr]
            b.kept, b.text, b.cut = len(b.lines), full, False
            return
    k = fit_lines(tok.count, b.lines, room - 1, lambda n: b.render(n, True))
    if k is None:
        b.kept, b.text, b.cut = None, "", False
    else:
        b.kept, b.text, b.cut = k, b.render(k, True), True


def _allocate(tok, inst: list[_Block], readme: _Block | None, budget: int, readme_cap: int) -> str:
    """Decide every block's room, render, and return the text (fits ``budget``)."""
    active = list(inst)
    while active and sum(b.min_cost for b in active) > budget:
        active.pop(0)  # root-most first: the file nearest cwd is kept longest
    for b in inst:
        b.alloc = 0
    extras = [max(b.demand - b.min_cost, 0) for b in active]
    shares = _share(extras, budget - sum(b.min_cost for b in active), list(reversed(range(len(active)))))
    for b, s in zip(active, shares):
        b.alloc = b.min_cost + s
    for _ in range(8):
        for b in inst:
            if b.alloc > 0:
                _fill(tok, b, b.alloc)
            else:
                b.kept, b.text, b.cut = None, "", False
        used = sum(tok.count(b.text) + 1 for b in inst if b.kept is not None)
        if readme is not None:
            room = min(readme_cap, budget - used)
            readme.by_cap = readme_cap <= budget - used
            if room >= readme.min_cost:
                _fill(tok, readme, room)
            else:
                readme.kept, readme.text, readme.cut = None, "", False
        blocks = [b for b in (*inst, readme) if b is not None and b.kept is not None]
        text = "\n".join(b.text for b in blocks)
        over = tok.count(text) - budget
        if over <= 0:
            return text
        # rare: tokens merged differently across a boundary; shrink and redo
        if readme is not None and readme.kept is not None:
            readme_cap = max(0, tok.count(readme.text) - over - 1)
            continue
        victim = max((b for b in inst if b.kept is not None), key=lambda b: b.alloc)
        victim.alloc = max(0, tok.count(victim.text) - over)
    for gone in (*inst, readme):  # pragma: no cover - never seen: give up visibly, every file omitted
        if gone is not None:
            gone.kept, gone.text, gone.cut = None, "", False
    return ""


# -- the prefix ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Covered:
    """What a prefix covers, for the session to record: ``dirs`` (the chain
    whose instruction files the prefix holds), ``delivered`` (the files in
    it) and ``identities`` ((device, inode) of each, so a link to one of them
    elsewhere is not delivered again)."""

    dirs: tuple[str, ...]
    delivered: tuple[Delivered, ...] = ()
    identities: tuple[tuple[int, int], ...] = ()


def check_budgets(budget: object, readme_budget: object) -> tuple[int, int]:
    """The preload's two token budgets: whole numbers, 0 turning each off."""
    return _check_budget("budget", budget), _check_budget("readme_budget", readme_budget)


def preload(
    policy: PathPolicy,
    tokenizer: Callable[[], Tokenizer],
    *,
    cwd: str | None = None,
    budget: int = 8000,
    readme_budget: int = 2000,
    fallbacks: tuple[str, ...],
    head: str | None,
) -> tuple[Preload, Covered]:
    """Build the stable prefix for ``cwd`` (default the root) within ``budget`` tokens.

    ``budget=0`` turns preloading off (an empty prefix, no file read).
    ``readme_budget`` caps the README block (0: no README). ``fallbacks``:
    the fallback instruction names after ``AGENTS.md``. ``tokenizer`` is
    called once a count is needed. Returns the prefix and what it covers.
    """
    budget, readme_budget = check_budgets(budget, readme_budget)
    names = fallbacks
    target = policy.resolve("." if cwd is None else cwd, want="dir")
    chain = _chain(target.path)
    if budget == 0:
        return Preload((), "", 0, 0, hashlib.sha256(b"").hexdigest(), head, (), target.path, 0), Covered(tuple(chain))

    tok = tokenizer()
    opener = policy.opener()
    warnings: list[str] = []
    files: list[tuple[Candidate, str | None, _Block | None]] = []  # (candidate, skip reason, block)
    seen: dict[tuple[int, int], str] = {}
    inst: list[_Block] = []
    for d in chain:
        pick = pick_instruction(opener, d, names, budget, near_misses=True, denied=policy.is_denied)
        warnings += pick.warnings
        for s in pick.skipped:
            files.append((s, s.reason, None))
        c = pick.chosen
        if c is None:
            continue
        if c.identity in seen:
            files.append((c, "duplicate", None))
            continue
        seen[c.identity] = c.path  # type: ignore[index]
        b = _Block(c, _label(c.path, "instructions", d), "instructions")
        inst.append(b)
        files.append((c, None, b))
    readme = None
    if readme_budget > 0:
        rp = pick_readme(opener, max(readme_budget, 1), denied=policy.is_denied)
        warnings += rp.warnings
        for s in rp.skipped:
            files.append((s, s.reason, None))
        c = rp.chosen
        if c is not None:
            if c.identity in seen:
                files.append((c, "duplicate", None))
            else:
                seen[c.identity] = c.path  # type: ignore[index]
                readme = _Block(c, _label(c.path, "readme", "."), "readme")
                files.append((c, None, readme))

    for b in (*inst, *([readme] if readme else [])):
        loaded = b.cand.loaded
        assert loaded is not None  # a picked file was read
        label_cost = count_memo(tok, loaded, "label:" + b.label, lambda b=b: b.label + "\n")
        body = count_memo(tok, loaded, "text", lambda loaded=loaded: loaded.text) if loaded.complete else None
        b.demand = label_cost + body + 1 if body is not None else 1 << 62
        b.min_cost = tok.count(b.render(0, True)) + 1
        if b.demand <= b.min_cost + 4 and loaded.complete:  # a small file whole costs less than its cut marker
            b.min_cost = min(b.min_cost, tok.count(b.render(len(b.lines), False)) + 1)
    opener.close()
    text = _allocate(tok, inst, readme, budget, readme_budget)
    tokens = tok.count(text)

    out: list[PreloadFile] = []
    delivered: list[Delivered] = []
    for c, reason, block in files:
        st, loaded = c.st, c.loaded
        size = st.st_size if st is not None else None
        mtime = mtime_of(st) if st is not None else None
        whole = count_memo(tok, loaded, "text", lambda loaded=loaded: loaded.text) if loaded is not None and loaded.complete and not loaded.binary else None
        blob = loaded.blob if loaded is not None else None
        note = None
        included = 0
        truncated = False
        if reason == "duplicate":
            note = f"same file as {seen[c.identity]}; loaded once"  # type: ignore[index]
        elif block is not None:
            if block.kept is None:
                reason = "omitted"
                note = "no room in the budget even for its label"
                if block.kind == "readme":
                    room = f"readme_budget={readme_budget:,} and what the instruction files left of budget={budget:,} have"
                else:
                    room = f"budget={budget:,} tokens has"
                warnings.append(f"{c.path} was left out of the prefix: {room} no room for it; read it with {call('head', path=c.path)}")
            else:
                reason = "cut" if block.cut else "included"
                truncated = block.cut
                kept = block.lines[: block.kept]
                included = tok.count("".join(line + "\n" for line in kept)) if block.cut else (whole if whole is not None else 0)
                if block.cut:
                    note = block.marker(block.kept)[3:-1]  # the marker without its "[… " and "]"
                    if block.kind == "instructions":
                        warnings.append(f"{c.path} was cut to fit budget={budget:,} tokens: kept {block.kept:,} lines")
                if loaded.replaced:  # type: ignore[union-attr]
                    warnings.append(f"{c.path} has invalid UTF-8; it was replaced with U+FFFD")
                if loaded.redacted:  # type: ignore[union-attr]
                    warnings.append(redaction_note(c.path, loaded.redacted))  # type: ignore[union-attr]
                delivered.append(Delivered(c.path, c.real, "preload", named=policy.root / c.path))
        out.append(PreloadFile(c.path, size, mtime, whole, included, blob, truncated, reason or "included", note))

    identities = tuple(c.identity for c, reason, _ in files if c.identity is not None and reason is None)
    data = text.encode("utf-8")
    pre = Preload(tuple(out), text, tokens, budget, hashlib.sha256(data).hexdigest(), head, tuple(warnings), target.path, len(data))
    return pre, Covered(tuple(chain), tuple(delivered), identities)
