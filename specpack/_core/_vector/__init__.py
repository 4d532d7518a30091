"""Vector envs built from a pack (public face: :mod:`specpack.vector`).

:mod:`._make` (``make_vec``), :mod:`._envs` (the vector env classes with worker start reports),
:mod:`._factory` (what a worker unpickles and calls: it imports nothing of ``make_vec``),
:mod:`._forkserver` (preloading a forkserver) and :mod:`._view` (the parent's view of spaces).
"""
