"""The one env factory for worker processes. Many vectorizers call one factory in the parent
only to read the spaces: :class:`WorkerEnvFn` answers there from the pack's recorded surface,
and builds ``pack.make()`` in any other process."""

from __future__ import annotations

import contextlib
import gc
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

# A worker loads this module to unpickle its factory: the pack's class and the parent's view
# load only where the factory is made, the space comparer only on a pickle mismatch.
__all__ = ["WorkerEnvFn", "mismatch", "order_blob", "spaces_pickle"]

#: This interpreter's mark: a fork child inherits it (with another pid), a fresh interpreter
#: draws its own, so a pid repeated on another host is never taken for the parent.
_HOME_MARK = os.urandom(8).hex()

#: Where a worker reports its start: (its index, the write end of its report pipe).
Report = tuple[int, multiprocessing.connection.Connection]


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
        (``make_vec``'s start reports; such a worker also freezes its GC's objects once
        built, see :meth:`__call__`). None (the default) reports nothing; failures raise.
    blob
        :func:`order_blob` of ``pack`` if the caller has it already (shared by many
        factories).

    Notes
    -----
    The parent is answered from ``pack.surface``; without one, or with ``env_kwargs`` (which may
    change the spaces), the first parent call builds once to record the spaces. Workers check
    the env they build against the spaces the parent was shown and raise
    :class:`~specpack.SpecPackError` naming the difference: buffers sized from one space cannot
    carry another's observations. A spawn or forkserver worker is sent the pack's build order,
    not the pack: there :attr:`pack` is refused (:attr:`label` and :meth:`make` answer).
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
                "specpack.capture(..., record_spaces=True)")
        if pack.vector:
            raise SpecPackError(
                f"pack {pack.label} is vector-only (its spec has only a vector_entry_point); "
                "there is no single env for a worker to build: use specpack.make_vec")
        kwargs = dict(env_kwargs or {})
        for name in kwargs:
            if not isinstance(name, str):
                raise SpecPackError(f"env_kwargs names must be strings, got {short(name)}")
        self._pack: SpecPack | None = pack
        self._blob = blob
        self._order: Order | None = None
        self._label = pack.label
        self.env_kwargs = kwargs
        self.home = (os.getpid(), _HOME_MARK)
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
                "fn.label; send the pack itself if the worker needs it")
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
        return self.home == (os.getpid(), _HOME_MARK)

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
        report = self._report
        if report is None:
            return self.build()
        try:
            env = self.build()
        except Exception as e:  # noqa: BLE001 - reported to the parent, which raises it
            self._send(report, (False, f"{type(e).__name__}: {e}", traceback.format_exc()))
            # The parent raises WorkerError with this report: no second traceback on stderr
            raise SystemExit(1) from None
        # make_vec's worker process is ours and lives as long as this env: what it has loaded
        # and built moves to the GC's permanent generation, so no later collection walks it.
        # A fork worker then never copies its parent's heap for a walk; a spawn worker's exit
        # skips the interpreter's last collections over it (measured: close() of 8 spawn
        # workers ~40 ms instead of ~225 ms; benchmarks/bench_workers.py counts its CPU).
        gc.freeze()
        self._send(report, (True, "", ""))
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
                    "again where the workers run, or give the library pack.make instead")
        return env

    def _send(self, report: Report, outcome: tuple[bool, str, str]) -> None:
        index, writer = report
        with contextlib.suppress(OSError):  # the parent has gone: nothing to tell
            writer.send((index, *outcome))
            writer.close()
        self._report = None

    def __reduce__(self) -> tuple[Any, ...]:
        if self._blob is None:
            self._blob = order_blob(self.pack)
        channel = None
        if self._report is not None and multiprocessing.context.get_spawning_popen() is not None:
            # Only multiprocessing's own pickler, while it starts the worker, can carry a pipe
            # into a spawn/forkserver child (under fork the factory is inherited, not pickled).
            index, writer = self._report
            channel = (index, bytes(ForkingPickler.dumps(writer)))
        if self._shown is None and self._surface is not None:
            self._shown = spaces_pickle(self._surface)  # once here, not in every worker
        return (_rebuild, (self._blob, self._label, self.env_kwargs, self.home, self._surface,
                           self._shown, channel))

    def __repr__(self) -> str:
        kw = f", env_kwargs={short(self.env_kwargs)}" if self.env_kwargs else ""
        return f"WorkerEnvFn({self._label}{kw})"


def _rebuild(blob: bytes, label: str, env_kwargs: dict[str, Any], home: tuple[int, str],
             surface: Surface | None, shown: bytes | None,
             channel: tuple[int, bytes] | None) -> WorkerEnvFn:
    fn = WorkerEnvFn.__new__(WorkerEnvFn)
    fn._pack, fn._blob, fn.env_kwargs, fn.home, fn._surface = None, blob, env_kwargs, home, surface
    fn._order, fn._label, fn._shown = None, label, shown
    fn._report = None if channel is None else (channel[0], pickle.loads(channel[1]))
    return fn


def order_blob(pack: SpecPack) -> bytes:
    """The pickle of ``pack``'s build order, what a spawn or forkserver worker is sent."""
    return pickle.dumps(order_to_send(pack), protocol=pickle.HIGHEST_PROTOCOL)


def _close(env: Any) -> None:
    with contextlib.suppress(Exception):  # closing is best effort
        env.close()


def spaces_pickle(surface: Surface) -> bytes | None:
    """The pickled ``(observation_space, action_space)`` of ``surface``, None if unpicklable:
    equal bytes prove equal spaces; different bytes prove nothing."""
    try:
        return pickle.dumps((surface.observation_space, surface.action_space),
                            protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # noqa: BLE001 - a space that cannot be pickled is compared structurally
        return None


def mismatch(env: Any, surface: Surface, shown: bytes | None = None) -> str | None:
    """How ``env``'s spaces differ from ``surface``'s, or None: first by their pickles (``shown``
    is :func:`spaces_pickle` of ``surface``), then described and compared exactly."""
    if shown is None:
        shown = spaces_pickle(surface)
    if shown is not None:
        try:
            built = spaces_pickle(record_surface(env))
        except Exception:  # noqa: BLE001 - a space that cannot be copied is compared below
            built = None
        if built == shown:
            return None
    from .._exact.describe import describe_space, same

    for name in ("observation_space", "action_space"):
        built_space, shown_space = getattr(env, name, None), getattr(surface, name)
        if not same(describe_space(built_space), describe_space(shown_space)):
            return f"{name}: built {short(built_space)}, shown {short(shown_space)}"
    return None
