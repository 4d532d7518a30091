"""Building a PettingZoo env from a :class:`~specpack._core._backends.Blueprint`.

The entry point is called with the final kwargs, then each layer is applied innermost first as
``layer(env, **kwargs)``; the loaded callables are kept per blueprint in this process.
"""

from __future__ import annotations

from typing import Any

from pettingzoo.utils.env import AECEnv, ParallelEnv

from ..._core._backends._shared import Plans, construct, load_steps, raise_wrapped
from ..._core._backends.recipe import Blueprint
from ..._core._carry.values import materialize
from ..._core._errors import BuildError

__all__ = ["build"]

#: What every build of one blueprint in this process shares: the entry point and the layers.
_plans = Plans(lambda bp: (bp.entry.load(), load_steps(bp)))


def _check(label: str, env: Any, what: str) -> None:
    if not isinstance(env, (AECEnv, ParallelEnv)):
        raise BuildError(
            f"{what} of pack {label} returned {type(env).__module__}.{type(env).__qualname__}, "
            "not a PettingZoo AECEnv or ParallelEnv; capture a PettingZoo env or factory"
        )


def build(bp: Blueprint, kwargs: dict[str, Any]) -> Any:
    """Build the env of ``bp`` with the final constructor ``kwargs`` (a dict of its own);
    BuildError if a step raised or returned something other than a PettingZoo env."""
    creator, steps = _plans.of(bp)
    env = construct(bp.label, bp.entry.name, creator, kwargs, None, "")
    _check(bp.label, env, f"the entry point {bp.entry.name}")
    try:
        for layer, fixed, lowered in steps:
            kw = fixed if fixed is not None else materialize(dict(lowered))
            env = layer(env, **kw) if kw else layer(env)
            _check(bp.label, env, f"the layer {getattr(layer, '__qualname__', layer)!s}")
    except Exception as e:  # noqa: BLE001 - raise_wrapped re-raises it
        raise_wrapped(bp.label, e)
    return env
