"""Issue 32 item 4: a definition's price is what the read that it names costs.

Every definition of every fixture language (the ``code`` fixture, plus a C++
declaration defined in another file and a Python overload): the ``tokens`` that
``outline`` and ``symbols`` show equal the tokens of ``head path --symbol Q``
(``--start`` when the name is shared) as the caller receives it.
"""

from __future__ import annotations

import pytest

from jitctx.render import render_text
from jitctx.session.workspace import Workspace

_FILES = ("Button.tsx", "Library.java", "app.js", "bin/greet", "broken.py", "list.c", "list.h", "rational.py", "shapes.cpp", "shapes.hpp", "shapes.rs", "store.ts", "tree.go")


@pytest.mark.slow
def test_issue_32_price_equals_the_cost_of_the_named_read_for_every_definition(make_repo):
    code = make_repo("code")
    ws = Workspace(code.root, rereads=False)  # every read whole (a session would note the lines it showed before)
    kinds: set[tuple[str, str]] = set()
    checked = 0
    for path in _FILES:
        for s in ws.outline(path).results:
            read = ws.head(path, symbol=s.qualname, start=s.start_line)
            assert (read.results[0].start_line, read.results[0].end_line) == (s.start_line, s.end_line), (path, s.qualname)
            assert s.tokens == ws.tokenizer.count(render_text(read)), (path, s.qualname, render_text(read))
            listed = [h for h in ws.symbols(s.qualname, limit=1000).results if (h.path, h.start_line) == (path, s.start_line)]
            assert listed and listed[0].tokens == s.tokens, (path, s.qualname)
            kinds.add((path.rsplit(".", 1)[-1], s.kind))
            checked += 1
    assert checked > 80 and {k for _, k in kinds} >= {
        "class",
        "function",
        "method",
        "struct",
        "enum",
        "interface",
        "type",
        "namespace",
        "constructor",
        "destructor",
        "macro",
        "union",
        "trait",
        "impl",
    }
    # a declaration's read carries the note naming its definition: the price counts it
    declared = next(s for s in ws.outline("shapes.hpp").results if s.qualname == "geo.Shape.Shape")
    read = ws.head("shapes.hpp", symbol="geo.Shape.Shape")
    assert "its definition is shapes.cpp:" in read.notice and declared.tokens == ws.tokenizer.count(render_text(read))
