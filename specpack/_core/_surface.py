"""What an env shows before it is stepped: spaces, metadata, render mode (a pack's *surface*),
recorded at capture so that ``make_vec``'s parent and RL libraries read the spaces without
building an env; copies without random state, so equal envs give equal surfaces."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import gymnasium
import numpy as np

from ._restorer import restorer

__all__ = ["Surface", "SurfaceEnv", "record_surface", "surface_from_json", "surface_to_json"]


@dataclass(frozen=True)
class Surface:
    """An env's observation and action spaces, metadata and render mode, as recorded."""

    observation_space: gymnasium.spaces.Space[Any]
    action_space: gymnasium.spaces.Space[Any]
    metadata: dict[str, Any]
    render_mode: str | None

    def __reduce__(self) -> tuple[Any, ...]:
        return (restore_surface, (self.observation_space, self.action_space, self.metadata,
                                  self.render_mode))


@restorer
def restore_surface(observation_space: Any, action_space: Any, metadata: dict[str, Any],
                    render_mode: str | None) -> Surface:
    """A pickled :class:`Surface` (spaces, metadata, render mode)."""
    return Surface(observation_space, action_space, metadata, render_mode)


def _quiet(space: Any) -> Any:
    """A copy of ``space`` without random state (seeding is the user's, not the pack's)."""
    out = copy.deepcopy(space)
    stack = [out]
    while stack:
        node = stack.pop()
        if isinstance(node, gymnasium.spaces.Space):
            node._np_random = None  # type: ignore[assignment]
            for v in vars(node).values():  # the subspaces: as attributes, in lists or dicts
                if isinstance(v, dict):
                    v = list(v.values())
                stack.extend(v if isinstance(v, (list, tuple)) else [v])
    return out


def record_surface(env: Any) -> Surface:
    """The surface of a built env (its outermost wrapper: what a user of the env sees)."""
    metadata = getattr(env, "metadata", {}) or {}
    return Surface(_quiet(env.observation_space), _quiet(env.action_space),
                   {k: v for k, v in dict(metadata).items() if isinstance(k, str)},
                   getattr(env, "render_mode", None))


class SurfaceEnv(gymnasium.Env):  # type: ignore[type-arg]
    """An env that only shows a recorded surface and refuses to be stepped: what ``make_vec``
    gives ``AsyncVectorEnv``, which builds ``env_fns[0]()`` in the parent only to read it."""

    def __init__(self, surface: Surface) -> None:
        self.observation_space = copy.deepcopy(surface.observation_space)
        self.action_space = copy.deepcopy(surface.action_space)
        self.metadata = dict(surface.metadata)
        self.render_mode = surface.render_mode

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        raise RuntimeError("a SurfaceEnv only shows a pack's recorded spaces; build the env")

    def step(self, action: Any) -> Any:
        raise RuntimeError("a SurfaceEnv only shows a pack's recorded spaces; build the env")


# -- in a manifest: a space is an object of its type and fields, values as typed JSON (``encode``
# and ``decode`` passed in: this module stays below the codec); only gymnasium's spaces.
#: The array-like spaces: their fields, then (not MultiBinary) a dtype.
_ARRAYS = {"Box": ("low", "high"), "Discrete": ("n", "start"),
           "MultiDiscrete": ("nvec", "start"), "MultiBinary": ("n",)}


def _space_to_json(space: Any, encode: Any) -> dict[str, Any]:
    """A gymnasium space as JSON (raises ``TypeError`` for a space type not written here)."""
    s = gymnasium.spaces
    t = type(space)
    if t in (s.Box, s.Discrete, s.MultiDiscrete, s.MultiBinary):
        node = {"type": t.__name__, **{f: encode(getattr(space, f)) for f in _ARRAYS[t.__name__]}}
        if t is not s.MultiBinary:
            node["dtype"] = space.dtype.str
        return node
    if t is s.Text:
        return {"type": "Text", "max_length": space.max_length, "min_length": space.min_length,
                "charset": "".join(sorted(space.character_set))}
    if t is s.Tuple:
        return {"type": "Tuple", "spaces": [_space_to_json(x, encode) for x in space.spaces]}
    if t is s.Dict:
        return {"type": "Dict", "spaces": [[k, _space_to_json(x, encode)]
                                           for k, x in space.spaces.items()]}
    raise TypeError(f"{t.__module__}.{t.__qualname__} is not written in a manifest")


def _space_from_json(node: Any, decode: Any) -> Any:
    """The gymnasium space of :func:`_space_to_json`'s output (``ValueError`` if malformed)."""
    s = gymnasium.spaces
    if type(node) is not dict or type(node.get("type")) is not str:
        raise ValueError("a space is an object with a 'type'")
    kind = node["type"]
    if kind in ("Box", "MultiDiscrete", "MultiBinary"):
        given = {f: decode(node[f]) for f in _ARRAYS[kind]}
        if kind != "MultiBinary":
            given["dtype"] = np.dtype(node["dtype"])
        return getattr(s, kind)(**given)
    if kind == "Discrete":
        # gymnasium < 1.2's Discrete takes no dtype (always int64): pass it only when it differs
        dtype = np.dtype(node["dtype"])
        extra: dict[str, Any] = {} if dtype == np.int64 else {"dtype": dtype}
        return s.Discrete(decode(node["n"]), start=decode(node["start"]), **extra)
    if kind == "Text":
        return s.Text(max_length=node["max_length"], min_length=node["min_length"],
                      charset=node["charset"])
    if kind == "Tuple":
        return s.Tuple([_space_from_json(x, decode) for x in node["spaces"]])
    if kind == "Dict":
        return s.Dict({k: _space_from_json(x, decode) for k, x in node["spaces"]})
    raise ValueError(f"unknown space type {kind[:40]!r}")


def surface_to_json(surface: Surface, encode: Any) -> dict[str, Any] | None:
    """The manifest's ``surface`` field, or None when a space cannot be written."""
    try:
        return {
            "observation_space": _space_to_json(surface.observation_space, encode),
            "action_space": _space_to_json(surface.action_space, encode),
            "metadata": encode({k: v for k, v in surface.metadata.items()
                                if isinstance(v, (str, int, float, bool, list, tuple))}),
            "render_mode": surface.render_mode,
        }
    except (TypeError, ValueError):
        return None


def surface_from_json(node: Any, decode: Any) -> Surface:
    """The :class:`Surface` of a manifest's ``surface`` field (``ValueError`` if malformed)."""
    if type(node) is not dict or set(node) != {"observation_space", "action_space",
                                               "metadata", "render_mode"}:
        raise ValueError("surface has observation_space, action_space, metadata, render_mode")
    metadata = decode(node["metadata"])
    mode = node["render_mode"]
    if type(metadata) is not dict or not (mode is None or type(mode) is str):
        raise ValueError("surface metadata is an object and render_mode a string or null")
    try:
        return Surface(_space_from_json(node["observation_space"], decode),
                       _space_from_json(node["action_space"], decode), metadata, mode)
    except (KeyError, TypeError, OverflowError) as e:
        raise ValueError(f"malformed space ({type(e).__name__}: {e})") from None
