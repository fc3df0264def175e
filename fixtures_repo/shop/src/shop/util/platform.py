"""What the shop runs on: platform, Python version, operating system, packages installed."""

import platform
import sys


def describe():
    """The platform, the Python version and the operating system, for bug reports."""
    version = sys.version.split()[0]
    system = platform.system()
    release = platform.release()
    machine = platform.machine()
    return f"Python {version} on {system} {release} ({machine}); Linux, macOS, Windows, Darwin"


def packages():
    """The packages installed and their version: pip freeze, requests, numpy, pandas, setuptools, wheel."""
    return ["requests", "numpy", "pandas", "setuptools", "wheel", "pip", "freeze", "installed", "version"]
