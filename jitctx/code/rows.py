"""The values the index stores and answers with, and its schema.

Owns the shapes (:class:`Definition`, :class:`FileState`, :class:`Hit`,
:class:`Lookup`, :class:`RefreshStats`), the skip reasons, and the SQL schema
they live in (:data:`SCHEMA`, :data:`SCHEMA_VERSION`). Does not own how rows
get there (``refresh``) or are looked up (``lookup``, ``index``).

Schema (one SQLite file per repository)::

    meta(key PRIMARY KEY, value)           'analyzer' -> the analyzer's identity;
                                           'generation' -> write transactions so far;
                                           'listing:<scope>:<cap>' -> the last listing a
                                           refresh left fully trusted (digest, generation, count)
    files(id INTEGER PRIMARY KEY AUTOINCREMENT,  never reused: words left behind keep theirs (refresh)
          path UNIQUE,                     repo-relative POSIX, one row per path
          size, mtime_ns, inode, ctime_ns, the stat signature it was indexed at
          indexed_ns,                      wall clock just before it was read
          blob,                            git blob sha1 (20 bytes) of the bytes read; NULL if never read
          skipped,                         NULL, or why it has no definitions (SKIP_REASONS)
          is_test,                         testpaths.is_test_path(path), for ranking in SQL
          outlined)                        0: a file with a grammar whose definitions are still to
                                           come (a build's words come first); 1: done or none to have
      INDEX ON skipped WHERE skipped IS NOT NULL
    definitions(file_id, seq,              PRIMARY KEY; seq = position in the file's list
          kind, qualname,
          name,                            generated (not stored): the qualname's last part
          start_line, end_line, signature, depth,
          parent,                          seq of the enclosing definition, NULL at top level
          tokens,                          NULL when not counted
          stub)                            1: declared only (Definition.stub)
      INDEX ON lower(name)                 every lookup seeks it (lookup)
    lexical USING fts5(path_terms, content_terms, tokenize='ascii', content='')
                                           rowid = files.id; contentless: the index alone
    lexdocs(id INTEGER PRIMARY KEY,        = files.id: what was given to lexical, kept to take it
          path_terms,                      out again (a contentless table deletes a row only
          content)                         when told its words) when git's copy of the blob cannot
                                           tell them again (refresh); content zlib-compressed;
                                           path_terms NULL when words.path_terms(path) makes them

Content at two paths is stored twice: ``analyze`` is given the path (the
language comes from the extension) and the path terms differ anyway, so a
row per path is the honest key; the cost is one more analysis per copy.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .outline import Definition

__all__ = [
    "CONTENT_SKIPS",
    "SCHEMA",
    "SCHEMA_VERSION",
    "SKIP_REASONS",
    "Definition",
    "FileState",
    "Hit",
    "Lookup",
    "RefreshStats",
    "ascii_lower",
]

# 2: lexical contentless, its words kept compressed in lexdocs (494 MB -> see docs/benchmarks.md); 3: lexdocs.path_terms
# NULL when the rule makes them; 4: definitions.stub; 5: files.outlined, lexdocs only where git cannot tell the words
SCHEMA_VERSION = 5  # (5 also: definitions.name generated, no rqual; files.blob 20 bytes)

SCHEMA = (
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID",
    """CREATE TABLE files(
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        path TEXT NOT NULL UNIQUE,
        size INTEGER NOT NULL,
        mtime_ns INTEGER NOT NULL,
        inode INTEGER NOT NULL,
        ctime_ns INTEGER NOT NULL,
        indexed_ns INTEGER NOT NULL,
        blob TEXT,
        skipped TEXT,
        is_test INTEGER NOT NULL,
        outlined INTEGER NOT NULL)""",
    """CREATE TABLE definitions(
        file_id INTEGER NOT NULL,
        seq INTEGER NOT NULL,
        kind TEXT NOT NULL,
        qualname TEXT NOT NULL,
        name TEXT GENERATED ALWAYS AS (substr(qualname, length(rtrim(qualname, replace(qualname, '.', ''))) + 1)) VIRTUAL,
        start_line INTEGER NOT NULL,
        end_line INTEGER NOT NULL,
        signature TEXT NOT NULL,
        depth INTEGER NOT NULL,
        parent INTEGER,
        tokens INTEGER,
        stub INTEGER NOT NULL,
        PRIMARY KEY (file_id, seq)) WITHOUT ROWID""",
    "CREATE INDEX files_skipped ON files(skipped) WHERE skipped IS NOT NULL",
    "INSERT INTO meta VALUES ('generation', '0')",
    "CREATE INDEX definitions_name ON definitions(lower(name))",
    # The caller's words are already split: the ascii tokenizer only folds ASCII case, and
    # writes and ranks twice as fast as unicode61.
    "CREATE VIRTUAL TABLE lexical USING fts5(path_terms, content_terms, tokenize = 'ascii', content = '')",
    "CREATE TABLE lexdocs(id INTEGER PRIMARY KEY, path_terms TEXT, content BLOB NOT NULL)",
)

_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def ascii_lower(text: str) -> str:
    """Lower-case ASCII letters only, as SQLite's ``lower()`` does."""
    return text.translate(_ASCII_LOWER)


#: Why a listed file has no definitions. ``too_large``: over the size cap
#: (not read); ``unreadable``: ``read`` returned None (retried every
#: refresh); ``declined``: ``analyze`` returned None; ``failed``: ``analyze``
#: raised; ``crashed``: the worker process died on it.
SKIP_REASONS = ("too_large", "unreadable", "declined", "failed", "crashed")
#: Skips decided by the content itself: trusted while the content is unchanged.
CONTENT_SKIPS = frozenset({"declined", "failed", "crashed"})


@dataclass(frozen=True, slots=True)
class FileState:
    """What the index holds about one path.

    ``size``, ``mtime_ns``, ``inode``, ``ctime_ns``: the stat signature it was
    indexed at; ``indexed_ns``: wall clock (ns) just before its bytes were
    read; ``blob``: git blob sha1 (hex) of those bytes, None if never read;
    ``skipped``: None, or one of :data:`SKIP_REASONS`; ``is_test``: the
    test-path rule's verdict; ``outlined``: its definitions are stored (False:
    still to come, a build's second part).
    """

    path: str
    size: int
    mtime_ns: int
    inode: int
    ctime_ns: int
    indexed_ns: int
    blob: str | None
    skipped: str | None
    is_test: bool
    outlined: bool = True


@dataclass(frozen=True, slots=True)
class Hit:
    """One definition found by name: ``path``, the ``definition``, its
    ``seq`` (position in the file's list), which ``tier`` matched it
    (``exact``, ``qualified``, ``prefix``) and whether the path is a test."""

    path: str
    definition: Definition
    seq: int
    tier: str
    is_test: bool


@dataclass(frozen=True, slots=True)
class Lookup:
    """The answer to a name lookup: ``hits`` in rank order, cut to the limit;
    ``total``: how many matched before the limit; ``others``: a few qualnames of
    the prefix matches left out because exact ones exist (``lookup``), and
    ``others_total`` how many definitions those are."""

    hits: tuple[Hit, ...]
    total: int
    others: tuple[str, ...] = ()
    others_total: int = 0

    @property
    def truncated(self) -> bool:
        return self.total > len(self.hits)


@dataclass(frozen=True, slots=True)
class RefreshStats:
    """What one refresh did. Every listed path is counted once:
    ``listed == unchanged + rehashed_same + analyzed + outlined + sum(skipped.values())``.

    ``listed``: distinct paths in the listing; ``unchanged``: trusted by their
    stat signature, not read; ``rehashed_same``: read and hashed, same content
    as stored (signature updated, not analysed); ``analyzed``: analysed and
    written; ``outlined``: words current, definitions found now (the second part of a
    build); ``removed``: rows dropped because the complete listing of their
    scope no longer has them; ``skipped``: reason -> count of listed paths
    without definitions now (decided now or trusted from before);
    ``skipped_paths``: (path, reason) pairs, sorted; ``racy``: signatures
    that matched but were too close to their indexing time to trust (re-hashed,
    counted again in ``rehashed_same`` or ``analyzed``); ``read``: files read;
    ``workers``: processes that ran ``analyze`` (1: this one); ``seconds``:
    wall time; ``notice``: the store's notice (in memory, rebuilt), if any;
    ``listing_unchanged``: the listing was identical to the last one this
    scope was refreshed with, every row then trusted, and nothing was
    written since, so no row was compared.
    """

    listed: int = 0
    unchanged: int = 0
    rehashed_same: int = 0
    analyzed: int = 0
    outlined: int = 0
    removed: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    skipped_paths: tuple[tuple[str, str], ...] = ()
    racy: int = 0
    read: int = 0
    workers: int = 1
    seconds: float = 0.0
    notice: str | None = None
    listing_unchanged: bool = False
