"""The gymnasium (1.x) backend: registry lookup, ``make`` semantics, live stacks, building.

Resolution follows ``gymnasium.make`` step for step (gymnasium 1.0 through 1.4 share it):
the spec's kwargs updated with the call's, then ``PassiveEnvChecker`` (unless disabled),
``OrderEnforcing`` (if ``order_enforce``), ``TimeLimit`` (the call's ``max_episode_steps``,
else the spec's; ``-1`` means none), the spec's ``additional_wrappers``, and finally the
render-mode wrappers (``HumanRendering``/``RenderCollection``), which depend on the final
``render_mode`` and so are decided at build time. The env's ``unwrapped.spec`` is set to the
same minimal ``EnvSpec`` that ``make`` sets.
"""

from __future__ import annotations

import difflib
import importlib
import re
from typing import TYPE_CHECKING, Any

import gymnasium
from gymnasium.envs.registration import EnvSpec, WrapperSpec
from gymnasium.utils import EzPickle, RecordConstructorArgs

from .._values import is_plain, materialize
from ..errors import CaptureError, UnknownEnvError
from . import Recipe
from ._args import check_coverage, evidence_kwargs, ezpickle_kwargs, init_params
from ._common import (
    construct,
    import_id_module,
    memo_token,
    memo_valid,
    register_pack,
    wrap_failure,
)
from ._gymnasium_compat import GYMNASIUM_VERSION, adapt_layer_kwargs, repair_record

if TYPE_CHECKING:
    from ..pack import SpecPack

__all__ = ["BACKEND", "GymnasiumBackend"]

_ID_SAFE = re.compile(r"[^\w.-]+")
_OPTION_NAMES = ("max_episode_steps", "disable_env_checker")


def suggest(env_id: str, registry: Any) -> str:
    """`` did you mean 'X'?`` for the closest registered ids, or an empty string."""
    keys = list(registry.keys())
    close = difflib.get_close_matches(env_id, keys, n=3, cutoff=0.6)
    if not close:
        lowered = {k.lower(): k for k in keys}
        close = [lowered[k] for k in difflib.get_close_matches(env_id.lower(), lowered, n=3)]
    if not close:
        return ""
    text = f" did you mean {close[0]!r}?"
    if len(close) > 1:
        text += " (also close: " + ", ".join(repr(c) for c in close[1:]) + ")"
    return text


#: EnvSpec field values that a pack's spec record leaves out (those ``make`` sets on
#: ``env.unwrapped.spec``); keeps pickles and manifests small.
_META_DEFAULTS: dict[str, Any] = {
    "reward_threshold": None,
    "nondeterministic": False,
    "max_episode_steps": None,
    "order_enforce": False,
    "disable_env_checker": True,
    "additional_wrappers": (),
    "vector_entry_point": None,
}


def spec_meta(spec: EnvSpec, *, minimal: bool) -> dict[str, Any]:
    """The ``EnvSpec`` fields a rebuilt env must carry as ``env.unwrapped.spec``.

    ``minimal`` gives what ``gymnasium.make`` sets (no TimeLimit/checker/order fields, no
    additional wrappers). Fields at their default are left out; ``entry_point`` is left out
    when it is the string the pack's entry point was resolved from, and ``None`` when the
    spec's entry point is a callable (the rebuilt env then gets the callable).
    """
    meta: dict[str, Any] = {"id": spec.id}
    if not isinstance(spec.entry_point, str):
        meta["entry_point"] = None
    fields: dict[str, Any] = {
        "reward_threshold": spec.reward_threshold,
        "nondeterministic": spec.nondeterministic,
        "vector_entry_point": (
            spec.vector_entry_point if isinstance(spec.vector_entry_point, str) else None
        ),
    }
    if not minimal:
        fields.update(
            max_episode_steps=spec.max_episode_steps,
            order_enforce=spec.order_enforce,
            disable_env_checker=spec.disable_env_checker,
            additional_wrappers=tuple(
                (w.name, w.entry_point, w.kwargs) for w in spec.additional_wrappers
            ),
        )
    for k, v in fields.items():
        if v != _META_DEFAULTS[k]:
            meta[k] = v
    return meta


class GymnasiumBackend:
    """The backend for gymnasium 1.x envs."""

    name = "gymnasium"
    library_prefixes: tuple[str, ...] = ("gymnasium.",)

    def owns(self, obj: Any) -> bool:
        return isinstance(obj, (gymnasium.Env, EnvSpec))

    # -- resolution --------------------------------------------------------------------------

    def from_id(self, env_id: str, options: dict[str, Any], kwargs: dict[str, Any]) -> Recipe:
        from gymnasium.envs.registration import registry

        full_id = import_id_module(env_id)
        spec = registry.get(full_id)
        if spec is None:
            try:
                spec = gymnasium.spec(full_id)
            except Exception:  # noqa: BLE001 - any lookup failure means "unknown id"
                raise UnknownEnvError(
                    f"no env registered as {full_id!r} in gymnasium's registry;"
                    f"{suggest(full_id, registry)} Register it first, or pass the env class: "
                    "specpack.capture(MyEnv)"
                ) from None
        return self.from_spec(spec, options, kwargs)

    def from_spec(self, spec: Any, options: dict[str, Any], kwargs: dict[str, Any]) -> Recipe:
        if not isinstance(spec, EnvSpec):
            raise CaptureError(f"expected a gymnasium EnvSpec, got {type(spec).__name__}")
        entry = spec.entry_point
        if entry is None:
            raise CaptureError(
                f"the spec {spec.id!r} has no entry_point; register it with "
                "entry_point='module:Class' or a callable"
            )
        max_episode_steps = options.get("max_episode_steps")
        disable_env_checker = options.get("disable_env_checker")
        env_kwargs = dict(spec.kwargs)
        env_kwargs.update(kwargs)
        layers: list[tuple[type, dict[str, Any]]] = []
        if disable_env_checker is False or (
            disable_env_checker is None and spec.disable_env_checker is False
        ):
            layers.append((gymnasium.wrappers.PassiveEnvChecker, {}))
        if spec.order_enforce:
            layers.append((gymnasium.wrappers.OrderEnforcing, {}))
        if max_episode_steps != -1:
            steps = max_episode_steps if max_episode_steps is not None else spec.max_episode_steps
            if steps is not None:
                layers.append((gymnasium.wrappers.TimeLimit, {"max_episode_steps": steps}))
        for w in spec.additional_wrappers:
            if w.kwargs is None:
                raise CaptureError(
                    f"the spec {spec.id!r} lists the wrapper {w.name} without recorded kwargs "
                    "(it does not inherit gymnasium.utils.RecordConstructorArgs), so it cannot "
                    "be recreated; make the wrapper record its arguments"
                )
            wcls = _load_entry(w.entry_point, f"wrapper {w.name} of {spec.id!r}")
            layers.append((wcls, dict(w.kwargs)))
        layers.reverse()  # outermost first
        if isinstance(entry, str):
            entry_string: str | None = entry
            entry_obj: Any = None
        else:
            entry_string, entry_obj = None, entry
            if not callable(entry):
                raise CaptureError(
                    f"the spec {spec.id!r} has entry_point={entry!r}, which is not callable; "
                    "use a class, a factory function or a 'module:Class' string"
                )
        return Recipe(
            id=spec.id,
            entry=entry_obj,
            entry_string=entry_string,
            kwargs=env_kwargs,
            spec=spec_meta(spec, minimal=True),
            layers=layers,
            auto_render=True,
        )

    def from_callable(
        self, fn: Any, options: dict[str, Any], kwargs: dict[str, Any]
    ) -> Recipe:
        name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or "env"
        spec_id = _ID_SAFE.sub("_", str(name)).strip("_.-") or "env"
        spec = EnvSpec(id=spec_id, entry_point=fn)
        recipe = self.from_spec(spec, options, kwargs)
        recipe.id = None
        return recipe

    def from_env(self, env: Any) -> Recipe:
        if not isinstance(env, gymnasium.Env):
            raise CaptureError(f"expected a gymnasium.Env, got {type(env).__name__}")
        layers: list[tuple[type, dict[str, Any]]] = []
        notes: list[str] = []
        node: Any = env
        while isinstance(node, gymnasium.Wrapper):
            cls = type(node)
            layers.append((cls, _wrapper_kwargs(node, cls)))
            node = node.env
        base = node
        bcls = type(base)
        spec = getattr(base, "spec", None)
        entry_string: str | None = None
        entry: Any = bcls
        if spec is not None and _spec_made(spec, bcls):
            kwargs = dict(spec.kwargs)
            if isinstance(spec.entry_point, str):
                entry_string = spec.entry_point
            meta = spec_meta(spec, minimal=False)
        else:
            kwargs = _base_kwargs(base, bcls, notes)
            meta = spec_meta(spec, minimal=False) if spec is not None else {}
            if spec is not None and isinstance(spec.entry_point, str):
                meta["entry_point"] = spec.entry_point
        _note_stack(layers, notes)
        return Recipe(
            id=spec.id if spec is not None else None,
            entry=None if entry_string else entry,
            entry_string=entry_string,
            kwargs=kwargs,
            spec=meta,
            layers=layers,
            auto_render=False,
            notes=notes,
        )

    # -- building ----------------------------------------------------------------------------

    def build(self, pack: SpecPack, kwargs: dict[str, Any]) -> Any:
        plan = pack._cache.get("gymnasium.plan")
        if plan is None:
            plan = _plan(pack)
            pack._cache["gymnasium.plan"] = plan
        creator, layers = plan
        human = collection = False
        if pack.auto_render and "render_mode" in kwargs:
            human, collection = _render_plan(creator, kwargs)
        env = construct(pack, creator, kwargs, gymnasium.Env,
                        "for a legacy gym env capture with backend='gym'")
        if pack.spec:
            env.unwrapped.spec = _env_spec(pack, creator, kwargs)
        try:  # inline, not `with wrapping(pack)`: a context manager costs ~1 µs per make
            for wcls, fixed, lowered in layers:
                if fixed is not None:
                    env = wcls(env, **fixed) if fixed else wcls(env)
                else:
                    env = wcls(env, **_layer_kwargs(pack, wcls, lowered))
            if human:
                env = gymnasium.wrappers.HumanRendering(env)
            elif collection:
                env = gymnasium.wrappers.RenderCollection(env)
        except Exception as e:
            err = wrap_failure(pack, e)
            if err is e:
                raise
            raise err from e
        return env

    def register(self, pack: SpecPack, env_id: str | None) -> str:
        from gymnasium.envs.registration import registry

        return register_pack(pack, env_id, registry, gymnasium.register, "gymnasium")

    def memo_token(self, env_id: str) -> Any:
        from gymnasium.envs.registration import registry

        return memo_token(registry, env_id, strings_only=False)

    def memo_valid(self, env_id: str, token: Any) -> bool:
        from gymnasium.envs.registration import registry

        return memo_valid(registry, env_id, token)


_Plan = tuple[Any, tuple[tuple[Any, "dict[str, Any] | None", dict[str, Any]], ...]]


def _plan(pack: SpecPack) -> _Plan:
    """What every build of ``pack`` in this process shares: loaded classes and, for layers
    whose kwargs are plain scalars of this gymnasium release, the ready kwargs."""
    creator = pack.entry_point.load()
    captured = pack.versions.get("gymnasium")
    skewed = captured is not None and captured != GYMNASIUM_VERSION
    layers = []
    for layer in pack._inner:
        wcls = layer.cls.load()
        lk = layer._kwargs
        fixed = dict(lk) if not skewed and all(is_plain(v) for v in lk.values()) else None
        layers.append((wcls, fixed, lk))
    return creator, tuple(layers)


def _layer_kwargs(pack: SpecPack, wcls: Any, lowered: dict[str, Any]) -> dict[str, Any]:
    """Fresh kwargs for one wrapper (callables loaded, containers copied, versions fitted)."""
    kw: dict[str, Any] = materialize(lowered)
    captured = pack.versions.get("gymnasium")
    if kw and captured is not None and captured != GYMNASIUM_VERSION:
        kw = adapt_layer_kwargs(wcls, kw, captured, pack.label)
    return kw


def _load_entry(entry: Any, what: str) -> Any:
    if callable(entry):
        return entry
    from .._carry import code_ref_from_string

    return code_ref_from_string(str(entry), by_value=None, what=what)[1]


def _render_plan(creator: Any, kwargs: dict[str, Any]) -> tuple[bool, bool]:
    """gymnasium.make's render-mode logic; may rewrite ``kwargs['render_mode']``."""
    render_mode = kwargs.get("render_mode")
    if render_mode is None:
        return False, False
    metadata = getattr(creator, "metadata", None)
    if not isinstance(metadata, dict):
        return False, False
    render_modes = metadata.get("render_modes")
    if render_modes is None or render_mode in render_modes:
        return False, False
    displayable = {"rgb_array", "rgb_array_list"}.intersection(render_modes)
    if render_mode == "human" and displayable:
        kwargs["render_mode"] = displayable.pop()
        return True, False
    if render_mode.endswith("_list") and render_mode[: -len("_list")] in render_modes:
        kwargs["render_mode"] = render_mode[: -len("_list")]
        return False, True
    return False, False


def _env_spec(pack: SpecPack, creator: Any, kwargs: dict[str, Any]) -> EnvSpec:
    """``env.unwrapped.spec`` for a rebuild: a cached template with this env's kwargs."""
    cache = pack._cache
    template = cache.get("gymnasium.spec")
    if template is None:
        meta = {**_META_DEFAULTS, **pack.spec}
        if "entry_point" not in meta:
            entry: Any = pack.entry_point.name
        else:
            entry = meta["entry_point"] if meta["entry_point"] is not None else creator
        template = EnvSpec(
            id=meta.get("id") or "env",
            entry_point=entry,
            reward_threshold=meta["reward_threshold"],
            nondeterministic=bool(meta["nondeterministic"]),
            max_episode_steps=meta["max_episode_steps"],
            order_enforce=bool(meta["order_enforce"]),
            disable_env_checker=bool(meta["disable_env_checker"]),
            additional_wrappers=tuple(
                WrapperSpec(name, ep, materialize(kw) if kw is not None else None)
                for name, ep, kw in materialize(meta["additional_wrappers"])
            ),
            vector_entry_point=meta["vector_entry_point"],
        )
        cache["gymnasium.spec"] = template
    spec = EnvSpec.__new__(EnvSpec)
    spec.__dict__.update(template.__dict__)
    spec.kwargs = kwargs
    return spec


def _spec_made(spec: EnvSpec, cls: type) -> bool:
    """Whether ``spec`` describes how this base env was really made (by ``make``)."""
    ep = spec.entry_point
    if ep is None:
        return False
    if isinstance(ep, str):
        modname, _, attr = ep.partition(":")
        if modname == "__mp_main__":
            modname = "__main__"
        try:
            obj: Any = importlib.import_module(modname)
            for part in attr.split("."):
                obj = getattr(obj, part)
        except Exception:  # noqa: BLE001 - an unloadable string is no evidence
            return False
        ep = obj
    return ep is cls


def _wrapper_kwargs(node: Any, cls: type) -> dict[str, Any]:
    name = f"{cls.__module__}.{cls.__qualname__}"
    fix = (
        f"make {cls.__qualname__} inherit gymnasium.utils.RecordConstructorArgs and call "
        f"RecordConstructorArgs.__init__(self, <arg>=<arg>, ...) in its __init__, or capture the "
        "env below it and re-apply the wrapper in the worker"
    )
    if isinstance(node, RecordConstructorArgs) and hasattr(node, "_saved_kwargs"):
        kwargs = {k: v for k, v in node._saved_kwargs.items() if k != "env"}
        kwargs = repair_record(node, cls, kwargs)  # gaps of older 1.x records
        check_coverage(node, cls, kwargs, "RecordConstructorArgs", fix)
        return kwargs
    params = init_params(cls)
    if params is not None and not params:
        return {}
    from ..errors import UnrecordedArgumentsError

    taken = ", ".join(p.name for p in params or ())
    raise UnrecordedArgumentsError(
        f"the wrapper {name} takes constructor arguments ({taken or 'unknown'}) but does not "
        f"record them, so it cannot be rebuilt faithfully; {fix}"
    )


def _base_kwargs(base: Any, cls: type, notes: list[str] | None = None) -> dict[str, Any]:
    """Constructor kwargs of a base env that was not built by ``make``."""
    name = f"{cls.__module__}.{cls.__qualname__}"
    fix = (
        f"capture the class with its arguments, specpack.capture({cls.__qualname__}, ...), or "
        "build the env with gymnasium.make so its spec records them"
    )
    from ..errors import UnrecordedArgumentsError

    if isinstance(base, RecordConstructorArgs) and hasattr(base, "_saved_kwargs"):
        kwargs = dict(base._saved_kwargs)
        check_coverage(base, cls, kwargs, "RecordConstructorArgs", fix)
        return kwargs
    if isinstance(base, EzPickle):
        kwargs = ezpickle_kwargs(base, cls) or {}
        gap = check_coverage(
            base, cls, kwargs, "EzPickle",
            f"pass every argument to EzPickle.__init__ in {cls.__qualname__}.__init__, or {fix}",
        )
        if gap and notes is not None:
            notes.append(
                f"EzPickle gap: {cls.__name__} does not pass {', '.join(gap)} to "
                "EzPickle.__init__; nothing shows a non-default value here, so the rebuild uses "
                "those defaults (pickling the env itself would too)"
            )
        return kwargs
    params = init_params(cls)
    if params is not None and not params:
        return {}
    if params is not None:
        recovered = evidence_kwargs(base, params)
        if recovered is not None:
            if notes is not None and recovered:
                notes.append(
                    f"{cls.__qualname__} was built directly: its constructor arguments "
                    f"({', '.join(recovered)}) were read back from same-named attributes; "
                    "pack.verify() proves the rebuild"
                )
            return recovered
    taken = ", ".join(p.name for p in params or ())
    missing = ", ".join(p.name for p in params or () if evidence_kwargs(base, [p]) is None)
    raise UnrecordedArgumentsError(
        f"the env {name} was built directly with constructor arguments ({taken or 'unknown'}; "
        f"no attribute holds {missing or 'them'}) with constructor arguments ({taken or 'unknown'}) "
        f"that nothing recorded (no spec, no EzPickle, no RecordConstructorArgs); {fix}"
    )


_MAKE_INNER = frozenset({"PassiveEnvChecker", "OrderEnforcing"})


def _note_stack(layers: list[tuple[type, dict[str, Any]]], notes: list[str]) -> None:
    """Portability notes about the stack's shape (kept exactly, but worth knowing)."""
    names = [c.__qualname__ for c, _ in layers]
    if "TimeLimit" in names:
        below = [n for n in names[names.index("TimeLimit") + 1 :] if n not in _MAKE_INNER]
        if below:
            notes.append(
                f"TimeLimit is not innermost: {', '.join(below)} sit below it (gymnasium's "
                "env.spec would reorder this stack; the pack keeps it exactly)"
            )
    if names.count("TimeLimit") > 1:
        notes.append("the stack has more than one TimeLimit; every one is kept")


BACKEND = GymnasiumBackend()
