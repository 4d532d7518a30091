"""What an env records about its own constructor arguments, checked on an instance built where
it is registered: its EzPickle record against the kwargs ``make`` passed, and the live stack's
capture against the id's recipe (values compared with
:func:`specpack._core._carry.values.exact_key`: ``1``, ``1.0`` and ``True`` differ)."""

from __future__ import annotations

import contextlib
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
from .._verify.compare import compare
from .._verify.trace import record, writable

__all__ = ["ezpickle_gaps", "first_step", "live_capture", "same_recipe"]

_STEP = re.compile(r"\bstep (\d+)\b")
_NO_DEFAULT = object()


def first_step(differences: list[str]) -> int | None:
    """The rollout step the first difference names (``"step 7: reward differs ..."``)."""
    hit = _STEP.search(differences[0]) if differences else None
    return int(hit.group(1)) if hit else None


def _default_of(cls: type, name: str) -> Any:
    """The default of ``cls``'s parameter ``name``, or ``_NO_DEFAULT``."""
    try:
        param = inspect.signature(cls).parameters.get(name)
    except (TypeError, ValueError):
        return _NO_DEFAULT
    return _NO_DEFAULT if param is None or param.default is param.empty else param.default


def _pickled_by_ezpickle(base: Any) -> bool:
    """Whether pickling ``base`` goes through its EzPickle record (not when its class defines
    its own ``__getstate__``/``__reduce__``..., as Meta-World's ``SawyerXYZEnv`` does)."""
    methods = ("__getstate__", "__setstate__", "__reduce__", "__reduce_ex__")
    return isinstance(base, EzPickle) and all(
        getattr(type(base), name, None) is getattr(EzPickle, name, None) for name in methods)


def _consequence(base: Any, actions: list[Any], seed: int,
                 otherwise: str) -> tuple[str, int | None]:
    """What a rollout of ``base``'s pickle round trip shows against ``base``'s over the same
    actions (``otherwise`` when nothing differs), and the first step where they differ."""
    try:
        clone = pickle.loads(pickle.dumps(base))
    except Exception as e:  # noqa: BLE001 - reported as the consequence
        return f"pickle.loads(pickle.dumps(env.unwrapped)) itself fails: {one_line(e)}", None
    try:
        here = record(base, writable(actions), seed)
        there = record(clone, writable(actions), seed)
    finally:
        with contextlib.suppress(Exception):  # closing is best effort
            clone.close()
    # EzPickle does not carry the spec (gymnasium sets it after construction): compare the rest.
    diffs = compare(replace(here, spec={}), replace(there, spec={}),
                    labels=("the built env", "its pickle round trip"), shared=False)
    if diffs:
        return f"a rollout of the round-tripped env differs: {diffs[0]}", first_step(diffs)
    return otherwise, None


def ezpickle_gaps(env: Any, pack: Any, actions: list[Any], seed: int) -> dict[str, Any]:
    """The EzPickle record of ``env`` (unstepped; this may step its base env) against the
    kwargs ``make`` passed: ``failures`` (gaps that change the env), ``notes`` (gaps at the
    default) and ``step`` (where the round trip's rollout first differs, or None)."""
    out: dict[str, Any] = {"failures": [], "notes": [], "step": None}
    base = getattr(env, "unwrapped", env)
    if not _pickled_by_ezpickle(base):
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
        consequence, out["step"] = _consequence(base, actions, seed,
                                                "the round trip happens to rebuild it")
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
                changed.append(f"{name} was built with {key}={short(value)} but EzPickle "
                               f"recorded {key}={short(recorded[key])}")
            continue
        default = _default_of(cls, key)
        if default is _NO_DEFAULT:
            changed.append(f"{name} was built with {key}={short(value)} but EzPickle did not "
                           "record it, and it has no default (the round trip raises TypeError)")
        elif exact_key(default) != exact_key(value):
            changed.append(f"{name} was built with {key}={short(value)} but EzPickle did not "
                           "record it, so pickle.loads(pickle.dumps(env)) rebuilds it with "
                           f"{key}={short(default)}")
        else:
            out["notes"].append(
                f"EzPickle gap at the default: {name} does not record {key}; the spec passes "
                f"{key}={short(value)}, its default, so pickle.loads(pickle.dumps(env)) "
                f"rebuilds the same env (passing another value would not survive; {fix})")
    if changed:
        consequence, out["step"] = _consequence(
            base, actions, seed, f"a {len(actions)}-step rollout of the round-tripped env does "
            "not differ (the value may matter elsewhere)")
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
        kwargs = {k: v for k, v in layer.kwargs.items()
                  if (d := _default_of(cls, k)) is _NO_DEFAULT or exact_key(v) != exact_key(d)}
        out.append((layer.cls, exact_key(kwargs)))
    return out


def same_recipe(a: Any, b: Any) -> bool:
    """Whether two packs build the same stack from the same entry point with the same kwargs
    (a wrapper argument at its default counts as not given: ``capture(env)`` of a live
    ``OrderEnforcing`` records ``disable_render_order_enforcing=False``, ``make`` passes none).
    When unsure, False: the live capture is then rebuilt too, which costs time, never a verdict."""
    try:
        return bool(a.entry_point == b.entry_point
                    and exact_key(dict(a.kwargs)) == exact_key(dict(b.kwargs))
                    and _layer_keys(a) == _layer_keys(b))
    except Exception:  # noqa: BLE001 - when unsure, rebuild the live capture too
        return False


def live_capture(env: Any, pack: Any) -> dict[str, Any]:
    """``specpack.capture(env)`` of the live instance, a second look (``pack`` is what the audit
    judges): the refusals to capture it (``differences``, ``ezpickle``), ``pack`` (the pickled
    capture when it is another recipe, else None), ``notes``, ``failed`` (always None)."""
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
