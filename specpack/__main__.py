"""``python -m specpack``: the command line (see :mod:`specpack.cli`)."""

from .cli import main

raise SystemExit(main())
