"""The one comparison engine (verify, diff, seal and check, the audit): ``trace`` (an env's
:class:`~.trace.Trace`, the action plan), ``compare``, ``jobs`` (what a worker runs), ``judge``
and ``engine`` (verify). Import each name from its module: a worker then loads only its job's."""
