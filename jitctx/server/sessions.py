"""The Workspaces a warm server answers with: one per call, or a session's own.

Owns the server's Workspaces: a fresh one for a call without a session (it
records only if the CLI asks), and per session one kept across its calls (it
records: its ledger is the session), the least recently used dropped past
``MAX_SESSIONS``; and the one count cache every call shares (its store opened
once). Does not own running a call (``answer``) or the server's life
(``serve``).
"""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..tokens.tokenizer import ContentCounts
    from .kept_listing import LiveListing

__all__ = ["MAX_SESSIONS", "Sessions"]

MAX_SESSIONS = 32  # sessions kept (least recently used dropped first)


class Sessions:
    """The Workspaces of the server of ``root``."""

    def __init__(self, root: str) -> None:
        self.root = root
        self._kept: OrderedDict[str, object] = OrderedDict()
        self._counts: ContentCounts | None = None  # one count cache for every call (its store opened once)

    def __len__(self) -> int:
        return len(self._kept)

    def workspace(self, session: str, record: bool, live: LiveListing | None):
        """A fresh Workspace per call (``record`` as the CLI asks), or the session's own,
        kept across its calls (it records: its ledger is the session). ``live``: the
        listing kept in memory, if any."""
        from ..repo.universe import Repo
        from ..session.workspace import Workspace

        repo = Repo(Path(self.root), live=live)
        if self._counts is None:
            from ..tokens.tokenizer import DEFAULT_ENCODING, ContentCounts, get_tokenizer

            self._counts = ContentCounts(DEFAULT_ENCODING, lambda: get_tokenizer(DEFAULT_ENCODING), root=self.root)
        if not session:
            return Workspace(repo=repo, record=record, content_counts=self._counts)
        ws = self._kept.get(session)
        if ws is None:
            ws = Workspace(repo=repo, record=True, content_counts=self._counts)
            self._kept[session] = ws
            while len(self._kept) > MAX_SESSIONS:
                _, old = self._kept.popitem(last=False)
                old.close()  # type: ignore[attr-defined]
        else:
            self._kept.move_to_end(session)
            ws.use_repo(repo)  # type: ignore[attr-defined]
        return ws

    def close(self) -> None:
        """Close every session's Workspace (the server ends)."""
        for ws in self._kept.values():
            ws.close()  # type: ignore[attr-defined]
