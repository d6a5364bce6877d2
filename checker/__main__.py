"""``python -m checker`` is the ``flcheck`` command."""

from checker.cli import main

raise SystemExit(main())
