"""What a :class:`~specpack._core._vector._factory.WorkerEnvFn` gives in the process that made
it (a module a worker never loads)."""

from __future__ import annotations

from typing import Any

from .._errors import SpecPackError
from .._surface import Surface, SurfaceEnv

__all__ = ["ParentView"]


class ParentView(SurfaceEnv):
    """What a :class:`WorkerEnvFn` gives in its own process: the spaces, no env behind them."""

    def __init__(self, surface: Surface, label: str) -> None:
        super().__init__(surface)
        self.label = label

    def _refuse(self, method: str) -> SpecPackError:
        return SpecPackError(
            f"{method}() on a worker_env_fn's env in the process that made it: there it only "
            f"shows pack {self.label}'s recorded spaces (so vectorizers can read them without "
            "a build). Give worker_env_fn only to libraries that step the env in worker "
            "processes; build here with pack.make()")

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
        raise self._refuse("reset")

    def step(self, action: Any) -> Any:
        raise self._refuse("step")

    def render(self) -> Any:
        raise self._refuse("render")

    def __repr__(self) -> str:
        return f"<ParentView of {self.label}>"
