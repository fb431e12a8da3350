"""Run the bundled memdir command line: ``<python> memdir_bundled.py [memdir arguments]``.

The extension runs ``memdir where`` with it, and offers ``memdir mcp`` with it when the
interpreter has the MCP SDK (memdir's [mcp] extra) itself: the bundle does not carry it.
"""

import os
import sys

# This folder, even when Python does not add a script's own (PYTHONSAFEPATH).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _bundled import use_bundled_libs

if __name__ == "__main__":
    use_bundled_libs()
    from memdir.faces.cli import main

    sys.exit(main())
