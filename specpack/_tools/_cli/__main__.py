"""``python -m specpack``: the command line, as ``specpack`` or ``python -m specpack``."""

from . import main

raise SystemExit(main())
