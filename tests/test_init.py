"""The public API: sorted, complete, and cheap to import."""

import subprocess
import sys

import jitctx


def test_all_is_sorted_and_resolves():
    assert jitctx.__all__ == sorted(jitctx.__all__)
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
