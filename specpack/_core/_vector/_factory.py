"""The one env factory for worker processes: builds nothing in the process that made it.

Every vectorizer starts its workers with a list of zero-argument env factories, and many also
call one of them in the parent only to read the spaces: gymnasium's ``AsyncVectorEnv`` (one
throwaway env), Tianshou's ``ShmemVectorEnv`` / ``SubprocVectorEnv(share_memory=True)`` (one
per worker, for the shared-memory buffers), TorchRL's ``ParallelEnv`` (one, for its metadata),
PufferLib's and Sample Factory's multiprocessing backends. For an env that takes seconds to
build, or holds a GPU or a license, that parent build is pure cost.

:class:`WorkerEnvFn` answers that parent call from the pack's recorded surface (its spaces,
metadata and render mode: ``capture(..., record_spaces=True)`` or a captured live env): in the
process that made it (same pid *and* same interpreter mark, so a pid repeated in another
interpreter is never taken for the parent) calling it returns a
:class:`~specpack._core._vector._view.ParentView` that shows the spaces and refuses to be stepped; in
any other process (a fork, spawn or forkserver worker, a Ray actor) it returns
``pack.make(**env_kwargs)``, after checking that the built env's spaces
are the ones the parent was shown (first by their pickled form, which is cheap and imports
nothing; only when that differs by the structural comparison of :mod:`specpack._tools._verify`, which
decides and names the difference). It is a plain-picklable object (no cloudpickle needed), so
every start method can carry it. A spawn or forkserver worker is sent the pack's build order
(:func:`order_blob`) as pickle bytes, loaded when it builds, so an order that cannot load
there fails inside the build (and is reported).

``make_vec``'s async workers use the same factory with a report channel: each worker sends
back over its own pipe whether it could build, so the parent raises the child's error as
:class:`~specpack.WorkerError` (see :mod:`specpack._core._vector._envs`). ``specpack.adapters`` gives it
to other libraries' vectorizers.
"""

from __future__ import annotations

import multiprocessing.connection
import multiprocessing.context
import os
import pickle
import traceback
from collections.abc import Mapping
from multiprocessing.reduction import ForkingPickler
from typing import TYPE_CHECKING, Any

from .._build import Order, order_to_send
from .._errors import SpecPackError
from .._surface import record_surface
from .._text import short

if TYPE_CHECKING:
    from .._pack import SpecPack
    from .._surface import Surface

# A worker loads this module to unpickle its factory: the pack's class and the parent's view of
# the spaces load only where the factory is made (a worker builds from the pack's order), and the
# space comparer only when the built spaces do not pickle as the parent's.

__all__ = ["WorkerEnvFn", "mismatch", "order_blob", "spaces_pickle"]

#: This interpreter's mark. A fork child inherits it (but has another pid); a fresh interpreter
#: (spawn, forkserver, another host) draws its own, so a pid that happens to repeat elsewhere
#: is never taken for the parent.
_HOME_MARK = os.urandom(8).hex()

#: Where a worker reports its start: (its index, the write end of its report pipe).
Report = tuple[int, multiprocessing.connection.Connection]


def _here() -> tuple[int, str]:
    return (os.getpid(), _HOME_MARK)


class WorkerEnvFn:
    """``pack.make(**env_kwargs)`` in workers; the recorded spaces only in the making process.

    Parameters
    ----------
    pack
        The pack every worker builds.
    env_kwargs
        Keyword arguments merged over the pack's, as in ``pack.make(**env_kwargs)``.
    report
        ``(index, write end of a pipe)``: a worker sends ``(index, ok, message, traceback)``
        there once it has built (or failed to build) its env, and exits quietly on a failure
        (``make_vec``'s start reports). None (the default) reports nothing; failures raise.
    blob
        :func:`order_blob` of ``pack`` if the caller has it already (shared by many
        factories).

    Notes
    -----
    With no ``env_kwargs`` the parent is answered from ``pack.surface``. A pack without a
    recorded surface, or ``env_kwargs`` (which may change the spaces), costs one build in the
    parent on the first parent call, once per factory object: the surface is recorded from it
    and the env closed. Workers check the env they build against the surface the parent was
    shown and raise :class:`~specpack.SpecPackError` naming the difference, since buffers sized
    from one space cannot carry another's observations.

    A spawn or forkserver worker is sent the pack's build order (:func:`order_blob`), not the
    pack: it builds without loading the pack's class, and there :attr:`pack` is refused
    (:attr:`label` and :meth:`make` answer instead). A fork worker inherits the pack.
    """

    def __init__(
        self,
        pack: SpecPack,
        env_kwargs: Mapping[str, Any] | None = None,
        *,
        report: Report | None = None,
        blob: bytes | None = None,
    ) -> None:
        from .._pack import SpecPack  # the making process has it; a worker gets an order

        if not isinstance(pack, SpecPack):
            raise SpecPackError(
                f"worker_env_fn takes a SpecPack, got {type(pack).__name__}; make one with "
                "specpack.capture(..., record_spaces=True)"
            )
        if pack.vector:
            raise SpecPackError(
                f"pack {pack.label} is vector-only (its spec has only a vector_entry_point); "
                "there is no single env for a worker to build: use specpack.make_vec"
            )
        kwargs = dict(env_kwargs or {})
        for name in kwargs:
            if not isinstance(name, str):
                raise SpecPackError(f"env_kwargs names must be strings, got {short(name)}")
        self._pack: SpecPack | None = pack
        self._blob = blob
        self._order: Order | None = None
        self._label = pack.label
        self.env_kwargs = kwargs
        self.home = _here()
        self._surface: Surface | None = None if kwargs else pack.surface
        self._shown: bytes | None = None
        self._report = report

    @property
    def pack(self) -> SpecPack:
        """The pack, where it is: in the process that made the factory and in fork workers."""
        if self._pack is None:
            raise SpecPackError(
                f"{self!r} was sent to this process as pack {self._label}'s build order, "
                "not as the pack: build with fn.make(**kwargs) (or call fn), name it with "
                "fn.label; send the pack itself if the worker needs it"
            )
        return self._pack

    @property
    def label(self) -> str:
        """The pack's short name (its id, else its entry point's name)."""
        return self._label

    def make(self, **kwargs: Any) -> Any:
        """``pack.make(**env_kwargs, **kwargs)`` here, without the check of the spaces.

        Parameters
        ----------
        **kwargs
            Merged over ``env_kwargs`` (which are merged over the pack's).
        """
        kw = {**self.env_kwargs, **kwargs}
        if self._pack is not None:
            return self._pack.make(**kw)
        if self._order is None:
            assert self._blob is not None
            order = pickle.loads(self._blob)
            if not isinstance(order, Order):  # pragma: no cover - bytes we pickled ourselves

                raise SpecPackError(f"a worker env factory carried {short(order)}, not an "
                                    "order")
            self._order = order
        return self._order.make(kw)

    @property
    def in_home_process(self) -> bool:
        """Whether this is the process that made the factory (where calls only describe)."""
        return self.home == _here()

    @property
    def recorded(self) -> Surface | None:
        """The surface the parent was (or will be) shown, if known yet; nothing is built."""
        return self._surface

    def surface(self) -> Surface:
        """What the parent is shown: the pack's recorded surface, else one recorded here."""
        if self._surface is None:
            env = self.pack.make(**self.env_kwargs)
            try:
                self._surface = record_surface(env)
            finally:
                _close(env)
        return self._surface

    def __call__(self) -> Any:
        """A :class:`ParentView` in the making process, the built env anywhere else."""
        if self.in_home_process:
            from ._view import ParentView

            return ParentView(self.surface(), self.label)
        if self._report is None:
            return self.build()
        try:
            env = self.build()
        except Exception as e:  # noqa: BLE001 - reported to the parent, which raises it
            self._send((False, f"{type(e).__name__}: {e}", traceback.format_exc()))
            # The parent raises WorkerError with this report; exit quietly (no second
            # traceback on stderr, whatever worker function runs us).
            raise SystemExit(1) from None
        self._send((True, "", ""))
        return env

    def build(self) -> Any:
        """Build the env here, whatever process this is, checked against the surface."""
        env = self.make()
        if self._surface is not None:
            if self._shown is None:
                self._shown = spaces_pickle(self._surface)
            problem = mismatch(env, self._surface, self._shown)
            if problem is not None:
                _close(env)
                raise SpecPackError(
                    f"pack {self.label}: the env built in this worker does not match the "
                    f"spaces its parent was shown ({problem}); the env's spaces depend on "
                    "something other than the pack (a file, the host, randomness). Capture "
                    "again where the workers run, or give the library pack.make instead"
                )
        return env

    def _send(self, outcome: tuple[bool, str, str]) -> None:
        if self._report is None:
            return
        index, writer = self._report
        try:
            writer.send((index, *outcome))
            writer.close()
        except OSError:  # the parent has gone; nothing to tell
            pass
        self._report = None

    def __reduce__(self) -> tuple[Any, ...]:
        if self._blob is None:
            self._blob = order_blob(self.pack)
        channel = None
        if self._report is not None and multiprocessing.context.get_spawning_popen() is not None:
            # The pipe's write end travels through multiprocessing's own pickler while the
            # worker is being started (a plain or cloudpickle dump could not carry a pipe into
            # a spawn/forkserver child); under fork the object is inherited, not pickled.

            index, writer = self._report
            channel = (index, bytes(ForkingPickler.dumps(writer)))
        if self._shown is None and self._surface is not None:
            self._shown = spaces_pickle(self._surface)  # once here, not in every worker
        return (_rebuild, (self._blob, self._label, self.env_kwargs, self.home, self._surface,
                           self._shown, channel))

    def __repr__(self) -> str:
        kw = f", env_kwargs={short(self.env_kwargs)}" if self.env_kwargs else ""
        return f"WorkerEnvFn({self._label}{kw})"


def _rebuild(
    blob: bytes,
    label: str,
    env_kwargs: dict[str, Any],
    home: tuple[int, str],
    surface: Surface | None,
    shown: bytes | None,
    channel: tuple[int, bytes] | None,
) -> WorkerEnvFn:
    fn = WorkerEnvFn.__new__(WorkerEnvFn)
    fn._pack, fn._blob, fn.env_kwargs, fn.home, fn._surface = None, blob, env_kwargs, home, surface
    fn._order, fn._label = None, label
    fn._shown = shown
    fn._report = None if channel is None else (channel[0], pickle.loads(channel[1]))
    return fn


def order_blob(pack: SpecPack) -> bytes:
    """The pickle of ``pack``'s build order, what a spawn or forkserver worker is sent.

    Parameters
    ----------
    pack
        The pack the workers build.
    """
    return pickle.dumps(order_to_send(pack), protocol=pickle.HIGHEST_PROTOCOL)


def _close(env: Any) -> None:
    try:
        env.close()
    except Exception:  # noqa: BLE001 - closing is best effort
        pass


def spaces_pickle(surface: Surface) -> bytes | None:
    """The pickled ``(observation_space, action_space)`` of ``surface``, None if unpicklable.

    Two spaces recorded alike (:func:`~specpack._core._surface.record_surface`) whose pickles are the
    same bytes hold the same state, so they are identical; different bytes prove nothing (an
    equal space may pickle otherwise) and :func:`mismatch` then compares them structurally.

    Parameters
    ----------
    surface
        A recorded surface.
    """
    try:
        return pickle.dumps((surface.observation_space, surface.action_space),
                            protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # noqa: BLE001 - a space that cannot be pickled is compared structurally
        return None


def mismatch(env: Any, surface: Surface, shown: bytes | None = None) -> str | None:
    """How ``env``'s observation or action space differs from ``surface``'s, or None.

    The spaces are first recorded as the parent's were and pickled: the same bytes as
    ``shown`` mean the same spaces, with nothing imported. Otherwise each space is described
    structurally and compared exactly (:mod:`specpack._tools._verify`, loaded then).

    Parameters
    ----------
    env
        The env built in a worker.
    surface
        The spaces the parent was shown.
    shown
        :func:`spaces_pickle` of ``surface``, if computed already (e.g. in the parent).
    """
    if shown is None:
        shown = spaces_pickle(surface)
    if shown is not None:
        try:
            built = spaces_pickle(record_surface(env))
        except Exception:  # noqa: BLE001 - a space that cannot be copied is compared below
            built = None
        if built == shown:
            return None
    # Lazy: a worker whose spaces pickle as the parent's never loads the verifier.
    from .._exact.describe import describe_space, same

    for name in ("observation_space", "action_space"):
        built_space, shown_space = getattr(env, name, None), getattr(surface, name)
        if not same(describe_space(built_space), describe_space(shown_space)):
            return f"{name}: built {short(built_space)}, shown {short(shown_space)}"
    return None
