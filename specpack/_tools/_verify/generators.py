"""Global random generators in the proof: which call of a rollout draws from them.

``reset(seed=...)`` never seeds ``random``, numpy's legacy global ``RandomState`` or torch's
default generator. :class:`Watch` records each call that changed one's state (a *touch*); two
builds in one process disagree on the first touch the env did not seed (:func:`first_unseeded`).
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import sys
from collections.abc import Callable
from typing import Any

__all__ = ["GENERATORS", "HASH_FIX", "MAX_TOUCHES", "Watch", "call_name", "drawn",
           "first_unseeded", "generator_finding"]

#: The generators watched, by the name a finding gives them.
GENERATORS = ("random", "numpy.random", "torch")
#: The fix for a rollout that follows hash order (the other cause of ``unseeded``).
HASH_FIX = ("set PYTHONHASHSEED to one value in every process that runs it, or make the env "
            "independent of hash order (sort a set before iterating it)")
#: Touches kept per build (bounds its memory; the first disagreement is what a verdict names).
MAX_TOUCHES = 1_000_000

_FIX = {
    "random": ("seed it (random.seed(...)), or give the env its own generator "
               "(random.Random(seed) made in reset, or self.np_random)"),
    "numpy.random": ("seed it (np.random.seed(...)), or give the env its own generator "
                     "(draw from self.np_random, which reset(seed=...) seeds)"),
    "torch": ("seed it (torch.manual_seed(...)), or give the env its own generator "
              "(a torch.Generator seeded in reset)"),
}
_WHAT = {
    "random": "Python's random module's global generator (random.random(), random.choice()...)",
    "numpy.random": ("numpy.random's global generator (np.random.rand(), np.random.choice()... "
                     "the legacy RandomState)"),
    "torch": "torch's default generator (torch.rand(), torch.randn()...)",
}


def _random_state() -> Any:
    module = sys.modules.get("random")
    return None if module is None else module.getstate()


def _numpy_state() -> Any:
    rand = _numpy_rand()
    if rand is None:
        return None
    name, key, pos, has_gauss, gauss = rand.get_state(legacy=True)
    return (name, key.tobytes(), pos, has_gauss, gauss)


def _numpy_rand() -> Any:
    module = sys.modules.get("numpy.random")
    return getattr(getattr(module, "mtrand", None), "_rand", None)


def _torch_state() -> Any:
    torch = sys.modules.get("torch")
    get = getattr(getattr(torch, "random", None), "get_rng_state", None)
    return None if get is None else bytes(get().numpy().tobytes())


#: The Mersenne Twister's state in C: 624 32-bit words and an index (``random``'s and numpy's
#: MT19937 alike), read as raw bytes where that reads the very state the slow readers give.
_MT_BYTES = 4 + 624 * 4


def _random_raw() -> Any:
    """A reader of ``random``'s global state as raw bytes (a few microseconds, where
    ``getstate()`` builds 625 ints), or None where that differs from ``getstate()``."""
    module = sys.modules.get("random")
    inst = getattr(module, "_inst", None)
    head = object.__basicsize__
    if inst is None or type(inst).__basicsize__ < head + _MT_BYTES:
        return None

    def read() -> Any:
        return ctypes.string_at(id(inst) + head, _MT_BYTES), inst.gauss_next

    with contextlib.suppress(Exception):  # else the slow reader
        raw, _ = read()
        version, words, _ = inst.getstate()
        index = int.from_bytes(raw[:4], sys.byteorder)
        state = [int.from_bytes(raw[i:i + 4], sys.byteorder) for i in range(4, _MT_BYTES, 4)]
        if version == 3 and list(words) == [*state, index]:
            return read
    return None


def _numpy_raw() -> Any:
    """A reader of numpy's global MT19937 state as raw bytes at ``BitGenerator.ctypes``'
    address (``get_state()`` copies it), or None where that differs from ``get_state``. (The
    cached Gaussian is not in it: the call that drew the pair leaves the touch.)"""
    rand = _numpy_rand()
    bit = getattr(rand, "_bit_generator", None)
    with contextlib.suppress(Exception):  # else the slow reader
        address = int(bit.ctypes.state_address)  # type: ignore[union-attr]

        def read(keep: Any = bit) -> Any:  # keeps the bit generator: the address stays its state
            return ctypes.string_at(address, _MT_BYTES)

        name, key, pos, _, _ = rand.get_state(legacy=True)
        if name == "MT19937" and read() == key.astype("=u4").tobytes() + int(pos).to_bytes(
                4, sys.byteorder, signed=True):
            return read
    return None


def _readers() -> list[Callable[[], Any]]:
    """One reader per generator of :data:`GENERATORS` (one not loaded reads ``None``)."""
    return [_random_raw() or _random_state, _numpy_raw() or _numpy_state, _torch_state]


def _read(readers: list[Callable[[], Any]]) -> tuple[Any, ...]:
    out = []
    for read in readers:
        try:
            out.append(read())
        except Exception:  # noqa: BLE001 - a generator we cannot read is not watched
            out.append(None)
    return tuple(out)


def _move_on() -> None:
    """Draw once from each loaded generator, so a watched build never starts from the state the
    previous one left (a build that drew nothing, or whose seeded draws end where the next
    build's seeded call ends, would hide a touch)."""
    for module, name, args in (("random", "random", ()), (None, "random_sample", ()),
                               ("torch", "rand", (1,))):
        owner = _numpy_rand() if module is None else sys.modules.get(module)
        draw: Any = getattr(owner, name, None)
        if draw is not None:
            with contextlib.suppress(Exception):  # one we cannot move is not watched either
                draw(*args)


def _digest(state: Any) -> str:
    return hashlib.sha256(repr(state).encode("utf-8", "surrogatepass")).hexdigest()[:16]


class Watch:
    """The touches ``[call, step, generator, state digest]`` of one build: call :meth:`after`
    at the end of each call (an env that seeds a global generator from its own seed leaves the
    same states in both builds: not flagged)."""

    def __init__(self) -> None:
        self.touches: list[list[Any]] = []
        _move_on()
        self._readers = _readers()
        self._numpy = _numpy_rand() is not None
        self._last = _read(self._readers)

    def after(self, call: str, step: int) -> None:
        """Record a touch for each generator whose state changed since the last call (one
        loaded meanwhile is not touched: only the first build would load it)."""
        now = _read(self._readers)
        if now != self._last:
            for name, old, new in zip(GENERATORS, self._last, now):
                if (old is not None and new is not None and old != new
                        and len(self.touches) < MAX_TOUCHES):
                    self.touches.append([call, step, name, _digest(new)])
        self._last = now
        if not self._numpy and now[1] is not None:  # numpy.random loaded meanwhile
            self._numpy = True
            self._readers = _readers()
            self._last = _read(self._readers)


def drawn(value: Any) -> tuple[str, int, str] | None:
    """``[call, step, generator]`` as a child sent it, checked, or None."""
    if (type(value) is list and len(value) == 3 and type(value[0]) is str
            and type(value[1]) is int and value[2] in GENERATORS):
        return value[0], value[1], value[2]
    return None


def _touches(value: Any) -> list[tuple[str, int, str, str]]:
    """A build's touches as sent back (malformed entries left out)."""
    return [(t[0], t[1], t[2], t[3]) for t in (value if type(value) is list else ())
            if type(t) is list and len(t) == 4 and type(t[0]) is str and type(t[1]) is int
            and t[2] in GENERATORS and type(t[3]) is str]


def first_unseeded(first: Any, second: Any) -> tuple[str, int, str] | None:
    """The first call that drew from a global generator the env did not seed, ``(call, step,
    generator)``, or None: where the touches of two builds in one process first disagree."""
    a, b = _touches(first), _touches(second)
    for x, y in zip(a, b):
        if x != y:
            return min(x[:3], y[:3], key=lambda c: (c[1], c[0] != "make", c[0] != "reset"))
    longer = a if len(a) > len(b) else b  # its first touch past the other's last
    return longer[min(len(a), len(b))][:3] if len(a) != len(b) else None


def call_name(call: str, step: int) -> str:
    """``"step 3"``, ``"reset() at step 0"``, ``"the build (make())"``."""
    if call == "make":
        return "the build (make())"
    if call == "reset":
        return f"reset() at step {step}" if step == 0 else f"the auto-reset after step {step}"
    if call == "rollout":
        return "the rollout"
    return f"step {step}"


def generator_finding(found: tuple[str, int, str]) -> str:
    """The finding line for :func:`first_unseeded`'s answer."""
    call, step, generator = found
    return (f"{call_name(call, step)} drew from {_WHAT.get(generator, generator)}, which "
            "reset(seed=...) does not seed: two builds in this process drew different values, "
            "so the rollout differs in every process and no rebuild can be compared with it; "
            f"{_FIX.get(generator, 'seed it, or give the env its own generator')}")
