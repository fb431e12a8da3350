"""Shared by the launchers in this folder: the Python check and the bundled libraries' path.

The launchers run under whatever interpreter the user's settings pick, so this file (and each
launcher) keeps to syntax that old Pythons still parse: an interpreter that is too old must get
a sentence, not a SyntaxError.
"""

# ruff: noqa: UP032  (no f-strings: an old Python must parse this file to say it is too old)

import os
import sys

MIN_PYTHON = (3, 11)
#: memdir and its pure-Python dependencies, filled by scripts/bundle-vscode-server.sh.
LIBS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "libs")


def python_version():
    return ".".join(str(part) for part in sys.version_info[:3])


def too_old_message():
    return "memdir needs Python {}.{} or newer; {} is Python {}.".format(
        MIN_PYTHON[0], MIN_PYTHON[1], sys.executable, python_version()
    )


def libs_problem():
    """Why the bundled libraries cannot be used, or None."""
    if sys.version_info < MIN_PYTHON:
        return too_old_message()
    if not os.path.isdir(LIBS):
        # A development checkout before scripts/bundle-vscode-server.sh, or a broken install.
        return "the extension's bundled libraries are missing: " + LIBS
    return None


def use_bundled_libs():
    """Exit with a sentence on a Python that is too old, else put the bundled libs first.

    First, so that the bundle wins over an older memdir (or pygls) in the interpreter's own
    environment, as useBundled promises.
    """
    problem = libs_problem()
    if problem is not None:
        sys.stderr.write("memdir: " + problem + "\n")
        sys.exit(3)
    if LIBS not in sys.path:
        sys.path.insert(0, LIBS)
