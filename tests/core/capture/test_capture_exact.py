"""A pack holds exactly what it was given, and nothing else.

Caches keyed by ``==`` must not merge ``0.0`` with ``-0.0`` (or ``0j`` with ``-0j``, or ``0``
with ``0.0`` in a wrapper's kwargs); a numpy structured scalar (``np.void``, a view into its
array) is copied at capture and per ``make()``; a misspelled kwarg is refused at capture with
a suggestion; an env kwarg whose name collides with a capture option goes through
``env_kwargs``.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import gymnasium
import numpy as np
import pytest
from _helpers import GYMNASIUM_0X
from gymnasium.envs.classic_control.cartpole import CartPoleEnv
from gymnasium.wrappers import RescaleAction

import specpack
from specpack import CaptureError, SpecPackError

TESTS = Path(__file__).resolve().parents[2]
FIXTURES = TESTS / "fixtures"
if str(FIXTURES) not in sys.path:
    sys.path.insert(0, str(FIXTURES))

import trustenvs  # noqa: E402

# -- 19. zeros keep their sign and type --------------------------------------------------

ZEROS = [0.0, -0.0, 0, False, 0j, -0j, complex(-0.0, 0.0), complex(0.0, -0.0), 0.0, -0.0]


def test_capture_of_an_id_keeps_signed_zeros_and_zero_types_across_repeated_captures() -> None:
    fingerprints: dict[str, str] = {}
    for order in (ZEROS, ZEROS[::-1]):
        for v in order:
            pack = specpack.capture("Pendulum-v1", g=v)
            got = pack.kwargs["g"]
            assert type(got) is type(v) and repr(got) == repr(v), (
                f"capture('Pendulum-v1', g={v!r}) holds g={got!r}")
            fingerprints.setdefault(repr(v), pack.fingerprint)
            assert fingerprints[repr(v)] == pack.fingerprint
    assert len(set(fingerprints.values())) == len(fingerprints)  # all distinct
    pack = specpack.capture("Pendulum-v1", g=-0.0)
    assert math.copysign(1, pack.kwargs["g"]) == -1
    env = pack.make()
    assert math.copysign(1, env.unwrapped.g) == -1
    env.close()


# -- 20. wrapper kwargs keep their types ----------------------------------------------------


def test_rescale_action_float_bounds_captured_after_int_bounds_stay_floats() -> None:
    ints = specpack.capture(RescaleAction(gymnasium.make("Pendulum-v1"), min_action=0,
                                          max_action=1))
    floats = specpack.capture(RescaleAction(gymnasium.make("Pendulum-v1"), min_action=0.0,
                                            max_action=1.0))
    ints_again = specpack.capture(RescaleAction(gymnasium.make("Pendulum-v1"), min_action=0,
                                                max_action=1))
    assert floats.layers[0].name == "RescaleAction"
    for pack, typ in ((ints, int), (floats, float), (ints_again, int)):
        kw = pack.layers[0].kwargs
        assert type(kw["min_action"]) is typ and type(kw["max_action"]) is typ, (typ, kw)
    assert floats.fingerprint != ints.fingerprint
    rebuilt = floats.make()
    assert isinstance(rebuilt, RescaleAction)
    saved = rebuilt._saved_kwargs  # what the wrapper itself records (and its spec shows)
    assert type(saved["min_action"]) is float and type(saved["max_action"]) is float, saved
    rebuilt.close()


# -- 21. a structured numpy scalar is a value, not a view ----------------------------------


def test_structured_np_void_kwarg_is_copied_at_capture_and_for_each_make() -> None:
    dtype = np.dtype([("a", "<i4"), ("b", "<f8")])
    arr = np.zeros(2, dtype=dtype)
    v = arr[0]
    assert isinstance(v, np.void)
    pack = specpack.capture(trustenvs.Plain, by_value=False, v=v)
    reference = specpack.capture(trustenvs.Plain, by_value=False, v=np.zeros(1, dtype=dtype)[0])
    arr[0]["a"] = 7  # the caller changes its array after capture
    arr[0]["b"] = 2.5
    got = pack.kwargs["v"]
    assert (int(got["a"]), float(got["b"])) == (0, 0.0), got
    assert pack.fingerprint == reference.fingerprint
    assert pack.to_json() == reference.to_json()
    e1, e2 = pack.make(), pack.make()
    x1, x2 = e1.unwrapped.kw["v"], e2.unwrapped.kw["v"]
    try:
        x1["a"] = 5  # one env changes its copy
    except (TypeError, ValueError):
        pass  # a read-only copy is fine too: it cannot leak into the other env
    assert int(x2["a"]) == 0, x2
    assert int(pack.kwargs["v"]["a"]) == 0
    mine = pack.kwargs["v"]
    try:
        mine["a"] = 9  # pack.kwargs gives fresh values
    except (TypeError, ValueError):
        pass
    assert int(pack.kwargs["v"]["a"]) == 0


# -- 22. a misspelled kwarg ---------------------------------------------------------------


@pytest.mark.parametrize("target", ["CartPole-v1", CartPoleEnv], ids=["id", "class"])
def test_capture_with_a_misspelled_kwarg_is_refused_at_capture_with_a_suggestion(
        target: object) -> None:
    # gymnasium 0.28/0.29's CartPole takes render_mode only (sutton_barto_reward came in 1.0)
    real, typo, value = (("render_mode", "render_mod", "rgb_array") if GYMNASIUM_0X
                         else ("sutton_barto_reward", "sutton_barto_rewrd", True))
    good = specpack.capture(target, **{real: value})  # control: the real name works
    good.make().close()
    with pytest.raises(CaptureError) as info:
        specpack.capture(target, **{typo: value})
    message = str(info.value)
    assert typo in message and real in message, message


# -- 23. an env kwarg named like a capture option ----------------------------------------


@pytest.fixture
def bk_id():
    env_id = "Bk-v0"
    gymnasium.register(env_id, entry_point=trustenvs.WithBackend)
    yield env_id
    gymnasium.registry.pop(env_id, None)


def test_env_kwarg_named_backend_is_passed_with_env_kwargs_and_refused_as_an_option(
        bk_id: str) -> None:
    assert gymnasium.make(bk_id, backend="jax").unwrapped.backend == "jax"
    pack = specpack.capture(bk_id, env_kwargs={"backend": "jax"})
    assert dict(pack.kwargs) == {"backend": "jax"}
    env = pack.make()
    assert env.unwrapped.backend == "jax"
    env.close()
    both = specpack.capture(bk_id, size=3, env_kwargs={"backend": "jax"})
    assert dict(both.kwargs) == {"backend": "jax", "size": 3}
    with pytest.raises(SpecPackError) as info:
        specpack.capture(bk_id, backend="jax")
    assert "env_kwargs" in str(info.value), str(info.value)


