"""The ranking's weights, in one place: how much each kind of evidence counts.

Owns every number the ranking of files for a task uses (``rank``, ``evidence``,
``quick``): the candidates re-scored, how path words weigh against content
words, the bonus of a definition the task names and of each other kind of
evidence (a path cue, a name table, a listing, a file the task names, a
report's pointers), how many files are read for evidence, and the priors (a
file's role, size, vendored code, generated files and stubs). docs/design.md
"Task retrieval" says why each is what it is. Does not own using them.
"""

from __future__ import annotations

__all__ = [
    "BIND_BONUS",
    "BIND_DF",
    "BIND_WORDS",
    "CANDIDATES",
    "CUE_BONUS",
    "ENTRY_STEMS",
    "GENERATED_PRIOR",
    "HEADER_EXT",
    "HOLDING_DF",
    "HUB_CHECK",
    "IMPLEMENTATION_EXT",
    "JOIN_DF",
    "LIST_BONUS",
    "NAME_BONUS",
    "PAIR_CHECK",
    "PAIR_SHARE",
    "PATH_BONUS",
    "PATH_WEIGHT",
    "POINT_CAP",
    "PROPER_FILES",
    "ROLE_PRIOR",
    "ROLE_PRIOR_ASKED",
    "SCAN_FILES",
    "SIZE_PRIOR",
    "STUB_PRIOR",
    "SYMBOL_BONUS",
    "UNIVERSAL_PATH",
    "VENDOR_DIRS",
    "VENDOR_PRIOR",
]

CANDIDATES = 300  # files re-scored after the lexical query
PATH_WEIGHT = 2.5
UNIVERSAL_PATH = 0.25  # a word in more paths than this share counts in content only
SYMBOL_BONUS = 0.8
PROPER_FILES = 3  # a capitalised word of the task defined in more files than this is no evidence
CUE_BONUS = 0.4
BIND_BONUS = 0.8  # a file defining what a name table binds a task's word to (issue 24, class 4): as a definition's
BIND_WORDS = 6  # task words looked for in name tables, rarest first
BIND_DF = 20  # ... held by at most this many files (or 2% of them): "help" is in every table
SCAN_FILES = 12  # files holding a word that are read for its table rows or listings
HOLDING_DF = 200  # a word held by more files is looked for in the best files only
LIST_BONUS = 1.2  # a package's entry file listing a name of a task about listing (class 5): above the definition's; other files half
ENTRY_STEMS = frozenset({"__init__", "index", "mod", "lib", "main", "exports"})
HUB_CHECK = 20  # best files whose start is read for a generator's banner (class 3)
GENERATED_PRIOR = 0.5  # a generated file beside its source, unless the task is about generated files
STUB_PRIOR = 0.5  # a ``.pyi`` stub beside its module: it names everything the module does
NAME_BONUS = 0.6  # a file the task names: its stem, or every sub-word of it, is a task word (issue 24, class 2)
PATH_BONUS = 0.5  # times the share of the task's weight the file's path words carry
PAIR_CHECK = 10  # best files whose C/C++ header pulls its implementation along
PAIR_SHARE = 0.9  # ... to this share of the header's score at least
HEADER_EXT = frozenset({"h", "hh", "hpp", "hxx", "h++"})
IMPLEMENTATION_EXT = frozenset({"c", "cc", "cpp", "cxx", "c++", "m", "mm"})
JOIN_DF = 0.05  # two words of a task written as one (``manpage``) are searched when at most this share of files hold it
POINT_CAP = 1.6  # what a report's frames, paths, messages and options give one file at most
SIZE_PRIOR = 0.5  # larger files hold more of what changes: a log-size prior (0.35-1.2 measured alike)
# Priors: how likely each kind of file is to be what a task is about.
ROLE_PRIOR = {"source": 1.0, "test": 0.3, "doc": 0.25, "other": 0.35, "data": 0.1}
ROLE_PRIOR_ASKED = {"test": 0.85, "doc": 0.85}  # the task mentions tests / docs
VENDOR_PRIOR = 0.5  # another project's code kept in the tree (``deps/jemalloc/``), unless the task names it
VENDOR_DIRS = frozenset({"deps", "vendor", "vendored", "third_party", "thirdparty", "third-party", "3rdparty", "external", "extern", "node_modules"})
