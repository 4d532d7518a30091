"""The ``specpack`` command line: capture, inspect, verify, check, run, demo and audit packs.

``specpack capture CartPole-v1 -o cartpole.pack`` writes a pack file; ``specpack inspect``
shows what it holds without executing any of its code; ``specpack verify`` rebuilds it in a
fresh interpreter and compares; ``specpack check`` compares a sealed file's rebuild with the
seal it carries; ``specpack run`` plays a seeded rollout; ``specpack demo`` shows the
registry problem specpack solves; ``specpack audit`` checks a whole registry (see
:func:`specpack.audit`).

Each command is a short module over library calls (:mod:`.capture`, :mod:`.describe`,
:mod:`.verify`, :mod:`.check`, :mod:`.run`, :mod:`.demo`, :mod:`.audit`); :mod:`.parsers`
holds every option, :mod:`.main` the entry point. Exit codes: 0 ok, 1 not identical
(``verify``, ``check``) or not portable (``audit``), 2 bad input or a failed build. Errors
are one line naming the culprit; ``--debug`` adds the traceback.
"""

from __future__ import annotations

from .main import main
from .output import EXIT_BAD_INPUT, EXIT_NOT_IDENTICAL, EXIT_OK

__all__ = ["EXIT_BAD_INPUT", "EXIT_NOT_IDENTICAL", "EXIT_OK", "main"]
