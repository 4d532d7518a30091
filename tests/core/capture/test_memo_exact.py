"""capture(id)'s memo returns an earlier pack only for the registry state it was made from.

The registry entry is snapshotted under the same exact key as the call (``0.0`` and ``-0.0``,
``1``, ``True`` and ``1.0`` differ), before resolving, and checked after assembling: an id that
resolution itself re-registers (a module that registers on import), or that another thread
re-registers meanwhile, never files the old pack under the new state.
"""

from __future__ import annotations

import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest
from _helpers import GYMNASIUM_0X
from gymnasium.envs.registration import EnvSpec, WrapperSpec, register, registry

import specpack

# An env and a numeric kwarg of it, a gymnasium wrapper and a float kwarg of it (gymnasium
# 0.28/0.29 has neither CartPole's sutton_barto_reward nor ClipReward).
if GYMNASIUM_0X:
    CARTPOLE, KW = "gymnasium.envs.classic_control.pendulum:PendulumEnv", "g"
    CLIP, LOW, HIGH = "NormalizeReward", "epsilon", "gamma"
else:
    CARTPOLE, KW = "gymnasium.envs.classic_control.cartpole:CartPoleEnv", "sutton_barto_reward"
    CLIP, LOW, HIGH = "ClipReward", "min_reward", "max_reward"


@pytest.fixture
def env_id() -> Any:
    name = "MemoExact-v0"
    registry.pop(name, None)
    yield name
    registry.pop(name, None)


@pytest.mark.parametrize(("old", "new"), [(0.0, -0.0), (1, True), (True, 1.0), (1.0, 1)])
def test_a_registered_kwarg_changed_to_an_equal_value_of_another_type_or_sign_is_not_served_stale(
    env_id: str, old: Any, new: Any
) -> None:
    register(env_id, entry_point=CARTPOLE, kwargs={KW: old})
    first = specpack.capture(env_id)
    assert repr(first.kwargs[KW]) == repr(old)
    registry[env_id].kwargs[KW] = new  # the same spec, edited in place
    again = specpack.capture(env_id)
    got = again.kwargs[KW]
    assert type(got) is type(new) and repr(got) == repr(new), f"stale {got!r}, registry {new!r}"
    registry[env_id].kwargs = {KW: old}  # a new dict, equal to the old one
    third = specpack.capture(env_id)
    assert repr(third.kwargs[KW]) == repr(old)


def test_an_id_re_registered_by_the_import_that_resolves_it_is_not_served_the_old_pack(
    env_id: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # importing the entry point's module re-registers the id with another kwarg value
    (tmp_path / "memo_reregisters.py").write_text(textwrap.dedent(f"""
        from gymnasium.envs.classic_control.cartpole import CartPoleEnv
        from gymnasium.envs.registration import EnvSpec, WrapperSpec, register, registry

        class Pole(CartPoleEnv):
            def __init__(self, tag=0, render_mode=None):
                super().__init__(render_mode=render_mode)
                self.tag = tag

        registry.pop({env_id!r}, None)
        register({env_id!r}, entry_point="memo_reregisters:Pole", kwargs={{"tag": "import"}})
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "memo_reregisters", raising=False)
    register(env_id, entry_point="memo_reregisters:Pole", kwargs={"tag": "before"})
    first = specpack.capture(env_id)
    assert first.kwargs["tag"] == "before"  # resolved from the spec read before the import
    assert registry[env_id].kwargs["tag"] == "import"
    for _ in range(3):
        assert specpack.capture(env_id).kwargs["tag"] == "import"


def test_threads_re_registering_an_id_while_others_capture_it_never_get_a_stale_pack(
    env_id: str,
) -> None:
    published = [0]  # the last tag whose registration finished
    register(env_id, entry_point=CARTPOLE, kwargs={KW: 0})
    done = threading.Event()
    stale: list[str] = []
    calls: list[int] = []

    def reregister() -> None:
        n = 0
        while len(calls) < 600 and n < 10**6:  # one atomic swap each: the id is never missing
            n += 1
            registry[env_id] = EnvSpec(env_id, CARTPOLE, kwargs={KW: n})
            published[0] = n
        done.set()

    def capture() -> None:
        try:
            while not done.is_set():
                low = published[0]
                got = specpack.capture(env_id).kwargs[KW]
                calls.append(got)
                if got < low:
                    stale.append(f"got {got} after {low} was registered")
        except BaseException as e:  # noqa: BLE001 - reported by the test below
            stale.append(f"{type(e).__name__}: {e}")

    threads = [threading.Thread(target=capture) for _ in range(3)]
    threads.append(threading.Thread(target=reregister))
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(old)
    for _ in range(3):  # once the registrations are over, every capture is of the last one
        assert specpack.capture(env_id).kwargs[KW] == published[0]
    assert not stale, stale[:5]
    assert len(calls) >= 600


def test_a_wrapper_kwarg_edited_in_place_in_the_registry_is_not_served_stale(
        env_id: str) -> None:
    clip = WrapperSpec(CLIP, f"gymnasium.wrappers:{CLIP}", {LOW: 0.0, HIGH: 1.0})
    register(env_id, entry_point=CARTPOLE, additional_wrappers=(clip,))
    assert repr(specpack.capture(env_id).layers[0].kwargs[LOW]) == "0.0"
    registry[env_id].additional_wrappers[0].kwargs[LOW] = -0.0  # the same dict
    got = specpack.capture(env_id).layers[0].kwargs[LOW]
    assert repr(got) == "-0.0", got


def test_a_spec_field_edited_while_the_capture_resolves_it_then_set_back_is_not_served_stale(
    env_id: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Why the registry is checked again after assembling, not only at the next capture: a
    field edited in place while resolving (here by a wrapper's module, imported on the way)
    and read after the edit makes a pack of a state the snapshot never saw; once the field is
    set back to the very object it held, only the check after assembling kept that pack out
    of the memo."""
    (tmp_path / "memo_edits.py").write_text(textwrap.dedent(f"""
        import gymnasium
        from gymnasium.envs.registration import registry

        class Wrap(gymnasium.Wrapper):
            pass

        registry[{env_id!r}].reward_threshold = 99.0
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "memo_edits", raising=False)
    register(env_id, entry_point=CARTPOLE, reward_threshold=1.0,
             additional_wrappers=(WrapperSpec("Wrap", "memo_edits:Wrap", {}),))
    saved = registry[env_id].reward_threshold
    first = specpack.capture(env_id)
    assert first.spec["reward_threshold"] == 99.0  # read after the import edited it
    registry[env_id].reward_threshold = saved  # the state the capture started from
    assert specpack.capture(env_id).spec["reward_threshold"] == 1.0
