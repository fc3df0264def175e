"""The public API: sorted, complete, and cheap to import."""

import subprocess
import sys

import jitctx


def test_the_public_api_is_what_dir_shows_and_every_name_resolves():
    assert jitctx.__all__ == [
        "AssembleConfig", "BackendError", "Compaction", "Context", "Excerpt", "FileRef", "JitctxError", "LineRef", "Message",
        "PathError", "Preload", "PreloadFile", "QueryError", "Refreshed", "RepoError", "Result", "Skipped", "Source",
        "TokenizerError", "ToolCall", "Workspace", "__version__", "assemble", "compact", "context_for_task",
    ]  # fmt: skip
    assert dir(jitctx) == jitctx.__all__  # no helpers (annotations, importlib) leak in
    for name in jitctx.__all__:
        assert getattr(jitctx, name) is not None


def test_help_and_version_import_no_heavy_dependency():
    code = (
        "import sys\n"
        "from jitctx.adapters import cli\n"
        "for argv in (['--help'], ['--version'], ['glob', '--help']):\n"
        "    try:\n"
        "        cli.main(argv)\n"
        "    except SystemExit:\n"
        "        pass\n"
        "heavy = [m for m in ('tiktoken', 'git', 'mcp', 'watchdog') if m in sys.modules]\n"
        "sys.stderr.write(repr(heavy))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stderr == "[]"
