"""What an env records about its own constructor arguments, checked on a built instance.

- **EzPickle**: every kwarg ``make`` passed must be in the env's EzPickle record with the same
  value, else ``pickle.loads(pickle.dumps(env))`` rebuilds it with another value. A gap is
  split by its consequence: when the value the round trip rebuilds *equals* the one the env was
  built with (the record misses ``reward_type`` but the spec passed ``"dense"``, the default)
  it is a note; when it differs it is a failure that names the argument, both values and the
  first step where a rollout of the round-tripped env differs from the original's, with the
  same actions.
- **The live stack**: :func:`specpack.capture` of the live instance walks every wrapper; when it
  is a different recipe from the id's (a factory entry point that returns a wrapped env) it is
  rebuilt across the boundary too.

Values are compared with :func:`specpack._core._carry.values.exact_key` (``1``, ``1.0`` and ``True``
are different values); every check runs where the env is registered (the reference side).
"""

from __future__ import annotations

import inspect
import pickle
import re
from dataclasses import replace
from typing import Any

from gymnasium.utils import EzPickle

from ..._core._backends._args import check_coverage, ezpickle_kwargs
from ..._core._capture import capture
from ..._core._carry.values import exact_key
from ..._core._errors import SpecPackError, UnrecordedArgumentsError
from ..._core._text import one_line, short
from .._verify import compare, record, writable

__all__ = ["ezpickle_gaps", "first_step", "live_capture", "same_recipe"]

_STEP = re.compile(r"\bstep (\d+)\b")
_NO_DEFAULT = object()


def first_step(differences: list[str]) -> int | None:
    """The rollout step the first difference names (``"step 7: reward differs ..."``)."""
    for d in differences[:1]:
        hit = _STEP.search(d)
        if hit:
            return int(hit.group(1))
    return None


def _default_of(cls: type, name: str) -> Any:
    """The default of ``cls``'s parameter ``name``, or ``_NO_DEFAULT``."""
    try:
        param = inspect.signature(cls).parameters.get(name)
    except (TypeError, ValueError):
        return _NO_DEFAULT
    if param is None or param.default is inspect.Parameter.empty:
        return _NO_DEFAULT
    return param.default


def _pickled_by_ezpickle(base: Any, ezpickle: type) -> bool:
    """Whether pickling ``base`` goes through its EzPickle record.

    A class that defines its own ``__getstate__``/``__setstate__`` or ``__reduce__`` (Meta-World's
    ``SawyerXYZEnv`` pickles its MuJoCo state) does not rebuild from the record, so the record
    says nothing about a pickle round trip.
    """
    if not isinstance(base, ezpickle):
        return False
    cls = type(base)
    return all(
        getattr(cls, name, None) is getattr(ezpickle, name, None)
        for name in ("__getstate__", "__setstate__", "__reduce__", "__reduce_ex__")
    )


def _round_trip_rollout(base: Any, actions: list[Any], seed: int) -> tuple[list[str], str]:
    """Differences between ``base`` and its pickle round trip over the same actions.

    Returns the differences and, when the round trip itself fails, what failed.
    """
    try:
        clone = pickle.loads(pickle.dumps(base))
    except Exception as e:  # noqa: BLE001 - reported as the consequence
        return [], f"pickle.loads(pickle.dumps(env.unwrapped)) itself fails: {one_line(e)}"
    try:
        here = record(base, writable(actions), seed)
        there = record(clone, writable(actions), seed)
    finally:
        close = getattr(clone, "close", None)
        if callable(close):
            try:
                close()
            except Exception:  # noqa: BLE001 - closing is best effort
                pass
    labels = ("the built env", "its pickle round trip")
    # EzPickle does not carry the spec (gymnasium sets it after construction): compare the rest.
    here, there = replace(here, spec={}), replace(there, spec={})
    return compare(here, there, labels=labels, shared=False), ""


def ezpickle_gaps(env: Any, pack: Any, actions: list[Any], seed: int) -> dict[str, Any]:
    """The EzPickle record of ``env`` (built from ``pack``, not yet stepped) against the spec.

    Parameters
    ----------
    env
        A fresh instance built from ``pack`` where it is registered; its base env may be
        stepped by this check (build another one for anything else).
    pack
        The pack it was built from (its entry point and kwargs say what ``make`` passed).
    actions, seed
        The rollout that shows the consequence of a gap (the planned actions, the seed of
        the first reset).

    Returns
    -------
    dict
        ``failures`` (messages of gaps that change the env), ``notes`` (gaps at the default),
        ``step`` (the first step where the round trip's rollout differs, or None).
    """

    out: dict[str, Any] = {"failures": [], "notes": [], "step": None}
    base = getattr(env, "unwrapped", env)
    if not _pickled_by_ezpickle(base, EzPickle):
        return out
    cls = type(base)
    name = f"{cls.__module__}.{cls.__qualname__}"
    fix = f"pass every argument to EzPickle.__init__ in {cls.__qualname__}.__init__"
    try:
        recorded = ezpickle_kwargs(base, cls) or {}
    except UnrecordedArgumentsError as e:
        # Said here, not in the capture's words: its fix (capture the class with explicit
        # arguments) is for capturing a live env, and cannot make an audit of an id pass.
        cause = e.__cause__ if e.__cause__ is not None else e
        args = tuple(getattr(base, "_ezpickle_args", None) or ())
        kwargs = dict(getattr(base, "_ezpickle_kwargs", None) or {})
        shown = ", ".join([*map(short, args), *(f"{k}={short(v)}" for k, v in kwargs.items())])
        diffs, broken = _round_trip_rollout(base, actions, seed)
        consequence = (broken or (f"a rollout of the round-tripped env differs: {diffs[0]}"
                                  if diffs else "the round trip happens to rebuild it"))
        out["step"] = first_step(diffs) if diffs and not broken else None
        out["failures"].append(
            f"EzPickle gap: {name}'s EzPickle record ({shown}) does not match its constructor "
            f"({one_line(cause)}), so pickle.loads(pickle.dumps(env)) cannot rebuild it from "
            f"the record; {consequence}; {fix} (with its own parameters, by name)")
        return out
    try:
        built_from_class = pack.entry_point.load() is cls
    except Exception:  # noqa: BLE001 - an entry point that does not load is no evidence
        built_from_class = False
    spec = getattr(base, "spec", None)
    passed = dict(getattr(spec, "kwargs", None) or {}) if built_from_class else {}
    changed: list[str] = []
    for key, value in passed.items():
        if key in recorded:
            if exact_key(recorded[key]) != exact_key(value):
                changed.append(
                    f"{name} was built with {key}={short(value)} but EzPickle recorded "
                    f"{key}={short(recorded[key])}"
                )
            continue
        default = _default_of(cls, key)
        if default is _NO_DEFAULT:
            changed.append(
                f"{name} was built with {key}={short(value)} but EzPickle did not record it, "
                "and it has no default (the round trip raises TypeError)"
            )
        elif exact_key(default) != exact_key(value):
            changed.append(
                f"{name} was built with {key}={short(value)} but EzPickle did not record it, so "
                f"pickle.loads(pickle.dumps(env)) rebuilds it with {key}={short(default)}"
            )
        else:
            out["notes"].append(
                f"EzPickle gap at the default: {name} does not record {key}; the spec passes "
                f"{key}={short(value)}, its default, so pickle.loads(pickle.dumps(env)) "
                f"rebuilds the same env (passing another value would not survive; {fix})"
            )
    if changed:
        diffs, broken = _round_trip_rollout(base, actions, seed)
        if broken:
            consequence = broken
        elif diffs:
            out["step"] = first_step(diffs)
            consequence = f"a rollout of the round-tripped env differs: {diffs[0]}"
        else:
            consequence = (
                f"a {len(actions)}-step rollout of the round-tripped env does not differ (the "
                "value may matter elsewhere)"
            )
        out["failures"] += [f"EzPickle gap: {c}; {consequence}; {fix}" for c in changed]
        return out
    try:
        check_coverage(base, cls, recorded, "EzPickle", fix)
    except UnrecordedArgumentsError as e:
        out["failures"].append(f"EzPickle gap: {e}")
    return out


def _layer_keys(pack: Any) -> list[tuple[Any, Any]]:
    """Each layer as (class, exact key of its kwargs without those at their default)."""
    out = []
    for layer in pack.layers:
        cls = layer.cls.load()
        kwargs = {
            k: v
            for k, v in layer.kwargs.items()
            if _default_of(cls, k) is _NO_DEFAULT or exact_key(v) != exact_key(_default_of(cls, k))
        }
        out.append((layer.cls, exact_key(kwargs)))
    return out


def same_recipe(a: Any, b: Any) -> bool:
    """Whether two packs build the same stack from the same entry point with the same kwargs.

    A wrapper argument recorded at its default counts as not given (``capture(env)`` of a live
    ``OrderEnforcing`` records ``disable_render_order_enforcing=False``, ``make`` passes none).
    When unsure (something does not load or compare) the answer is False: the live capture is
    then rebuilt and compared too, which costs time, never a verdict.
    """
    try:
        return bool(
            a.entry_point == b.entry_point
            and exact_key(dict(a.kwargs)) == exact_key(dict(b.kwargs))
            and _layer_keys(a) == _layer_keys(b)
        )
    except Exception:  # noqa: BLE001 - when unsure, rebuild the live capture too
        return False


def live_capture(env: Any, pack: Any) -> dict[str, Any]:
    """``specpack.capture(env)`` of the live instance, when it is another recipe than ``pack``.

    The live capture is a second look, never a fallback: ``pack`` (the registration itself,
    carried) is what the audit rebuilds and judges. When the live instance cannot be captured
    (a factory, such as a ``functools.partial`` of a local function, hands the env an object
    that does not pickle: shimmy's dm_control ids pass a dm_control ``Environment``), that is a
    note, not a failure of the id.

    Returns
    -------
    dict
        ``differences`` (a refusal to capture an unrecorded argument that is not the env's
        EzPickle record), ``ezpickle`` (a refusal because of the env's EzPickle record: the
        finding of :func:`ezpickle_gaps`, seen from ``capture(env)``), ``pack`` (the pickled
        live capture to rebuild across the boundary, or None when it is the same recipe or
        could not be made), ``notes`` and ``failed`` (always None; kept for the callers that
        read it).
    """
    out: dict[str, Any] = {"differences": [], "ezpickle": [], "pack": None, "failed": None,
                           "notes": []}
    try:
        live = capture(env)
    except UnrecordedArgumentsError as e:
        said = f"capture(env) of a live instance refuses: {e}"
        out["ezpickle" if "EzPickle" in str(e) else "differences"].append(said)
        return out
    except SpecPackError as e:
        out["notes"].append(
            f"capture(env) of a live instance is not possible ({one_line(e)}); the pack of the "
            "id carries the registration itself, so it is what was rebuilt and compared (a "
            "live instance's own wrappers were not checked apart from it)")
        return out
    if not same_recipe(live, pack):
        out["pack"] = pickle.dumps(live, protocol=pickle.HIGHEST_PROTOCOL)
    return out
