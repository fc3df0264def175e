"""Finding definitions by name across the index: the tiers behind ``symbols``.

Owns what a name query matches and in which order, as SQL over the
``definitions`` table, indexed on ``lower(name)`` (the qualname's last part):
every tier seeks the name, and filters the qualname, costing in proportion
to the definitions of that name. Does not own the schema
(``rows``), keeping rows current (``refresh``) or rendering.

Tiers, in order (a definition appears once, in its first tier):

1. ``exact``: ``name`` or ``qualname`` equals the query (``__add__``,
   ``Rational.__add__``).
2. ``qualified``: a dotted query names the tail of a qualname on a dot
   boundary: ``Inner.method`` matches ``Outer.Inner.method``, not
   ``Outer.XInner.method``. (Qualnames are per file: a module path such
   as ``sympy.core.`` is not part of them, so it never matches.)
3. ``prefix``: a dotless query is a prefix of ``name`` (``igc`` matches
   ``igcd``); a dotted one is a prefix inside a container named by its
   head, the container itself matched as in tiers 1-2: ``Rational.`` is
   everything defined inside any ``Rational`` (all depths), ``Rational.__a``
   the definitions inside it whose qualname goes on with ``__a``. Only when
   tiers 1-2 match nothing (issue 33: ``igcd`` is not ``igcdex``): otherwise
   the prefix matches are counted and a few of their names given
   (``Lookup.others``), for a notice.

Case: smart case, as ripgrep's ``--smart-case``: a query with an upper-case
ASCII letter matches case-sensitively, an all-lower-case one ignores case
(ASCII folding: SQLite's ``lower()``), and then case-exact matches rank
first within a tier. Within a tier: source before tests (``is_test_path``),
implementations before declarations (``Definition.stub``: a C++ method's
definition before its declaration in the class, a function before its
``@overload`` copies and ``.pyi`` stub), then shorter paths, then path
order, then line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .rows import Definition, Hit, Lookup, ascii_lower

if TYPE_CHECKING:
    import sqlite3

__all__ = ["find", "prefix_range"]


_COLUMNS = "f.path, f.is_test, d.seq, d.kind, d.name, d.qualname, d.start_line, d.end_line, d.signature, d.depth, d.parent, d.tokens, d.stub"
# Every tier seeks the index on lower(name) (``name``: the qualname's last part, a column the
# store computes, not keeps) and filters the qualname: no second index (issue 32: the store).
_NAME = "lower(d.name) = :fl"
_ORDER = "f.is_test, d.stub, length(f.path), f.path, d.start_line, d.seq"


def prefix_range(prefix: str) -> tuple[str, str]:
    """``(lo, hi)`` such that ``lo <= s < hi`` holds exactly for the strings
    ``s`` that start with ``prefix`` (SQLite compares UTF-8 bytes, which
    orders like code points)."""
    last = ord(prefix[-1]) + 1
    if 0xD800 <= last <= 0xDFFF:
        last = 0xE000
    if last > 0x10FFFF:
        return prefix, prefix + "\U0010ffff" * 4  # ends in U+10FFFF: near enough
    return prefix, prefix[:-1] + chr(last)


def _tiers(query: str) -> tuple[dict, list[tuple[str, str, str, str]]]:
    """The parameters and, per tier, (name, FROM clause, WHERE, case-exact key)."""
    q = query
    f = ascii_lower(q)
    cs = f != q
    head, dot, tail = q.rpartition(".")
    p: dict = {"q": q, "f": f, "fl": ascii_lower(tail) if dot else f}
    plain = "definitions d CROSS JOIN files f ON f.id = d.file_id"
    if dot:  # a qualname: its last part is the name
        exact_cs = "d.qualname = :q"
        exact = f"({_NAME} AND lower(d.qualname) = :f" + (f" AND {exact_cs})" if cs else ")")
    else:
        exact_cs = "+d.name = :q"  # ``+``: a filter, never the plan's way in (``d.name = :q`` made SQLite scan every definition)
        exact = f"({_NAME}" + (f" AND {exact_cs})" if cs else ")")
    tiers = [("exact", plain, exact, "" if cs else exact_cs)]
    qualified = None
    if dot and head and tail:
        p.update(neg=-(len(q) + 1), f_dot="." + f, q_dot="." + q)
        qualified_cs = "substr(d.qualname, :neg) = :q_dot"
        qualified = f"({_NAME} AND substr(lower(d.qualname), :neg) = :f_dot" + (f" AND {qualified_cs})" if cs else ")")
        tiers.append(("qualified", plain, f"{qualified} AND NOT {exact}", "" if cs else qualified_cs))
    seen = f"NOT {exact}" + (f" AND NOT {qualified}" if qualified else "")
    if not dot:
        p["lo"], p["hi"] = prefix_range(f)
        p["n"] = len(q)
        where = "lower(d.name) >= :lo AND lower(d.name) < :hi" + (" AND substr(d.name, 1, :n) = :q" if cs else "")
        tiers.append(("prefix", plain, f"{where} AND {seen}", "" if cs else "substr(d.name, 1, :n) = :q"))
    elif head:
        fh = ascii_lower(head)
        p.update(fh=fh, fh_last=fh.rsplit(".", 1)[-1], h_neg=-(len(head) + 1), fh_dot="." + fh, qh=head, qh_dot="." + head)
        inside = "." + ascii_lower(tail)
        p["in_lo"] = inside
        p["in_hi"] = prefix_range(inside)[1]
        p["in_n"], p["in_q"] = len(tail) + 1, "." + tail
        containers = "lower(name) = :fh_last AND (lower(qualname) = :fh OR substr(lower(qualname), :h_neg) = :fh_dot)"
        if cs:
            containers += " AND (qualname = :qh OR substr(qualname, :h_neg) = :qh_dot)"
        source = (
            f"(SELECT DISTINCT file_id, qualname, lower(qualname) AS folded FROM definitions"
            f" WHERE {containers}) c CROSS JOIN definitions d ON d.file_id = c.file_id"
            " AND lower(d.qualname) >= c.folded || :in_lo AND lower(d.qualname) < c.folded || :in_hi"
            f"{' AND substr(d.qualname, 1, length(c.qualname) + :in_n) = c.qualname || :in_q' if cs else ''}"
            " CROSS JOIN files f ON f.id = d.file_id"
        )
        tiers.append(("prefix", source, seen, ""))
    return p, tiers


def _definition(row: tuple) -> Definition:
    return Definition(row[3], row[4], row[5], row[6], row[7], row[8], row[9], row[10], row[11], bool(row[12]))


def find(
    conn: sqlite3.Connection,
    query: str,
    *,
    kind: str | None,
    bounds: tuple[str, str] | None,
    limit: int,
) -> Lookup:
    """Definitions matching ``query`` (see the module docstring), at most
    ``limit`` of them, ``kind`` (exact word) and ``bounds`` (a path range)
    narrowing the search; ``total`` counts every match."""
    params, tiers = _tiers(query)
    extra = ""
    if kind is not None:
        params["kind"] = kind
        extra += " AND d.kind = :kind"
    if bounds is not None:
        params["p_lo"], params["p_hi"] = bounds
        extra += " AND f.path >= :p_lo AND f.path < :p_hi"
    hits: list[Hit] = []
    total = 0
    for tier, source, where, exact_case in tiers:
        body = f"FROM {source} WHERE {where}{extra}"
        distinct = "DISTINCT " if "SELECT DISTINCT" in source else ""
        count = conn.execute(f"SELECT count(*) FROM (SELECT {distinct}d.file_id, d.seq {body})", params).fetchone()[0]
        if tier == "prefix" and total:  # an exact or qualified match: the prefix ones are only named
            if count:
                names = conn.execute(f"SELECT d.qualname {body} GROUP BY d.qualname ORDER BY min(f.is_test), length(d.qualname), d.qualname LIMIT {_OTHERS}", params)
                return Lookup(tuple(hits), total, tuple(r[0] for r in names.fetchall()), count)
            break
        total += count
        room = limit - len(hits)
        if count == 0 or room <= 0:
            continue
        order = f"({exact_case}) DESC, {_ORDER}" if exact_case else _ORDER
        rows = conn.execute(
            f"SELECT {distinct}{_COLUMNS} {body} ORDER BY {order} LIMIT {int(room)}",
            params,
        )
        hits += [Hit(r[0], _definition(r), r[2], tier, bool(r[1])) for r in rows.fetchall()]
    return Lookup(tuple(hits), total)


_OTHERS = 5  # prefix matches named beside exact ones
