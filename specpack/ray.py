"""Cluster-wide env ids for Ray: :func:`runtime_env`'s setup hook registers the captured envs
in every Ray worker process of the job, where an id registered in the driver is unknown
(docs/recipes/cluster.md). This module imports no Ray."""

from __future__ import annotations

import importlib
import os
import pickle
import socket
from collections.abc import Callable, Mapping
from typing import Any

from ._core._capture import capture
from ._core._errors import BuildError, CaptureError, UncarriableValueError
from ._core._pack import SpecPack
from ._core._text import one_line, short

__all__ = ["RegisterPacks", "runtime_env"]

#: The runtime_env key Ray runs in each new worker process of the job.
HOOK_KEY = "worker_process_setup_hook"


def runtime_env(*ids_or_packs: str | SpecPack,
                base: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A Ray ``runtime_env`` that registers the given envs in every Ray worker of the job.

    Pass it to ``ray.init(runtime_env=...)``: in each worker process, on every node,
    ``gymnasium.make(id)`` then builds exactly ``pack.make()`` (``pack.register(id)``)::

        if __name__ == "__main__":
            gymnasium.register("CustomAnt-v0", entry_point=CustomAnt, max_episode_steps=500)
            ray.init(address="auto", runtime_env=specpack.ray.runtime_env("CustomAnt-v0"))

    Parameters
    ----------
    *ids_or_packs
        Env ids registered in this process (captured here and now, with
        :func:`specpack.capture`) or packs (registered under ``pack.id``). At least one.
    base
        A runtime_env to extend (a dict or ``ray.runtime_env.RuntimeEnv``; copied, never
        changed). Its own ``worker_process_setup_hook`` still runs first in each worker.

    Returns
    -------
    dict
        ``base``'s fields plus ``worker_process_setup_hook``: a :class:`RegisterPacks`.

    Raises
    ------
    specpack.UnknownEnvError
        An id is not registered here (the message suggests close ids).
    specpack.CaptureError
        No ids, an argument that is neither an id nor a pack, a pack without an id, two
        different packs under one id, or a bad ``base`` or hook in it.
    specpack.UncarriableValueError
        A pack does not pickle (or does not unpickle again) in this process.
    """
    if not ids_or_packs:
        raise CaptureError(
            "specpack.ray.runtime_env() needs at least one env id or pack, e.g. "
            "specpack.ray.runtime_env('CustomAnt-v0')"
        )
    packs: dict[str, SpecPack] = {}
    for item in ids_or_packs:
        env_id, pack = _resolve(item)
        if (earlier := packs.get(env_id)) is not None and earlier != pack:
            raise CaptureError(
                f"specpack.ray.runtime_env() got two different packs for {env_id!r} "
                f"({earlier.label} and {pack.label}); pass one per id"
            )
        packs[env_id] = pack
    hook = RegisterPacks(tuple((env_id, _pickled(env_id, p)) for env_id, p in packs.items()))
    return _merged(base, hook)


def _resolve(item: object) -> tuple[str, SpecPack]:
    """The id to register and the pack for one argument of :func:`runtime_env`."""
    if isinstance(item, str):
        pack = capture(item)
        return pack.id or item, pack
    if isinstance(item, SpecPack):
        if not item.id:
            raise CaptureError(
                f"the pack {item.label} has no id (it was captured from a callable or a live "
                "env), so workers could not look it up by name; register it in the driver "
                "(gymnasium.register('MyEnv-v0', entry_point=...)) and pass the id, or pass "
                "the pack itself to your tasks and call pack.make() there"
            )
        return item.id, item
    raise CaptureError(
        "specpack.ray.runtime_env() takes env ids (str) and SpecPacks, got "
        f"{type(item).__name__} {short(item)}"
    )


def _pickled(env_id: str, pack: SpecPack) -> bytes:
    """``pack`` as plain-pickle bytes, proven to load again here (fails in the driver)."""
    try:
        blob = pickle.dumps(pack, protocol=pickle.HIGHEST_PROTOCOL)
        back = pickle.loads(blob)
    except Exception as e:
        raise UncarriableValueError(
            f"the pack for {env_id!r} cannot travel to Ray workers: pickling it failed with "
            f"{one_line(e)}; capture the env again (specpack.capture({env_id!r})) and check "
            "its kwargs"
        ) from e
    if back != pack:
        raise UncarriableValueError(
            f"the pack for {env_id!r} changes when pickled and unpickled, so workers would "
            "build another env; capture the env again (specpack.capture"
            f"({env_id!r})) and check its kwargs"
        )
    return blob


def _merged(base: Mapping[str, Any] | None, hook: RegisterPacks) -> dict[str, Any]:
    """A copy of ``base`` with ``hook`` as its setup hook (``base``'s own hook chained)."""
    if base is None:
        return {HOOK_KEY: hook}
    if not isinstance(base, Mapping):
        raise CaptureError(
            f"specpack.ray.runtime_env(base=...) takes a runtime_env dict, got "
            f"{type(base).__name__} {short(base)}"
        )
    # Ray writes into nested fields (env_vars) of the dict it is given: copy them too.
    out = {k: (dict(v) if isinstance(v, dict) else list(v) if isinstance(v, list) else v)
           for k, v in base.items()}
    then = out.get(HOOK_KEY)
    if not (then is None or callable(then) or (isinstance(then, str) and "." in then.strip("."))):
        raise CaptureError(
            f"base[{HOOK_KEY!r}] must be a callable or a 'module.function' string (as Ray "
            f"takes it), got {type(then).__name__} {short(then)}"
        )
    out[HOOK_KEY] = hook if then is None else RegisterPacks(hook.packs, then=then)
    return out


class RegisterPacks:
    """The ``worker_process_setup_hook``: registers the carried packs in the worker it runs in.

    Each pack is held as plain-pickle bytes (a pack that fails to load is named in the error).
    Ray runs it once per worker process, before its first task; an error stops that worker.

    Parameters
    ----------
    packs
        ``(env id, pickled pack)`` pairs, registered in this order.
    then
        Another setup hook (a callable, or a ``"module.function"`` string as Ray takes it) to
        run first, in the same worker.
    """

    #: Ray names the hook by ``__name__`` (in its logs and the runtime_env it records).
    __name__ = "specpack.ray.runtime_env"

    def __init__(self, packs: tuple[tuple[str, bytes], ...],
                 then: Callable[[], Any] | str | None = None) -> None:
        self.packs = packs
        self.then = then

    @property
    def ids(self) -> tuple[str, ...]:
        """The env ids this hook registers."""
        return tuple(env_id for env_id, _ in self.packs)

    def __repr__(self) -> str:
        then = "" if self.then is None else f", then={short(self.then)}"
        return f"RegisterPacks({', '.join(self.ids)}{then})"

    def __call__(self) -> None:
        """Run ``then`` (if any), then register every pack under its id in this process."""
        if isinstance(self.then, str):  # "module.function", as Ray takes it
            module, _, name = self.then.rpartition(".")
            getattr(importlib.import_module(module), name)()
        elif self.then is not None:
            self.then()
        for env_id, blob in self.packs:
            try:
                pack = pickle.loads(blob)
            except Exception as e:
                raise BuildError(
                    f"specpack.ray: the pack for {env_id!r} cannot be loaded in this Ray worker "
                    f"(host {socket.gethostname()}, pid {os.getpid()}): {one_line(e)}; "
                    "install the same specpack (and gymnasium) "
                    "versions on every node as in the driver"
                ) from e
            # The registry may hold another env under the id (a built-in the driver
            # re-registered, one the `then` hook registered): the captured pack wins.
            registration = importlib.import_module(f"{pack.backend}.envs.registration")
            existing = registration.registry.get(env_id)
            if existing is not None and getattr(existing.entry_point, "pack", None) != pack:
                registration.registry.pop(env_id)
            pack.register(env_id)
