"""Run the bundled memdir-lsp: ``<python> memdir_lsp_bundled.py [memdir-lsp arguments]``."""

import os
import sys

# This folder, even when Python does not add a script's own (PYTHONSAFEPATH).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _bundled import use_bundled_libs

if __name__ == "__main__":
    use_bundled_libs()
    from memdir_lsp.__main__ import main

    sys.exit(main())
