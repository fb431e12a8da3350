"""``python -m memdir``: the same as the ``memdir`` command."""

from memdir.cli import main

raise SystemExit(main())
