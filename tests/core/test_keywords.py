"""``checked_keywords``: a mistyped keyword of a public function is an ``UnknownKeywordError``
(a ``TypeError``) suggesting the parameter meant; the function keeps its name and signature."""

from __future__ import annotations

import inspect
import pickle
import re

import pytest

import specpack
from specpack._core._errors import SpecPackError, UnknownKeywordError
from specpack._core._keywords import checked_keywords


@checked_keywords
def sample(path: str, *, trust: bool = False, key: bytes | None = None) -> str:
    """A function with fixed keywords."""
    return f"{path} {trust} {key!r}"


def test_a_known_keyword_passes_and_an_unknown_one_is_named_with_a_suggestion() -> None:
    assert sample("p", trust=True) == "p True None"
    with pytest.raises(UnknownKeywordError, match=re.escape(
            "sample() got an unexpected keyword argument 'trsut' (nor 'kye'); did you mean "
            "'trust'? It takes: path, trust, key")) as info:
        sample("p", trsut=True, kye=b"")
    assert isinstance(info.value, TypeError) and isinstance(info.value, SpecPackError)


def test_the_wrapper_keeps_name_signature_and_pickles_by_reference() -> None:
    assert sample.__name__ == "sample" and sample.__doc__ == "A function with fixed keywords."
    assert list(inspect.signature(sample).parameters) == ["path", "trust", "key"]
    assert pickle.loads(pickle.dumps(specpack.load)) is specpack.load


def test_a_mistyped_keyword_of_verify_and_diff_gets_a_did_you_mean() -> None:
    pack = specpack.capture("CartPole-v1")
    with pytest.raises(TypeError, match=re.escape("'step'; did you mean 'steps'?")) as info:
        specpack.verify(pack, step=3)
    assert isinstance(info.value, SpecPackError)
    env = pack.make()
    with pytest.raises(TypeError, match=re.escape("'sed'; did you mean 'seed'?")):
        specpack.diff(env, env, sed=3)
    env.close()
