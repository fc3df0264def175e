"""Preload: instruction files, always-applied rules and README as a byte-stable prefix.

Owns the stable prefix (DESIGN sections 6 and 13): the instruction files
from the root down to the working directory (each followed by the files it
``@``-imports), then the rules of other agents' formats that always apply,
then one list of the rules to read on request, then the root README; each
labelled with its repo-relative path and cut on line boundaries with a
visible marker to fit a token budget; a file or a text met twice is shown
once. It returns what the prefix covers (:class:`Covered`) for the session to
record. Does not own the just-in-time delivery of nested files and
path-scoped rules (``nested``), which file governs a directory or how it is
read (``instructions``), finding rules (``rules``), imports (``imports``),
token counting (``tokens``) or staleness (``ledger``).

Budget rules: the README is cut first (and to its own cap); every block
first gets room for its label and cut marker, then the rest is shared so
that no file takes another's share (a huge root file cannot starve the file
nearest the working directory); if even labels do not fit, blocks are dropped
in ``_drop_order`` (the list of rules on request, rules, imports, then the
chain root-most first). The whole text is re-counted and fits.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..query import check_count
from ..refs import Delivered, mtime_of
from ..repo.policy import PathPolicy
from ..text.hints import call
from ..text.redact import redaction_note
from ..tokens.tokenizer import Tokenizer, fit_lines
from .formats import FORMATS, MAX_DESCRIPTION, TITLES, Rule, chain_fallbacks, find_rules
from .instructions import Candidate, Loaded, count_memo, list_dir, pick_instruction, pick_readme

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
    hard link; or the same text), ``not_a_file``, ``broken_link``,
    ``outside_root``, ``denied``, ``unreadable``, ``binary``, ``too_large``.
    ``note`` says more in words when there is more to say. ``format``: the
    agent format of a rule file (``rules.FORMATS``); ``imported_by``: the
    file whose ``@path`` brought this one in.
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
    format: str | None = None
    imported_by: str | None = None

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
        if self.format:
            d["format"] = self.format
        if self.imported_by:
            d["imported_by"] = self.imported_by
        return d


@dataclass(frozen=True, slots=True)
class Preload:
    """The stable prefix and how it was made.

    ``text`` is byte-identical for identical inputs; ``prefix_hash`` is its
    sha256; ``tokens`` its exact count (at most ``budget``); ``bytes`` its
    UTF-8 size. ``cwd`` is the repo-relative working directory. ``warnings``
    name every file skipped, cut or dropped and every suspicious name.
    ``rules``: every rule file of the formats read, whatever its scope (path,
    format, scope, globs, description, tokens): the always-applied ones are
    in the text, the path-scoped ones come just in time, the ones on request
    are listed in the text.
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
    rules: tuple[dict, ...] = ()

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
            "rules": [dict(r) for r in self.rules],
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
    kind: str  # instructions | import | rule | listing | readme
    lines: tuple[str, ...] = ()  # what the block shows of the file (a rule: its body)
    offset: int = 0  # file lines before ``lines`` (a rule's front matter): the markers' line numbers
    whole: bool = False  # shown whole or not at all (the list of rules on request)
    min_cost: int = 0
    demand: int = 0  # estimate of the whole block's cost
    alloc: int = 0
    kept: int | None = None  # lines kept; None = omitted
    text: str = ""
    cut: bool = False
    by_cap: bool = True  # a README cut by its own cap (else by what the budget left)

    def marker(self, k: int) -> str:
        loaded = self.cand.loaded
        path = self.cand.path
        why = "to the README cap" if self.kind == "readme" and self.by_cap else "to fit the preload budget"
        o, n = self.offset, len(self.lines)
        if loaded.complete:  # type: ignore[union-attr]
            kept = f"kept lines {o + 1:,}-{o + k:,} of {o + n:,}" if k else f"kept 0 of {n:,} lines"
        else:
            kept = f"kept lines 1-{k:,} of a {loaded.size:,}-byte file" if k else f"kept 0 lines of a {loaded.size:,}-byte file"  # type: ignore[union-attr]
        return f"[… {path} cut {why}: {kept}; read on with {call('head', path=path, start=o + k + 1)}]"

    def render(self, k: int, cut: bool) -> str:
        body = "".join(line + "\n" for line in self.lines[:k])
        tail = self.marker(k) + "\n" if cut else ""
        return f"{self.label}\n{body}{tail}"


def _label(path: str, kind: str, dir_: str) -> str:
    if kind == "readme":
        return f"==> {path} (project README) <=="
    if kind == "import":
        return f"==> {path} (imported by {dir_}) <=="
    if kind == "rule":
        return f"==> {path} ({dir_} rule, always applied) <=="
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
    if b.demand <= room + 4 or b.whole:  # estimate close: decide exactly
        full = b.render(len(b.lines), False)
        if b.cand.loaded.complete and tok.count(full) + 1 <= room:  # type: ignore[union-attr]
            b.kept, b.text, b.cut = len(b.lines), full, False
            return
        if b.whole:
            b.kept, b.text, b.cut = None, "", False
            return
    k = fit_lines(tok.count, b.lines, room - 1, lambda n: b.render(n, True))
    if k is None:
        b.kept, b.text, b.cut = None, "", False
    else:
        b.kept, b.text, b.cut = k, b.render(k, True), True


def _allocate(tok, inst: list[_Block], readme: _Block | None, budget: int, readme_cap: int) -> str:
    """Decide every block's room, render, and return the text (fits ``budget``).

    ``inst`` is in text order; when even the labels do not fit, blocks are
    dropped in ``_drop_order``, and spare tokens go the other way round.
    """
    drop = _drop_order(inst)
    active = list(inst)
    for b in drop:
        if sum(a.min_cost for a in active) <= budget:
            break
        active.remove(b)
    for b in inst:
        b.alloc = 0
    extras = [max(b.demand - b.min_cost, 0) for b in active]
    rank = {id(b): i for i, b in enumerate(drop)}
    shares = _share(extras, budget - sum(b.min_cost for b in active), sorted(range(len(active)), key=lambda i: -rank[id(active[i])]))
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


def _drop_order(inst: list[_Block]) -> list[_Block]:
    """The order blocks give way when the budget cannot hold them all: the list of
    rules on request, then rules (last first), imported files (last first), and the
    instruction chain root-most first (the file nearest cwd is kept longest)."""
    by_kind = {k: [b for b in inst if b.kind == k] for k in ("listing", "rule", "import", "instructions")}
    return [*by_kind["listing"], *reversed(by_kind["rule"]), *reversed(by_kind["import"]), *by_kind["instructions"]]


# -- the prefix ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Covered:
    """What a prefix covers, for the session to record: ``dirs`` (the chain
    whose instruction files the prefix holds), ``delivered`` (the files in
    it), ``identities`` ((device, inode) of each, so a link to one of them
    elsewhere is not delivered again) and ``digests`` (their texts, so an
    exact copy in another format is not delivered again)."""

    dirs: tuple[str, ...]
    delivered: tuple[Delivered, ...] = ()
    identities: tuple[tuple[int, int], ...] = ()
    digests: tuple[str, ...] = ()


def check_budgets(budget: object, readme_budget: object) -> tuple[int, int]:
    """The preload's two token budgets: whole numbers, 0 turning each off."""
    return _check_budget("budget", budget), _check_budget("readme_budget", readme_budget)


class _Entry:
    """One file the preload considered: the candidate, why it is out (``None``: in),
    its block, what it is (``format`` of a rule, ``by`` of an import) and, for a
    duplicate, its original and whether by text (else the same file, a link).
    A plain slotted class: a dataclass costs ~1 ms to define at every import."""

    __slots__ = ("block", "by", "cand", "format", "reason", "same_as", "same_text")

    def __init__(
        self,
        cand: Candidate,
        reason: str | None,
        block: _Block | None = None,
        format: str | None = None,
        by: str | None = None,
        same_as: str | None = None,
        same_text: bool = False,
    ) -> None:
        self.cand, self.reason, self.block, self.format, self.by, self.same_as, self.same_text = cand, reason, block, format, by, same_as, same_text


def preload(
    policy: PathPolicy,
    tokenizer: Callable[[], Tokenizer],
    *,
    cwd: str | None = None,
    budget: int = 8000,
    readme_budget: int = 2000,
    fallbacks: tuple[str, ...],
    head: str | None,
    formats: tuple[str, ...] = FORMATS,
) -> tuple[Preload, Covered]:
    """Build the stable prefix for ``cwd`` (default the root) within ``budget`` tokens.

    ``budget=0`` turns preloading off (an empty prefix, no file read).
    ``readme_budget`` caps the README block (0: no README). ``fallbacks``:
    the fallback instruction names after ``AGENTS.md``. ``formats``: which
    agents' files are read (``rules.FORMATS``: the chain's names and each
    format's rules). ``tokenizer`` is called once a count is needed. Returns
    the prefix and what it covers.
    """
    budget, readme_budget = check_budgets(budget, readme_budget)
    names = chain_fallbacks(fallbacks, formats)
    target = policy.resolve("." if cwd is None else cwd, want="dir")
    chain = _chain(target.path)
    if budget == 0:
        return Preload((), "", 0, 0, hashlib.sha256(b"").hexdigest(), head, (), target.path, 0), Covered(tuple(chain))

    tok = tokenizer()
    opener = policy.opener()
    warnings: list[str] = []
    entries: list[_Entry] = []
    seen: dict[tuple[int, int], str] = {}  # identity -> the path it was loaded as
    texts: dict[str, str] = {}  # digest -> the path whose block holds that text
    inst: list[_Block] = []

    def take(c: Candidate, kind: str, label_arg: str, lines: tuple[str, ...], offset: int = 0, **what) -> _Block | None:
        """Add ``c`` as a block unless the same file or the same text is in already."""
        if c.identity in seen:
            entries.append(_Entry(c, "duplicate", same_as=seen[c.identity], **what))
            return None
        seen[c.identity] = c.path  # type: ignore[index]
        digest = c.loaded.digest(offset)  # type: ignore[union-attr]  # lines == loaded.lines[offset:]
        if digest in texts:
            entries.append(_Entry(c, "duplicate", same_as=texts[digest], same_text=True, **what))
            return None
        texts[digest] = c.path
        b = _Block(c, _label(c.path, kind, label_arg), kind, lines, offset)
        entries.append(_Entry(c, None, b, **what))
        return b

    root_names = list_dir(opener, ".")  # the chain's first pick, the rules and the README look at it
    for d in chain:
        pick = pick_instruction(opener, d, names, budget, near_misses=True, denied=policy.is_denied, agents="agents" in formats, listing=root_names if d == "." else None)
        warnings += pick.warnings
        entries += [_Entry(s, s.reason) for s in pick.skipped]
        c = pick.chosen
        if c is None:
            continue
        b = take(c, "instructions", d, c.loaded.lines)  # type: ignore[union-attr]
        if b is None:
            continue
        inst.append(b)
        if not any("@" in line for line in b.lines):
            continue
        from .imports import resolve as resolve_imports  # only for a file that may import one

        imported, said = resolve_imports(policy, opener, c, budget, set(seen))
        warnings += said
        for imp in imported:
            if imp.cand.reason is not None:
                entries.append(_Entry(imp.cand, imp.cand.reason, by=imp.by))
                continue
            ib = take(imp.cand, "import", imp.by, imp.cand.loaded.lines, by=imp.by)  # type: ignore[union-attr]
            if ib is not None:
                inst.append(ib)

    found = find_rules(policy, formats, root_names)
    warnings += found.warnings
    entries += [_Entry(s, s.reason, format=fmt) for s, fmt in found.skipped]
    for rule in found.scoped("always"):
        rb = take(rule.cand, "rule", TITLES[rule.format], rule.body, rule.offset, format=rule.format)
        if rb is not None:
            inst.append(rb)
    listing = _listing(tok, found.scoped("request"))
    if listing is not None:
        inst.append(listing)

    readme = None
    if readme_budget > 0:
        rp = pick_readme(opener, max(readme_budget, 1), denied=policy.is_denied, listing=root_names)
        warnings += rp.warnings
        entries += [_Entry(s, s.reason) for s in rp.skipped]
        c = rp.chosen
        if c is not None:
            readme = take(c, "readme", ".", c.loaded.lines)  # type: ignore[union-attr]

    for b in (*inst, *([readme] if readme else [])):
        loaded = b.cand.loaded
        assert loaded is not None  # a picked file was read
        if b.kind == "listing":
            b.demand = b.min_cost = tok.count(b.render(len(b.lines), False)) + 1
            b.whole = True
            continue
        label_cost = count_memo(tok, loaded, "label:" + b.label, lambda b=b: b.label + "\n")
        body = count_memo(tok, loaded, f"text:{b.offset}", lambda b=b: "".join(line + "\n" for line in b.lines)) if loaded.complete else None
        b.demand = label_cost + body + 1 if body is not None else 1 << 62
        b.min_cost = tok.count(b.render(0, True)) + 1
        if b.demand <= b.min_cost + 4 and loaded.complete:  # a small file whole costs less than its cut marker
            b.min_cost = min(b.min_cost, tok.count(b.render(len(b.lines), False)) + 1)
    opener.close()
    text = _allocate(tok, inst, readme, budget, readme_budget)
    tokens = tok.count(text)
    if listing is not None and listing.kept is None:
        warnings.append(f"the list of rules to read on request was left out of the prefix: budget={budget:,} tokens has no room for it; the preload's rules list them")

    out: list[PreloadFile] = []
    delivered: list[Delivered] = []
    identities: list[tuple[int, int]] = []
    digests: list[str] = []
    for e in entries:
        c, reason, block = e.cand, e.reason, e.block
        st, loaded = c.st, c.loaded
        size = st.st_size if st is not None else None
        mtime = mtime_of(st) if st is not None else None
        shown = block.lines if block is not None else loaded.lines if loaded is not None else ()
        whole = (
            count_memo(tok, loaded, f"text:{block.offset if block else 0}", lambda shown=shown: "".join(line + "\n" for line in shown))
            if loaded is not None and loaded.complete and not loaded.binary
            else None
        )
        blob = loaded.blob if loaded is not None else None
        note = None
        included = 0
        truncated = False
        if reason == "duplicate":
            note = f"same {'text' if e.same_text else 'file'} as {e.same_as}; loaded once"
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
                    if block.kind != "readme":
                        warnings.append(f"{c.path} was cut to fit budget={budget:,} tokens: kept {block.kept:,} lines")
                if loaded.replaced:  # type: ignore[union-attr]
                    warnings.append(f"{c.path} has invalid UTF-8; it was replaced with U+FFFD")
                if loaded.redacted:  # type: ignore[union-attr]
                    warnings.append(redaction_note(c.path, loaded.redacted))  # type: ignore[union-attr]
                delivered.append(Delivered(c.path, c.real, "preload", named=policy.root / c.path))
                digests.append(block.cand.loaded.digest(block.offset))  # type: ignore[union-attr]
            if c.identity is not None:
                identities.append(c.identity)
        out.append(PreloadFile(c.path, size, mtime, whole, included, blob, truncated, reason or "included", note, e.format, e.by))

    rules = tuple(_rule_entry(tok, r) for r in found.rules)
    data = text.encode("utf-8")
    pre = Preload(tuple(out), text, tokens, budget, hashlib.sha256(data).hexdigest(), head, tuple(warnings), target.path, len(data), rules)
    return pre, Covered(tuple(chain), tuple(delivered), tuple(identities), tuple(digests))


def _listing(tok, rules: list[Rule]) -> _Block | None:
    """The rules read on request as one block: a line each (path, format, tokens, description)."""
    if not rules:
        return None
    lines = []
    for r in rules:
        cost = count_memo(tok, r.cand.loaded, f"text:{r.offset}", lambda r=r: r.text)  # type: ignore[arg-type]
        about = r.description or "no description: read it when you are asked to"
        if len(about) > MAX_DESCRIPTION:
            about = about[: MAX_DESCRIPTION - 1] + "…"
        lines.append(f"- {r.path} ({TITLES[r.format]}, {cost:,} tokens): {about}")
    label = "==> rules to read when they apply (read one with head path=PATH) <=="
    cand = Candidate("(rules on request)", rules[0].cand.real, None, Loaded(0, tuple(lines), True, False, False, None))
    return _Block(cand, label, "listing", tuple(lines))


def _rule_entry(tok, r: Rule) -> dict:
    """A rule as the preload's JSON lists it: where it applies and what reading it costs."""
    entry = r.describe()
    entry["tokens"] = count_memo(tok, r.cand.loaded, f"text:{r.offset}", lambda: r.text)  # type: ignore[arg-type]
    return entry
