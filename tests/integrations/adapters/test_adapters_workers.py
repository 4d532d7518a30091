"""``specpack.adapters.worker_env_fn``: gymnasium's AsyncVectorEnv gets the parent's rollouts
from workers under spawn and forkserver with no env built in the parent; the factory shows only
the spaces in its own process, builds in any other, and a worker refuses an env whose spaces
differ from those the parent was shown."""

from __future__ import annotations

import importlib
import pickle
import sys

import pytest
from clients_common import run_client

import specpack
from specpack.adapters import WorkerEnvFn, worker_env_fn, worker_env_fns


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return run_client("clients_workers.py", tmp_path_factory.mktemp("workers"))


@pytest.mark.integration
@pytest.mark.parametrize("case", ["worker_env_fn_spawn", "worker_env_fn_forkserver"])
def test_worker_env_fn_async_vector_env_gives_parents_rollouts_building_nothing_here(
    run: dict, case: str
) -> None:
    assert run[case]["ok"], run[case]
    assert run[case]["value"] == run["reference"]
    assert run[case]["parent_builds"] == 0


@pytest.mark.integration
def test_worker_env_fn_controls_pack_make_builds_one_here_and_the_id_fails(run: dict) -> None:
    assert run["pack_make_spawn"]["value"] == run["reference"]
    assert run["pack_make_spawn"]["parent_builds"] == 1  # gymnasium's throwaway env
    control = run["control_id_spawn"]
    assert not control["ok"], control
    assert "NameNotFound: Environment `Walk` doesn't exist" in run["stderr"]


@pytest.mark.integration
def test_worker_env_fn_shows_spaces_here_and_builds_in_fork_and_spawn_children(
    run: dict,
) -> None:
    assert run["home_call"]["value"] == "ParentView"
    assert run["home_call"]["parent_builds"] == 0
    assert run["unpickled_home_call"] == "ParentView"  # the same process, even via pickle
    assert run["home_reset"].startswith("SpecPackError: reset() on a worker_env_fn's env")
    assert "pack.make()" in run["home_reset"]
    assert run["spawn_child_call"] == "built Walk"
    assert run["fork_child_call"] == "built Walk"  # same mark, another pid


@pytest.mark.integration
def test_worker_env_fn_worker_refuses_an_env_with_other_spaces_than_shown(run: dict) -> None:
    message = run["mismatch"]
    assert message.startswith("SpecPackError: pack __main__:Shifty: the env built in this "
                              "worker does not match"), message
    assert "observation_space: built Box(-100.0, 100.0, (4,), float32), shown " \
           "Box(-100.0, 100.0, (3,), float32)" in message


def test_worker_env_fn_pickles_plainly_and_says_what_it_builds() -> None:
    pack = specpack.capture("CartPole-v1", record_spaces=True)
    fn = worker_env_fn(pack, sutton_barto_reward=True)
    again = pickle.loads(pickle.dumps(fn))
    assert isinstance(again, WorkerEnvFn) and again.env_kwargs == {"sutton_barto_reward": True}
    assert repr(fn) == "WorkerEnvFn(CartPole-v1, env_kwargs={'sutton_barto_reward': True})"
    assert fn.recorded is None  # kwargs: the spaces are recorded on the first call here
    env = fn.build()
    assert env.unwrapped._sutton_barto_reward is True
    env.close()


def test_worker_env_fns_share_one_factory_per_distinct_kwargs() -> None:
    pack = specpack.capture("CartPole-v1", record_spaces=True)
    fns = worker_env_fns(pack, 4, lambda i: {"sutton_barto_reward": bool(i % 2)})
    assert fns[0] is fns[2] and fns[1] is fns[3] and fns[0] is not fns[1]
    same = worker_env_fns(pack, 3)
    assert same[0] is same[1] is same[2] and same[0].recorded == pack.surface


def test_worker_env_fn_without_recorded_spaces_records_them_with_one_build() -> None:
    pack = specpack.capture("CartPole-v1")
    assert pack.surface is None
    fn = worker_env_fn(pack)
    assert fn.recorded is None
    view = fn()
    assert fn.recorded is not None and view.observation_space == fn.recorded.observation_space
    assert fn() is not view and fn.surface() is fn.recorded  # recorded once, kept


def test_worker_env_fn_refuses_what_is_not_a_single_env_pack() -> None:
    with pytest.raises(specpack.SpecPackError, match="takes a SpecPack, got str"):
        worker_env_fn("CartPole-v1")  # type: ignore[arg-type]
    pack = specpack.capture("CartPole-v1")
    with pytest.raises(specpack.SpecPackError, match="names must be strings, got 3"):
        WorkerEnvFn(pack, {3: "x"})  # type: ignore[dict-item]
    import veconly  # noqa: F401 - tests/fixtures: registers the vector-only VecPoles-v0

    with pytest.raises(specpack.SpecPackError, match="is vector-only"):
        worker_env_fn(specpack.capture("VecPoles-v0"))


@pytest.mark.parametrize(("library", "adapter", "function"), [
    ("torchrl", "specpack.adapters.torchrl", "parallel_env"),
    ("tianshou", "specpack.adapters.tianshou", "subproc_vector_env"),
])
def test_adapters_name_the_missing_library_and_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, library: str, adapter: str, function: str
) -> None:
    for name in (library, f"{library}.envs", f"{library}.env"):
        monkeypatch.setitem(sys.modules, name, None)  # importing it raises ImportError
    make = getattr(importlib.import_module(adapter), function)
    pack = specpack.capture("CartPole-v1", record_spaces=True)
    with pytest.raises(specpack.BackendUnavailableError, match=f"pip install {library}$"):
        make(pack, 2)


@pytest.mark.parametrize(("adapter", "function", "modules", "install"), [
    ("specpack.adapters.sample_factory", "register",
     ("sample_factory", "sample_factory.envs", "sample_factory.envs.env_utils"),
     "pip install sample-factory"),
    ("specpack.adapters.pufferlib", "env_creator", ("pufferlib", "pufferlib.emulation"),
     "pip install pufferlib"),
])
def test_sample_factory_and_pufferlib_adapters_name_the_missing_library(
    monkeypatch: pytest.MonkeyPatch, adapter: str, function: str, modules: tuple[str, ...],
    install: str,
) -> None:
    for name in modules:
        monkeypatch.setitem(sys.modules, name, None)  # importing it raises ImportError
    make = getattr(importlib.import_module(adapter), function)
    with pytest.raises(specpack.BackendUnavailableError, match=f"install it with: {install}"):
        make(specpack.capture("CartPole-v1"))
