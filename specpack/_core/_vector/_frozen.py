"""Imported last by a forkserver that preloads a pack's modules (:mod:`._forkserver`): it moves
every object the server's imports made into the GC's permanent generation, so that the workers
it forks never walk them. A walk writes to each object, so each worker copied the pages of the
server's whole heap; ``gc.freeze``'s documentation gives this recipe for servers that fork."""

import gc

gc.freeze()
