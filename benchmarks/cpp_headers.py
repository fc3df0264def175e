"""Headers jitctx reads as C that hold C++ syntax, as a C++ parser sees them (issue 32).

For every ``.h`` file of each tree (binary ones skipped), jitctx's language decision
(``code.parse.language_for`` given what the index gives it) is compared with the C++
grammar's view of the whole file: a header counts as "C++ read as C" when jitctx says C,
the C grammar finds errors in it, and the C++ grammar's tree holds, outside its error
nodes, a construct only C++ has (a namespace, a template, an alias ``using``, an access
specifier, a member initializer list, a lambda, a ``class`` with a body, a name with
``::``). Headers jitctx calls C++ without any such construct are counted too (C read as
C++: the C++ grammar stumbles over C that names things ``new`` or ``class``).

    python benchmarks/cpp_headers.py TREE...                 # this checkout
    python benchmarks/cpp_headers.py --head 256 TREE...      # the decision from 256 bytes (as before issue 32)
    python benchmarks/cpp_headers.py --against /tmp/old TREE...  # another checkout's decision beside

Trees used for docs/benchmarks.md (SerenityOS is held out): ``folly`` of the real tree
(``realtree.py``), and clones of the ``fetch`` mirrors abseil/abseil-cpp, fmtlib/fmt,
google/googletest, google/leveldb, protocolbuffers/protobuf; C trees for the other
direction: curl, git, vim, redis of the real tree.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent

_CPP_ONLY = {"namespace_definition", "template_declaration", "alias_declaration", "access_specifier", "field_initializer_list", "lambda_expression"}


def _cpp_constructs(tree, data: bytes) -> set[str]:
    found: set[str] = set()
    stack = [tree.root_node]
    while stack:
        n = stack.pop()
        t = n.type
        if t == "ERROR":
            continue
        text = data[n.start_byte : n.end_byte]
        if (
            t in _CPP_ONLY
            or (t == "qualified_identifier" and b"::" in text)
            or (t == "class_specifier" and n.child_by_field_name("body") is not None and text.startswith(b"class"))
        ):
            found.add(t)
        stack.extend(n.children)
    return found


def _headers(root: Path):
    for folder, dirs, files in os.walk(root):
        if ".git" in dirs:
            dirs.remove(".git")
        for name in sorted(files):
            if name.endswith(".h"):
                path = Path(folder, name)
                try:
                    data = path.read_bytes()
                except OSError:
                    continue
                if b"\0" not in data[:8192]:
                    yield path.relative_to(root).as_posix(), data


def _decider(checkout: Path):
    """``language_for`` of a checkout, loaded apart from this one's."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"_parse_{abs(hash(str(checkout)))}", checkout / "jitctx" / "code" / "parse.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module.language_for


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trees", nargs="+", type=Path)
    ap.add_argument("--head", type=int, default=0, help="bytes of a file given to the decision (0: all, as the index gives it)")
    ap.add_argument("--against", type=Path, help="another checkout whose decision is shown beside")
    ap.add_argument("--examples", type=int, default=5)
    args = ap.parse_args()
    sys.path.insert(0, str(PROJECT))
    from jitctx.code.parse import parse

    deciders = [("this", _decider(PROJECT))] + ([("against", _decider(args.against))] if args.against else [])
    for root in args.trees:
        for label, language_for in deciders:
            started = time.perf_counter()
            headers = as_c = cpp_as_c = c_as_cpp = 0
            missed: list[str] = []
            spent = 0.0
            for rel, data in _headers(root):
                headers += 1
                t = time.perf_counter()
                language = language_for(rel, data[: args.head] if args.head else data)
                spent += time.perf_counter() - t
                if language == "c":
                    as_c += 1
                    if parse("c", data).root_node.has_error and _cpp_constructs(parse("cpp", data), data):
                        cpp_as_c += 1
                        missed.append(rel)
                elif not _cpp_constructs(parse("cpp", data), data):
                    c_as_cpp += 1
            print(
                f"{root.name:>12} [{label}]: {headers:,} headers, {as_c:,} read as C, {cpp_as_c:,} of them with C++ syntax;"
                f" {c_as_cpp:,} read as C++ with no C++ construct; decision {spent * 1000:.0f} ms ({time.perf_counter() - started:.1f} s in all)"
            )
            for rel in missed[: args.examples]:
                print(f"{'':>14}C++ read as C: {rel}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
