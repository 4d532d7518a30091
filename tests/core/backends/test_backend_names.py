"""``specpack._core._backends.BACKENDS`` is the one list of backend names: every name resolves to the
backend of that name, the traits other modules ask about name only listed backends, and the
places that check a backend name (the manifest, make_vec) read it."""

from __future__ import annotations

import pytest

import specpack
from specpack._core._backends import BACKENDS, DEFAULT_BACKEND, get_backend, with_trait
from specpack._core._errors import BackendUnavailableError, CaptureError


def test_every_listed_backend_name_is_the_name_of_the_backend_it_resolves_to() -> None:
    assert DEFAULT_BACKEND == BACKENDS[0] == "gymnasium"
    for name in BACKENDS:
        try:
            backend = get_backend(name)
        except (BackendUnavailableError, ImportError):  # its library is not installed here
            continue
        assert backend.name == name
    with pytest.raises(CaptureError, match="unknown backend 'torch'; use one of gymnasium, gym, "
                       "pettingzoo"):
        get_backend("torch")


@pytest.mark.parametrize("trait", ["ids", "audit", "vector", "multi_agent"])
def test_each_trait_names_listed_backends_in_registry_order(trait: str) -> None:
    names = with_trait(trait)  # type: ignore[arg-type]
    assert names and list(names) == [n for n in BACKENDS if n in names]


def test_make_vec_builds_only_backends_with_vector_support() -> None:
    pack = specpack.capture("CartPole-v1")
    assert pack.backend in with_trait("vector")
    venv = specpack.make_vec(pack, 1, vectorization_mode="sync")
    venv.close()
