"""What the wrappers audit builds its wrappers around (:func:`bases`), and with which
non-default arguments, guessed from a parameter's name, type or default (:func:`candidates`)."""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import gymnasium
import gymnasium.wrappers as gw
import numpy as np
from gymnasium import spaces
from gymnasium.envs.registration import EnvSpec

from ..._core._backends.gymnasium.compat import LINE
from ..._core._text import short
from .select import matches, registry

__all__ = ["LEAVE", "FramesEnv", "arg_text", "args_text", "bases", "candidates", "negate",
           "package_bases", "wrapper_classes"]


def negate(x: Any) -> Any:
    """The ``func`` given to Transform* wrappers: a named, importable, visible change."""
    return -x


def _make(env_id: str, **kwargs: Any) -> Callable[[], Any]:
    return functools.partial(gymnasium.make, env_id, **kwargs)


def _pixels(render_only: bool) -> Any:
    return gw.AddRenderObservation(gymnasium.make("CartPole-v1", render_mode="rgb_array"),
                                   render_only)


class FramesEnv(gymnasium.Env):  # type: ignore[type-arg]
    """Seeded RGB frames (``state``: with a state vector, in a dict): pixels without a renderer
    for gymnasium 0.28/0.29's image wrappers; importable, so a rebuild finds it by reference."""

    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(self, state: bool = False) -> None:
        self.state = state
        frame = spaces.Box(0, 255, (16, 16, 3), np.uint8)
        self.observation_space = (
            spaces.Dict({"state": spaces.Box(-1.0, 1.0, (4,), np.float32), "pixels": frame})
            if state else frame)
        self.action_space = spaces.Discrete(2)
        self.t = 0

    def _obs(self) -> Any:
        frame = self.np_random.integers(0, 256, (16, 16, 3), dtype=np.uint8)
        if not self.state:
            return frame
        return {"state": self.np_random.uniform(-1, 1, 4).astype(np.float32), "pixels": frame}

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        self.t = 0
        return self._obs(), {}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        # the next frame; the reward is the action; 20 steps an episode
        self.t += 1
        return self._obs(), float(action), self.t >= 20, False, {}


def _atari() -> Any:
    import ale_py  # noqa: F401 - registers the ALE envs

    return gymnasium.make("ALE/Pong-v5", frameskip=1)


def _frames(state: bool) -> Any:
    spec = EnvSpec("SpecpackFrames-v0", entry_point=f"{__name__}:FramesEnv",
                   kwargs={"state": state}, max_episode_steps=50)
    return gymnasium.make(spec)  # the spec records the kwargs a rebuild needs


_RGB = "CartPole-v1 (render_mode='rgb_array')"
_ATARI = "ALE/Pong-v5 (frameskip=1)"
if LINE == "0":  # 0.28/0.29: no AddRenderObservation; seeded frames need no renderer
    _PIXELS = "FramesEnv (16x16 RGB frame observations)"
    _DICT = "FramesEnv(state=True) (dict observations: state and pixels)"
    _IMAGE_BASES = {_PIXELS: functools.partial(_frames, False),
                    _DICT: functools.partial(_frames, True)}
else:
    _PIXELS = "AddRenderObservation(CartPole-v1) (pixel observations)"
    _DICT = "AddRenderObservation(CartPole-v1, render_only=False) (dict observations)"
    _IMAGE_BASES = {_PIXELS: functools.partial(_pixels, True),
                    _DICT: functools.partial(_pixels, False)}
_BASES: dict[str, Callable[[], Any]] = {
    "CartPole-v1": _make("CartPole-v1"),
    "Pendulum-v1": _make("Pendulum-v1"),
    _RGB: _make("CartPole-v1", render_mode="rgb_array"),
    "Pendulum-v1 (render_mode='rgb_array')": _make("Pendulum-v1", render_mode="rgb_array"),
    **_IMAGE_BASES,
}
#: The base envs a wrapper class is tried around first (``GrayScaleObservation`` is its
#: 0.28/0.29 name, ``PixelObservationWrapper`` 0.28/0.29's ``AddRenderObservation``).
_PREFERRED: dict[str, tuple[str, ...]] = {
    "AtariPreprocessing": (_ATARI,),
    "FilterObservation": (_DICT,),
    **dict.fromkeys(("GrayscaleObservation", "GrayScaleObservation", "ResizeObservation"),
                    (_PIXELS,)),
    **dict.fromkeys(("DiscretizeObservation", "RescaleObservation", "ClipAction",
                     "DiscretizeAction", "RescaleAction", "TransformAction"), ("Pendulum-v1",)),
    **dict.fromkeys(("PixelObservationWrapper", "AddRenderObservation", "AddWhiteNoise",
                     "ObstructView", "RenderCollection", "RecordVideo", "HumanRendering"),
                    (_RGB,)),
}

#: Plausible non-default values by parameter name (first choice first); gymnasium's wrappers.
_NAMED: dict[str, tuple[Any, ...]] = {
    "max_episode_steps": (7,), "delay": (2,), "stack_size": (3,), "padding_type": ("zero",),
    "num_repeats": (2,), "skip": (2,), "bins": (5, (5,)), "multidiscrete": (True,),
    "repeat_action_probability": (0.25,), "repeat_action_duration": (2,),
    "dtype": (np.float64,), "shape": ((2, 2), (32, 32)), "filter_keys": (["state"],),
    "min_action": (-0.5,), "max_action": (0.5,), "min_obs": (-0.5,), "max_obs": (0.5,),
    "min_reward": (-0.5,), "max_reward": (0.5,), "func": (negate,),
    "observation_space": (None,), "action_space": (None,),
    "probability_of_noise_per_pixel": (0.1,), "obstructed_pixels_ratio": (0.1,),
    "obstruction_width": (3,), "epsilon": (1e-6,), "gamma": (0.9,), "buffer_length": (10,),
    "stats_key": ("ep",), "render_only": (False,), "render_key": ("frame",),
    "obs_key": ("observation",), "dict_time_key": ("t",), "name_prefix": ("audit",),
    "fps": (10,), "video_length": (5,), "noop_max": (10,), "frame_skip": (2,),
    "screen_size": (64,),
}
#: Arguments better left alone (callables that would change when the episode is recorded).
LEAVE = frozenset({"episode_trigger", "step_trigger", "gc_trigger"})


def candidates(p: Any, tmp: str) -> tuple[tuple[Any, ...], str | None]:
    """Values to try for one ``inspect.Parameter``, or ``((), why)`` to leave it alone."""
    if p.name == "video_folder":
        return (os.path.join(tmp, "videos"),), None
    if p.name in LEAVE and p.default is not p.empty:
        return (), "a callable trigger: left at its default"
    if p.name in _NAMED:
        return _NAMED[p.name], None
    d = p.default
    if d is p.empty:
        ann = str(p.annotation)
        if ann.startswith(("tuple[str", "list[str", "Sequence[str", "Iterable[str")):
            return (("specpack",),), None  # a name no env uses: builds, changes nothing
        for word, values in (("bool", (True,)), ("int", (2, 3)), ("float", (0.5,))):
            if word in ann:
                return values, None
        return (), f"required, and no value can be guessed for its type ({ann})"
    if isinstance(d, bool):
        return (not d,), None
    if isinstance(d, int):
        return (d + 1, d + 2), None
    if isinstance(d, float):
        return ((d * 0.5 if d else 0.5), d + 0.25), None
    return (), f"cannot guess a non-default value for {type(d).__name__} {short(d)}"


def bases(cls_name: str, extra: Sequence[str]) -> list[tuple[str, Callable[[], Any]]]:
    """The base envs to try for a wrapper class, best first (its preferred ones, the
    imported package's own envs, then the standard ones)."""
    names = list(_PREFERRED.get(cls_name, ()))
    names += [n for n in extra if n not in names]
    names += [n for n in _BASES if n not in names]
    return [(n, _atari if n == _ATARI else _BASES.get(n) or _make(n)) for n in names]


def package_bases(modules: Sequence[str]) -> list[str]:
    """A couple of buildable env ids each imported package registers (bases for its wrappers)."""
    out: list[str] = []
    reg = registry()
    for prefix in modules:
        top = prefix.partition(".")[0]
        hits = [k for k, s in reg.items() if matches(top, s) and k not in out]
        out.extend(hits[:2])
    return out


def wrapper_classes(modules: Sequence[str]) -> list[tuple[str, type | BaseException]]:
    """``(public name, class)`` of every wrapper in gymnasium.wrappers and the given modules;
    a name whose class cannot be loaded here comes with the exception instead."""
    out: dict[type, str] = {}
    failures: list[tuple[str, type | BaseException]] = []
    for attr in sorted(getattr(gw, "__all__", dir(gw))):
        try:
            obj = getattr(gw, attr)
        except Exception as e:  # noqa: BLE001 - e.g. needs jax/torch
            failures.append((f"gymnasium.wrappers.{attr}", e))
            continue
        if isinstance(obj, type) and issubclass(obj, gymnasium.Wrapper):
            out.setdefault(obj, f"gymnasium.wrappers.{attr}")
    for prefix in modules:
        for modname, mod in sorted(sys.modules.items()):
            if mod is None or not (modname == prefix or modname.startswith(prefix + ".")):
                continue
            for attr, obj in sorted(vars(mod).items()):
                if (isinstance(obj, type) and issubclass(obj, gymnasium.Wrapper)
                        and obj.__module__ == modname and not attr.startswith("_")):
                    out.setdefault(obj, f"{modname}.{attr}")
    return [(name, cls) for cls, name in out.items()] + failures


def arg_text(v: Any) -> str:
    """How a given argument is shown: code by its qualified name, values by bounded repr."""
    if isinstance(v, type) or callable(v):
        mod = getattr(v, "__module__", None) or type(v).__module__
        return f"{mod}.{getattr(v, '__qualname__', type(v).__qualname__)}"
    return short(v)


def args_text(args: Mapping[str, Any]) -> str:
    """``k=v, ...`` of :func:`arg_text`, or ``no arguments``."""
    return ", ".join(f"{k}={arg_text(v)}" for k, v in args.items()) or "no arguments"
