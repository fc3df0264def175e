"""``jitctx mcp``: the tools of :mod:`jitctx.adapters.tools` (and the preload) over MCP, stdio.

Owns the MCP server: the tool list (from :mod:`jitctx.adapters.tools`, each
with ``readOnlyHint`` but ``notes``, which writes outside the tree), tool calls (through ``dispatch``: compact text plus the JSON
envelope as structured content; failures as tool errors naming the bad
value), the preloaded prefix as the ``jitctx://preload`` resource and the
``repo_context`` prompt, ``resources/updated`` notifications when preloaded
files go stale, and choosing the root. The ``mcp`` SDK (major version 2)
enters jitctx here and nowhere else. Does not own what the tools do.

Root, first that applies: ``--root``, ``$JITCTX_ROOT``,
``$CLAUDE_PROJECT_DIR``, the client's first ``file://`` root (asked at the
first request that needs the workspace), the working directory (its git top
level). ``/`` and the home directory are refused. stdout carries protocol
messages only (the SDK points fd 1 at stderr while serving); logs go to
stderr.
"""

from __future__ import annotations

import functools
import logging
import os
import sys
import threading
import warnings
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from urllib.parse import unquote, urlparse

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ResourceUpdated

from .. import __version__, cancel
from ..errors import JitctxError, RepoError
from ..query import PRIMITIVES
from ..session.workspace import Workspace
from .tools import DEFAULT_MAX_TOKENS, TOOLS, ToolOutput, dispatch, tool_error

__all__ = ["PRELOAD_URI", "JitctxServer", "build_server", "serve"]

log = logging.getLogger("jitctx.mcp")

PRELOAD_URI = "jitctx://preload"
ROOT_HINT = "start the server on a project directory: jitctx mcp --root DIR (or set JITCTX_ROOT in its env)"
POLL_SECONDS = 2.0  # how often an idle server re-checks the preloaded files (a few stat calls)
PROMPT = "repo_context"
ENV_ROOTS = ("JITCTX_ROOT", "CLAUDE_PROJECT_DIR")
INSTRUCTIONS = (
    "Repository context tools: locate ranks what a task is about, glob finds files, grep searches contents, "
    "head/tail read lines, outline and symbols show definitions (then head with symbol reads one). "
    "Results are references first; read only what you need. A [stale] line means a file you were "
    "shown changed since: re-read it before relying on it."
)


def configured_root(root: str | os.PathLike | None) -> str | None:
    """``root``, else the first set of ``$JITCTX_ROOT``, ``$CLAUDE_PROJECT_DIR``."""
    if root not in (None, ""):
        return str(root)
    for key in ENV_ROOTS:
        if os.environ.get(key):
            return os.environ[key]
    return None


def _root_from_uri(uri: str) -> str | None:
    parsed = urlparse(str(uri))
    if parsed.scheme != "file":
        return None
    return unquote(parsed.path) or None


class JitctxServer:
    """One MCP connection's state: the workspace, its preload, subscriptions."""

    def __init__(
        self, root: str | os.PathLike | None = None, *, workspace: Workspace | None = None, poll: float | None = POLL_SECONDS, formats: str | list[str] | None = None
    ) -> None:
        self.root = root
        self.formats = formats  # which agents' files are read (None: $JITCTX_FORMATS, else all)
        self.ws = workspace
        self.poll = poll
        self._ws_lock = anyio.Lock()
        self._call_lock = anyio.Lock()  # one tool call at a time: the Workspace is not promised to be thread-safe
        self._preload = None
        self._subscribed: set[str] = set()
        self._notified: frozenset = frozenset()
        self._session = None  # the last request's session: 2025-protocol notifications go through it
        self.bus = InMemorySubscriptionBus()  # 2026-protocol notifications: subscriptions/listen streams
        self.server = Server(
            "jitctx",
            version=__version__,
            instructions=INSTRUCTIONS,
            lifespan=self._lifespan,
            on_subscriptions_listen=ListenHandler(self.bus),
            on_list_tools=self.list_tools,
            on_call_tool=self.call_tool,
            on_list_resources=self.list_resources,
            on_list_resource_templates=self.list_resource_templates,
            on_read_resource=self.read_resource,
            on_subscribe_resource=self.subscribe,
            on_unsubscribe_resource=self.unsubscribe,
            on_list_prompts=self.list_prompts,
            on_get_prompt=self.get_prompt,
        )

    # -- workspace --------------------------------------------------------------

    async def workspace(self, ctx) -> Workspace:
        """The session's Workspace, made at the first request that needs it."""
        async with self._ws_lock:
            if self.ws is None:
                root = self.root if self.root is not None else await self._client_root(ctx)
                self.ws = await anyio.to_thread.run_sync(functools.partial(Workspace, root, max_tokens=DEFAULT_MAX_TOKENS, formats=self.formats))
                log.info("serving %s", self.ws.root)
            return self.ws

    async def _client_root(self, ctx) -> str | None:
        """The client's first ``file://`` root, if it declared roots (handshake era)."""
        caps = ctx.session.client_capabilities
        if caps is None or caps.roots is None:
            return None
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # roots are deprecated in the 2026 protocol, still served before it
                listed = await ctx.session.list_roots()
        except Exception as exc:  # a client that cannot answer: fall back to the working directory
            log.warning("could not list the client's roots: %s", exc)
            return None
        for r in listed.roots:
            path = _root_from_uri(str(r.uri))
            if path:
                return path
        return None

    # -- tools ------------------------------------------------------------------

    async def list_tools(self, ctx, params) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tool_list())

    async def call_tool(self, ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        self._session = ctx.session
        try:
            ws = await self.workspace(ctx)
        except Exception as exc:  # a root that cannot be served: a tool error, the server goes on
            if isinstance(exc, RepoError):  # the fix is on the server's command line, not in a tool argument
                exc = RepoError(exc.message, hint=ROOT_HINT, **exc.fields)
            return _result(tool_error(exc))
        async with self._call_lock:
            out = await _cancellable(functools.partial(dispatch, params.name, params.arguments, workspace=ws))
        stale = out.data.get("stale") if isinstance(out.data, dict) else None
        await self._notify_stale(stale)  # the result already says what is stale: no second check
        return _result(out)

    # -- the preload as a resource and a prompt -------------------------------------

    async def _prefix(self, ctx):
        """The preload, rendered once; re-rendered through ``ws.refresh()`` when a file in it went stale.

        Reading the resource (or prompt) is the boundary the client chose
        (DESIGN section 7): the refresh re-renders the prefix, forgets the old
        preload deliveries (so a deleted instruction file stops being stale)
        and settles the stale reports.
        """
        ws = await self.workspace(ctx)
        async with self._call_lock:  # the Workspace is not promised to be thread-safe
            pre = self._preload if self._preload is not None else getattr(ws, "last_preload", None)
            if pre is None:
                pre = await anyio.to_thread.run_sync(ws.preload)
            elif _preload_stale(await anyio.to_thread.run_sync(ws.stale)):
                refreshed = await anyio.to_thread.run_sync(ws.refresh)
                pre = refreshed.preload if refreshed.preload is not None else await anyio.to_thread.run_sync(ws.preload)
            if pre is not self._preload:
                self._preload = pre
                self._notified = frozenset()
        return pre

    async def list_resource_templates(self, ctx, params) -> types.ListResourceTemplatesResult:
        """None: the one resource has a fixed URI. Answered (empty) rather than "Method not found"."""
        return types.ListResourceTemplatesResult(resource_templates=[])

    async def list_resources(self, ctx, params) -> types.ListResourcesResult:
        return types.ListResourcesResult(
            resources=[
                types.Resource(
                    name="preload",
                    title="Repository instructions (preload)",
                    uri=PRELOAD_URI,
                    description="AGENTS.md files from the root down, and the README, within a token budget.",
                    mime_type="text/markdown",
                )
            ]
        )

    async def read_resource(self, ctx, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        if str(params.uri) != PRELOAD_URI:
            raise _mcp_error(f"unknown resource {str(params.uri)!r}; the only resource is {PRELOAD_URI}")
        pre = await self._guard(self._prefix(ctx))
        return types.ReadResourceResult(contents=[types.TextResourceContents(uri=PRELOAD_URI, mime_type="text/markdown", text=pre.text)])

    async def subscribe(self, ctx, params: types.SubscribeRequestParams) -> types.EmptyResult:
        self._session = ctx.session
        self._subscribed.add(str(params.uri))
        return types.EmptyResult()

    async def unsubscribe(self, ctx, params) -> types.EmptyResult:
        self._subscribed.discard(str(params.uri))
        return types.EmptyResult()

    async def list_prompts(self, ctx, params) -> types.ListPromptsResult:
        return types.ListPromptsResult(
            prompts=[types.Prompt(name=PROMPT, title="Repository context", description="The repository's instruction files (AGENTS.md, README) as a stable prefix.")]
        )

    async def get_prompt(self, ctx, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        if params.name != PROMPT:
            raise _mcp_error(f"unknown prompt {params.name!r}; the only prompt is {PROMPT}")
        pre = await self._guard(self._prefix(ctx))
        return types.GetPromptResult(
            description=f"repository context, prefix {pre.prefix_hash[:12]}",
            messages=[types.PromptMessage(role="user", content=types.TextContent(type="text", text=pre.text))],
        )

    async def _guard(self, awaitable):
        try:
            return await awaitable
        except JitctxError as exc:
            raise _mcp_error(str(exc)) from None

    # -- notifications ----------------------------------------------------------------

    async def _notify_stale(self, stale: list[dict] | None = None) -> None:
        """Announce the preload resource as updated when one of its files newly went stale.

        ``stale``: the stale entries a tool result just carried; ``None``
        checks the workspace (``ws.stale()``, in a worker thread). Only
        ``kind == "preload"`` entries count. 2026 protocol: an event on the
        ``subscriptions/listen`` bus (delivered to clients that listen for
        this resource); 2025 protocol: ``notifications/resources/updated`` to
        a client that subscribed. Once per distinct stale set; the next read
        re-renders the prefix.
        """
        if self._preload is None or self.ws is None:
            return
        if stale is None:
            try:
                async with self._call_lock:
                    stale = await anyio.to_thread.run_sync(self.ws.stale)
            except Exception as exc:  # staleness is advisory here; tool results still carry it
                log.info("could not check the preload: %s", exc)
                return
        paths = _preload_stale(stale)
        if not paths or paths == self._notified:
            return
        self._notified = paths
        log.info("preload went stale: %s", ", ".join(sorted(paths)))
        await self.bus.publish(ResourceUpdated(uri=PRELOAD_URI))
        if PRELOAD_URI in self._subscribed and self._session is not None:
            try:
                await self._session.send_resource_updated(PRELOAD_URI)
            except Exception as exc:  # the connection may be gone or not allow it
                log.info("no resources/updated notification: %s", exc)

    @asynccontextmanager
    async def _lifespan(self, server):
        """Re-check the preload every ``poll`` seconds, so an idle client hears of changes too."""
        async with anyio.create_task_group() as tg:
            if self.poll:
                tg.start_soon(self._poll_loop, self.poll)
            try:
                yield {}
            finally:
                tg.cancel_scope.cancel()

    async def _poll_loop(self, seconds: float) -> None:
        while True:
            await anyio.sleep(seconds)
            await self._notify_stale()


async def _cancellable(fn):
    """Run ``fn`` in a worker thread under a cancel token (``jitctx.cancel``).

    When the call is cancelled (the client sent ``notifications/cancelled``,
    or went away and the server is shutting down), the token is set and the
    work stops at its next look (rg is killed, the python backend stops
    between matches); the call then waits, shielded, for the thread to end,
    so the next call never overlaps it.
    """
    token = threading.Event()
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="jitctx-call")
    future = pool.submit(cancel.call, token, fn)
    try:
        return await anyio.to_thread.run_sync(future.result, abandon_on_cancel=True)
    except anyio.get_cancelled_exc_class():
        token.set()
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(future.exception)
        raise
    finally:
        pool.shutdown(wait=True)  # the call has ended on every path above: this only joins its thread


def _preload_stale(stale) -> frozenset:
    """The paths of the preload entries in a ``stale`` list (files delivered in the prefix)."""
    return frozenset(s["path"] for s in stale or () if isinstance(s, dict) and s.get("kind") == "preload")


def _mcp_error(message: str):
    from mcp.shared.exceptions import MCPError

    return MCPError(code=types.INVALID_PARAMS, message=message)


def _result(out: ToolOutput) -> types.CallToolResult:
    text, data = _utf8(out.text), _utf8(out.data)
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], structured_content=data, is_error=out.is_error)


def _utf8(value):
    """``value`` with names that are not valid UTF-8 (undecodable bytes kept as
    lone surrogates) shown with U+FFFD: the protocol is UTF-8 JSON, and one
    such file name must not end the server."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
            return value
        except UnicodeEncodeError:
            return value.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    if isinstance(value, dict):
        return {_utf8(k): _utf8(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_utf8(v) for v in value]
    return value


def tool_list() -> list[types.Tool]:
    """The tools, read-only but for those whose definition ``writes`` (notes), with the schemas ``jitctx.tools`` exports."""
    writes = {q.name for q in PRIMITIVES if q.writes}  # notes writes (outside the tree: the repository is never written)
    return [
        types.Tool(
            name=t.name,
            description=t.description,
            input_schema=t.schema(),
            annotations=types.ToolAnnotations(read_only_hint=t.name not in writes, open_world_hint=False),
            # destructiveHint and idempotentHint only mean something when readOnlyHint is false (MCP spec): left out, the list stays under 2,000 tokens
        )
        for t in TOOLS.values()
    ]


def build_server(
    root: str | os.PathLike | None = None, *, workspace: Workspace | None = None, poll: float | None = POLL_SECONDS, formats: str | list[str] | None = None
) -> JitctxServer:
    """A server for in-process use (tests pass ``.server`` to ``mcp.Client``)."""
    return JitctxServer(root, workspace=workspace, poll=poll, formats=formats)


def serve(root: str | os.PathLike | None = None, *, formats: str | None = None) -> int:
    """Serve over stdio until the client closes stdin; returns the exit code.

    A configured root (``--root``, ``$JITCTX_ROOT``, ``$CLAUDE_PROJECT_DIR``)
    and ``formats`` (``--formats``, else ``$JITCTX_FORMATS``) are checked before
    serving: a bad one exits 2 with the reason on stderr.
    """
    from ..errors import QueryError
    from ..preload.formats import check_formats

    logging.basicConfig(stream=sys.stderr, level=os.environ.get("JITCTX_LOG", "WARNING").upper(), format="jitctx mcp: %(levelname)s: %(message)s")
    chosen = configured_root(root)
    ws = None
    try:
        if formats is not None or os.environ.get("JITCTX_FORMATS"):
            check_formats(formats if formats is not None else os.environ.get("JITCTX_FORMATS"))
        if chosen is not None:
            ws = Workspace(chosen, max_tokens=DEFAULT_MAX_TOKENS, formats=formats)
    except (RepoError, QueryError) as exc:
        from .cliview import CliView

        view = CliView()  # a command line's error: its hint as flags
        sys.stderr.write(f"jitctx: error: {view.hint(exc.message)}\n" + (f"  hint: {view.hint(exc.hint)}\n" if exc.hint else ""))
        return 2
    app = JitctxServer(chosen, workspace=ws, formats=formats)

    async def run() -> None:
        async with _stdio() as (read, write):
            await app.server.run(read, write, app.server.create_initialization_options())

    try:
        anyio.run(run)
    except KeyboardInterrupt:
        return 130
    return 0


# -- requests made valid text ----------------------------------------------------------------


@asynccontextmanager
async def _stdio():
    """The SDK's stdio transport, reading requests through :class:`_Requests`. fd 0 points at
    the null device while serving (as the SDK's own claim does: a child never reads the
    wire), the wire itself at a private duplicate, restored at the end."""
    import fcntl

    try:
        private = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
        null = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:  # no stdin to claim: the SDK's own transport says what it can
        async with stdio_server() as streams:
            yield streams
        return
    try:
        os.dup2(null, 0)
    finally:
        os.close(null)
    try:
        # never closed: a reader thread may still block on it after the transport ends
        wire = os.fdopen(private, "rb", buffering=0, closefd=False)
        async with stdio_server(stdin=anyio.wrap_file(_Requests(wire))) as streams:  # type: ignore[arg-type]
            yield streams
    finally:
        try:
            os.dup2(private, 0)
        except OSError:
            pass


class _Requests:
    """stdin's lines for the SDK, each one valid text: a JSON string may hold a lone UTF-16
    surrogate escape (``"\\ud800"``: valid JSON, not valid Unicode), which the SDK's parser
    refuses without an answer; it becomes U+FFFD, as an undecodable byte does, so that the
    request is answered (or refused with a protocol error naming the id)."""

    def __init__(self, raw) -> None:
        import io

        self._text = io.TextIOWrapper(io.BufferedReader(raw), encoding="utf-8", errors="replace")

    def readline(self, size: int = -1) -> str:
        return _mend(self._text.readline(size))

    def __iter__(self):
        return self

    def __next__(self) -> str:
        line = self.readline()
        if not line:
            raise StopIteration
        return line

    def close(self) -> None:
        try:
            self._text.detach()
        except ValueError:
            pass


def _mend(line: str) -> str:
    """``line`` (one JSON-RPC message) with every lone surrogate in its strings made U+FFFD."""
    if "\\u" not in line and "\\U" not in line:
        return line  # no escape at all: nothing to mend (the common case)
    import json
    import re

    lone = re.compile("[\ud800-\udfff]")
    try:
        message = json.loads(line)
    except ValueError:
        return line  # not JSON: the SDK answers that

    def fix(value):
        if isinstance(value, str):
            return lone.sub("\ufffd", value)
        if isinstance(value, list):
            return [fix(v) for v in value]
        if isinstance(value, dict):
            return {fix(k): fix(v) for k, v in value.items()}
        return value

    mended = fix(message)
    if mended == message:
        return line
    log.warning("a request held a lone UTF-16 surrogate escape: read as U+FFFD")
    return json.dumps(mended) + "\n"
