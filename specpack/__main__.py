"""``python -m specpack``: the command line (see :mod:`specpack._cli`)."""

from ._cli import main

raise SystemExit(main())
