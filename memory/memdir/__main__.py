"""``python -m memdir``: the same as the ``memdir`` command."""

from memdir.faces.cli import main

raise SystemExit(main())
