"""Running jobs in other processes: the one worker protocol (verify, audit, CLI).

A :class:`~.worker.Worker` runs ``"package.module:function"`` jobs one at a time in a child of a
start method (:data:`~.launch.Where`); answers come back as typed JSON (never pickle) in an
:class:`~.protocol.Outcome`. Import each name from its module: a fresh child then loads only
what it runs (``child``, ``protocol``, ``tree``), not the parent's side.
"""
