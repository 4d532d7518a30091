"""Vector envs built from a pack (public face: :mod:`specpack.vector`): ``make_vec``
(:mod:`._make`), its env classes (:mod:`._envs`), the worker env factory (:mod:`._factory`),
forkserver preloading (:mod:`._forkserver`) and the parent's view (:mod:`._view`)."""
