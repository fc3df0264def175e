"""The CLI's commands: each subcommand's run, from parsed arguments to its exit code.

Owns the call's Workspace (the server's for a warm call, else one of its own),
paths taken from the working directory, and the commands: the eight primitives
through one path (their options are their definition's fields, their run the
Workspace's method of their name), then preload, watch, context, tools, mcp,
index and session. Does not own parsing (``parser``), the error mapping
(``run``) or rendering (``jitctx.render``, ``adapters/cliview``).
"""

from __future__ import annotations

import os

from ...call import Caller
from .exits import EXIT_EMPTY, EXIT_ERROR, EXIT_FOUND, error
from .parser import PRIMITIVE_COMMANDS

__all__ = ["COMMANDS", "elsewhere", "primitive", "workspace"]


def workspace(args, caller: Caller):
    """The call's Workspace. A one-shot call records no deliveries: no later call
    of its session could be told they went stale (``watch`` does record)."""
    from ...session.workspace import Workspace
    from ..cliview import CliView

    record = args.command == "watch"
    repo = getattr(args, "prefetched", None)
    if caller.workspace is not None:
        if caller.serves != getattr(args, "served_root", None):
            _root(args, caller)  # a bad root fails here, as a Workspace of it would in process
            raise RuntimeError(f"the server of {caller.serves} was asked for another root")  # run.main checked it first
        ws = caller.workspace(record)  # the server's: warm listing, the caller's session
    else:
        ws = Workspace(repo=repo, record=record) if repo is not None else Workspace(args.root, record=record, cwd=caller.cwd)
    formats = getattr(args, "formats", None)
    if formats is not None or caller.workspace is not None:  # a server's session keeps its Workspace: each call says its own
        ws.set_formats(formats)
    ws.progress_to = caller.err  # a cold index build's progress line (on a terminal)
    # paths print from the working directory and hints as flags; token caps price that text
    ws.view = args.view = CliView(_cwd_in(ws, caller))
    return ws


def _root(args, caller: Caller):
    """The root the call names, resolved from the caller's working directory."""
    from ...repo.universe import find_root

    return find_root(args.root, cwd=caller.cwd)


def elsewhere(args, caller: Caller) -> str | None:
    """For a server's call: the root the call names when it is not the one served (the
    client then asks that root's server); ``None`` when it is, or when resolving it fails
    (the command reports that where a call in process would)."""
    from ...errors import JitctxError

    if caller.serves is None or not hasattr(args, "root"):
        return None
    try:
        real = str(_root(args, caller))
    except JitctxError:
        return None
    args.served_root = real
    return real if real != caller.serves else None


def _cwd(caller: Caller):
    from pathlib import Path

    from ...repo.universe import working_directory

    return (Path(caller.cwd) if caller.cwd is not None else working_directory()).resolve()


def _cwd_in(ws, caller: Caller) -> str:
    """The working directory, repo-relative, when it is inside the root below it; else ``""``."""
    cwd = _cwd(caller)
    return cwd.relative_to(ws.root).as_posix() if cwd != ws.root and cwd.is_relative_to(ws.root) else ""


def _from_cwd(ws, caller: Caller, path: str) -> str:
    """A relative CLI path is taken from the working directory when that is inside the root.

    Like any Unix tool (``cd src && jitctx head app.py``); tool callers, which
    have no working directory, give paths from the root. Output paths stay
    repo-relative either way.
    """
    if not path or os.path.isabs(path):
        return path
    cwd = _cwd(caller)
    if cwd == ws.root or not cwd.is_relative_to(ws.root):
        return path  # as typed: an error message names it as the user wrote it
    rel = os.path.relpath(cwd / path, ws.root)
    if not os.path.lexists(cwd / path) and os.path.lexists(ws.root / path):
        return path  # a repo-relative path (as --json prints them) that only exists from the root
    # from the root when that stays inside it (`cd src && jitctx head x` names src/x)
    return str(cwd / path) if rel == ".." or rel.startswith(".." + os.sep) else rel


def _emit(args, caller: Caller, result) -> int:
    from ...render import render_json, render_text

    text = render_json(result) if args.json else render_text(result, view=args.view)
    if text:
        caller.out.write(text + "\n")
    return EXIT_EMPTY if result.is_empty else EXIT_FOUND


def _query_values(args, query: type) -> dict:
    """The parsed options that belong to ``query`` and were given (or are positional), by name."""
    from ...query import params

    return {q.name: getattr(args, q.name) for q in params(query) if q.arg.cli and (getattr(args, q.name) is not None or not q.arg.flags)}


def primitive(args, caller: Caller) -> int:
    """A primitive's subcommand (glob, grep, head, ...): its options are its definition's
    fields, its run the Workspace's method of its name. Relative paths (``path``, a
    note's ``paths``) are taken from the working directory."""
    from ...query import PRIMITIVES

    query = next(q for q in PRIMITIVES if q.name == args.command)
    ws = workspace(args, caller)
    values = _query_values(args, query)
    if "path" in values:
        values["path"] = _from_cwd(ws, caller, values["path"])
    if "paths" in values:
        values["paths"] = [_from_cwd(ws, caller, p) for p in values["paths"]]
    return _emit(args, caller, getattr(ws, query.name)(**values, max_tokens=args.max_tokens))


def _cmd_preload(args, caller: Caller) -> int:
    ws = workspace(args, caller)
    # the chain runs to the working directory, as agents load it, unless --cwd says otherwise
    cwd = _from_cwd(ws, caller, args.cwd if args.cwd is not None else ".")
    pre = ws.preload(cwd, budget=args.budget, readme_budget=args.readme_budget)
    if args.json:
        import json

        caller.out.write(json.dumps(pre.to_dict(), ensure_ascii=False) + "\n")
    elif pre.text:  # the prefix as it is, but a cut marker's read-on call as a command line
        text = args.view.calls(pre.text)
        caller.out.write(text if text.endswith("\n") else text + "\n")
    for w in [] if args.json else pre.warnings:
        caller.err.write(f"jitctx: warning: {args.view.hint(w)}\n")
    if not args.json:  # the prefix on stdout stays byte-stable; what it cost is said beside it
        if pre.text:
            caller.err.write(f"jitctx: prefix: {pre.tokens:,} tokens of a {pre.budget:,}-token budget, {len(pre.files):,} file{'s' if len(pre.files) != 1 else ''}\n")
        elif args.budget == 0:
            caller.err.write("jitctx: note: preloading is off (--budget 0): nothing to print\n")
        else:
            from ...preload.instructions import DEFAULT_FALLBACKS

            names = ", ".join(("AGENTS.override.md", "AGENTS.md", *DEFAULT_FALLBACKS))
            where = f"from the root down to {args.view.path(cwd)}" if cwd not in ("", ".") else "in the root"
            caller.err.write(f"jitctx: note: nothing to preload: no instruction file ({names}) {where}, and no README at the root\n")
    return EXIT_FOUND if pre.text else EXIT_EMPTY


def _cmd_watch(args, caller: Caller) -> int:
    """JSON lines until interrupted or ``--timeout``: exit 0 if HEAD moved or a file went stale, else 1."""
    import json
    from datetime import datetime, timezone

    _check_timeout(args.timeout)
    ws = workspace(args, caller)
    changed = False
    with ws:
        named = _watched(ws, caller, [_from_cwd(ws, caller, p) for p in args.paths])
        # the session's prefix runs to the working directory, as `jitctx preload` does
        ws.preload(_from_cwd(ws, caller, "."))
        ws.ledger.record_all(named, ws.head_sha())
        events = ws.watch(timeout=args.timeout, poll=args.poll)
        try:
            for event in events:
                changed = changed or event["event"] in ("head_moved", "stale")
                if event["event"] == "refreshed" and named:
                    ws.ledger.record_all(named, ws.head_sha())  # a refresh forgets changed files: keep watching them
                stamp = datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
                caller.out.write(json.dumps({"time": stamp, **event}, ensure_ascii=False) + "\n")
                caller.out.flush()
        finally:
            events.close()
    return EXIT_FOUND if changed else EXIT_EMPTY


MAX_WATCHED = 10_000  # files `jitctx watch PATH...` tracks


def _check_timeout(timeout: float | None) -> None:
    import math

    from ...errors import QueryError

    if timeout is not None and (math.isnan(timeout) or timeout < 0):
        raise QueryError(f"timeout must be a number of seconds >= 0, got {timeout!r}", hint="pass e.g. --timeout 30, or leave it out to watch until interrupted", timeout=timeout)


def _watched(ws, caller: Caller, paths: list[str]) -> list:
    """The files named on ``jitctx watch``'s command line (a folder: its files, as glob lists them), as deliveries."""
    from ...refs import Delivered

    out: list = []
    for path in paths:
        target = ws.policy.resolve(path, want="any")
        names = [target.path]
        if target.is_dir:
            res = ws.glob("**", target.path, limit=MAX_WATCHED, sort="path")
            names = [r.path for r in res.results if not r.denied]
            if res.truncated:
                caller.err.write(f"jitctx: warning: watching the first {MAX_WATCHED:,} files of {_shown(ws, target.path)}\n")
        for name in names:
            t = ws.policy.resolve(name, want="file")
            out.append(Delivered(t.path, t.real, "read"))
        if len(out) > MAX_WATCHED:
            break
    return out[:MAX_WATCHED]


def _shown(ws, path: str) -> str:
    view = getattr(ws, "view", None)
    return view.path(path) if view is not None else path


def _cmd_context(args, caller: Caller) -> int:
    import json

    from ...window.assemble import check_budget
    from ...window.for_task import context_for_task

    check_budget(args.budget)  # a bad budget fails before any work
    ws = workspace(args, caller)
    # the prefix runs to the working directory, as `jitctx preload` does; a failing preload is a warning
    ctx = context_for_task(ws, args.task, budget=args.budget, cwd=_from_cwd(ws, caller, "."))
    caller.out.write((json.dumps(ctx.to_dict(), ensure_ascii=False) if args.json else args.view.calls(ctx.text).rstrip("\n")) + "\n")
    caller.out.flush()  # warnings follow the window, not interleave with it
    for w in [] if args.json else ctx.warnings:
        caller.err.write(f"jitctx: warning: {args.view.hint(w)}\n")
    return EXIT_EMPTY if ctx.located == 0 else EXIT_FOUND


def _cmd_tools(args, caller: Caller) -> int:
    import json

    from ..tools import export_schemas

    caller.out.write(json.dumps(export_schemas(args.format), indent=2) + "\n")
    return EXIT_FOUND


MCP_INSTALL = "from a jitctx checkout: pip install '.[mcp]'; else: pip install 'mcp>=2.3,<3' into jitctx's environment"


def _cmd_mcp(args, caller: Caller) -> int:
    try:
        from ..mcp import serve
    except ImportError as exc:  # the `mcp` extra (the SDK, anyio, ...) is not installed
        missing = f" (no module {exc.name!r})" if getattr(exc, "name", None) else ""
        error(caller.err, f"jitctx mcp needs the MCP SDK, which is not installed{missing}", MCP_INSTALL)
        return EXIT_ERROR
    return serve(args.root, formats=args.formats)


def _cmd_index(args, caller: Caller) -> int:
    import json
    import time

    from ...code import build
    from ...render import human_size

    ws = workspace(args, caller)
    code = ws.code
    path = code.index.path
    if path is None:
        error(caller.err, f"the index of {ws.root} cannot be kept: {code.index.notice}", "set XDG_CACHE_HOME or JITCTX_CACHE_DIR to a writable folder")
        return EXIT_ERROR
    if args.stop:
        pid = build.stop(path)
        text = f"stopped the background build (pid {pid})" if pid else "no background build runs"
        caller.out.write((json.dumps({"stopped": pid}) if args.json else text) + "\n")
        return EXIT_FOUND if pid else EXIT_EMPTY
    if args.status:
        st = build.state(code)
        current = st["built"] and not st["behind"] and st["building"] is None
        if args.json:
            caller.out.write(json.dumps(st) + "\n")
        else:
            lines = [f"index of {ws.root}: " + ("current" if current else "built" if st["built"] else "not built"), f"store: {path} ({human_size(st['bytes'])})"]
            if st["built"]:
                lines.append(f"files: {st['files']:,} indexed, {st['to_parse']:,} still to parse for definitions")
            if st["behind"]:
                lines.append(f"behind by {st['behind']:,} files (new, changed, not parsed yet or gone)")
            b = st["building"]
            if b is not None:
                far = f"{b['phase']}: {100 * b['done'] // b['total'] if b['total'] else 0}% of {b['total']:,} files" if b["total"] else "listing the files"
                lines.append(f"building in the background ({far}, pid {b['pid']}); stop it with jitctx index --stop")
            if st["failed"]:
                lines.append(f"the last build could not write the store: {st['failed']}")
            caller.out.write("\n".join(lines) + "\n")
        return EXIT_FOUND if current else EXIT_EMPTY
    from ..progress import Reporter

    report = Reporter(caller.err)
    started = time.monotonic()
    try:
        while True:
            code.close()  # the builder opens its own
            got = build.build_here(str(ws.root), path, nice=False, progress=report)
            if got != 1:
                break
            # a background build holds the lock: follow it to its end, then bring the rest up to date
            while (running := build.progress(path)) is not None:
                report(running.phase, running.done, running.total)
                time.sleep(0.2)
    finally:
        report.close()
    if got == 3:
        error(caller.err, f"the index cannot be written: {build.failed(path)}", "free some disk space, or set JITCTX_CACHE_DIR to a writable folder")
        return EXIT_ERROR
    if got != 0:
        error(caller.err, "the index build failed", "set JITCTX_DEBUG=1 and run jitctx index again to see why")
        return EXIT_ERROR
    rows, _waiting = code.index.outlined()
    size = sum(os.path.getsize(p) for p in (path, path + "-wal") if os.path.exists(p))
    seconds = time.monotonic() - started
    if args.json:
        caller.out.write(json.dumps({"root": str(ws.root), "path": path, "files": rows, "bytes": size, "seconds": round(seconds, 2)}) + "\n")
    else:
        caller.out.write(f"index of {ws.root}: {rows:,} files, {human_size(size)} ({path}), in {seconds:.1f} s\n")
    return EXIT_FOUND


def _cmd_session(args, caller: Caller) -> int:
    caller.out.write(os.urandom(12).hex() + "\n")
    return EXIT_FOUND


COMMANDS = {
    **dict.fromkeys(PRIMITIVE_COMMANDS, primitive),
    "preload": _cmd_preload,
    "watch": _cmd_watch,
    "context": _cmd_context,
    "tools": _cmd_tools,
    "mcp": _cmd_mcp,
    "session": _cmd_session,
    "index": _cmd_index,
}  # `serve` runs from the jitctx command (jitctx.client -> jitctx.server.serve), which sits above the CLI
