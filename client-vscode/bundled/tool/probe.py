"""What an interpreter offers the extension, as one JSON line on stdout.

``<python> probe.py`` looks at the interpreter's own environment (importStrategy
fromEnvironment); ``<python> probe.py --bundled`` at the extension's bundled libraries
first (useBundled). One process answers everything the extension needs before it starts
the server: the Python version, whether memdir and its server import (and memdir's
version), and whether ``memdir mcp`` (memdir's [mcp] extra, which the bundle does not carry)
could run there.
"""

# ruff: noqa: UP032  (no f-strings: an old Python must parse this file to say it is too old)

import json
import os
import sys

# This folder, even when Python does not add a script's own (PYTHONSAFEPATH).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _bundled

#: Each extra's modules, for a memdir from before memdir.extras (which says it itself).
OLD_EXTRAS = {"mcp": ("mcp", "anthropic")}


def extra_missing(extra):
    """The first module of one of memdir's extras that is not installed, or None."""
    try:
        from memdir.extras import missing

        return missing(extra)
    except ImportError:
        import importlib.util

        for module in OLD_EXTRAS[extra]:
            if importlib.util.find_spec(module) is None:
                return module
        return None


def probe(bundled):
    report = {"python": _bundled.python_version(), "executable": sys.executable, "bundled": bundled}
    if sys.version_info < _bundled.MIN_PYTHON:
        report["error"] = _bundled.too_old_message()
        return report
    if bundled:
        problem = _bundled.libs_problem()
        if problem is not None:
            report["error"] = problem
            return report
        _bundled.use_bundled_libs()
    try:
        import memdir
        import memdir_lsp.__main__  # noqa: F401  (its command line: light, unlike the server)
    except ImportError as error:
        report["missing"] = error.name or ""
        report["error"] = "{}: {}".format(type(error).__name__, error)
        return report
    except Exception as error:  # a broken install: the message is all the user can act on
        report["error"] = "{}: {}".format(type(error).__name__, error)
        return report
    report["memdir"] = memdir.__version__
    report["memdirPath"] = memdir.__file__
    report["mcpMissing"] = extra_missing("mcp")
    return report


if __name__ == "__main__":
    sys.stdout.write(json.dumps(probe("--bundled" in sys.argv[1:])) + "\n")
