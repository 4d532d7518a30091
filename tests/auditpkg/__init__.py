"""A small env package with one env of each portability failure that ``specpack audit`` finds.

Importable as ``auditpkg`` with ``tests/`` on ``PYTHONPATH`` (the audit's worker processes
inherit it). Importing it registers:

- ``auditpkg/Good-v0``: portable; the audit reports it identical.
- ``auditpkg/EzPickleGap-v0``: forgets ``goal`` in ``EzPickle.__init__`` (pickling the env
  rebuilds it with the default goal).
- ``auditpkg/WrapperGap-v0``: its factory wraps the env in a ``RecordConstructorArgs`` wrapper
  that does not record ``scale`` (``env.spec``/``capture(env)`` would rebuild ``scale=1.0``).
- ``auditpkg/OffsetWrapped-v0``: a factory whose wrapper records its argument; identical.
- ``auditpkg/HiddenWrapperGap-v0``: a factory whose wrapper forgets ``amount`` and stores it
  under another name; only a rebuild of the live instance shows the difference.
- ``auditpkg/HashDependent-v0``: its observations depend on ``hash(str)``, which differs per
  process under hash randomisation.
- ``auditpkg/NeedsLaunch-v0``: its constructor needs a module global that only the launcher
  (``auditpkg.launch``, what a user's training script runs first) sets; a fresh interpreter
  never ran it, so the constructor raises there.
- ``auditpkg/MissingDep-v0``: its module imports a package that is not installed.
- ``auditfaults/Hang-v0`` and ``auditfaults/Crash-v0``: hang or kill the process in a fresh
  interpreter (for the audit's per-env timeout and worker replacement).
"""

from gymnasium.envs.registration import register

register(id="auditpkg/Good-v0", entry_point="auditpkg.envs:GoodEnv", max_episode_steps=40)
register(
    id="auditpkg/EzPickleGap-v0",
    entry_point="auditpkg.envs:EzPickleGapEnv",
    kwargs={"gravity": 3.0, "goal": 5.0},
    max_episode_steps=40,
)
register(
    id="auditpkg/WrapperGap-v0",
    entry_point="auditpkg.envs:make_scaled",
    kwargs={"scale": 2.0},
    max_episode_steps=40,
)
register(
    id="auditpkg/OffsetWrapped-v0",
    entry_point="auditpkg.envs:make_offset",
    kwargs={"offset": 0.5},
    max_episode_steps=40,
)
register(
    id="auditpkg/HiddenWrapperGap-v0",
    entry_point="auditpkg.envs:make_bonus",
    kwargs={"amount": 3.0},
    max_episode_steps=40,
)
register(id="auditpkg/HashDependent-v0", entry_point="auditpkg.envs:HashEnv", max_episode_steps=40)
register(id="auditpkg/NeedsLaunch-v0", entry_point="auditpkg.envs:NeedsLaunchEnv")
register(id="auditpkg/MissingDep-v0", entry_point="auditpkg.fancy:FancyPhysicsEnv")

register(id="auditfaults/Hang-v0", entry_point="auditpkg.envs:HangEnv")
register(id="auditfaults/Crash-v0", entry_point="auditpkg.envs:CrashEnv")
