"""``specpack audit``: find every env and wrapper of a registry that does not survive a process.

For each selected env the audit does what a user's worker would: it captures the env here
(``specpack.capture(id)``), builds a reference twice where it is registered (a local repeat
control), sends the pickled pack to a *fresh* long-lived worker that never ran this process's
imports or registration code, rebuilds it there and compares with the engine ``verify`` uses
(spaces, layers, ``render_mode``, spec fields, a rollout over the same seeded actions). It also
checks what the env records about its constructor arguments (EzPickle, the live wrapper stack).
Each env gets exactly one status (see :data:`STATUSES`; :data:`FAILING` fail the audit); only
a rollout that ran to its end on both sides and matched is ``identical``.

Modules, each one concern: :mod:`.report` (statuses, findings, the report), :mod:`.table`
(its summary table), :mod:`.output` (what the envs print, captured per env), :mod:`.select`
(which ids), :mod:`.classify` (exception to verdict), :mod:`.checks` (EzPickle, live stack),
:mod:`.control` (the local repeat control, and the confirmation of a rebuild that differs),
:mod:`.env_job` and :mod:`.wrapper_job` (+ :mod:`.wrapper_fixtures`, :mod:`.wrapper_record`), :mod:`.vector_job`, :mod:`.scheduler` (jobs over workers of
:mod:`specpack._core._process`),
:mod:`.api` (``audit``, ``audit_one``), :mod:`.options` (the defaults the command line
shows). This package imports none of them: building the command line's parsers imports
:mod:`.options` alone. The command line (``specpack audit``) is
:mod:`specpack.audit`; it prints :func:`.table.summary` or ``report.to_json()``.
"""
