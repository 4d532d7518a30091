"""``python -m specpack``: the command line (see :mod:`specpack._tools._cli`)."""

from ._tools._cli import main

raise SystemExit(main())
