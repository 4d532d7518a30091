"""The gymnasium backend (0.28.1 through 1.x): resolution (:mod:`.resolve`), building
(:mod:`.build`), release differences (:mod:`.compat`, :mod:`.lines`)."""
