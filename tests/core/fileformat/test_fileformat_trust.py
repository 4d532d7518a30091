"""``allow`` cannot be walked around, and from_json keeps load's trust rules.

Each attempt names code a careful user did not allow: through a module attribute of an allowed
module (``cartpole:gym.os.system``), through the spec's entry-point *strings*, through a
``$dict`` spelling of the spec. Each is refused at load or at ``make()`` with nothing run: the
code that would run writes a marker file, and a control shows the marker does appear when
the same code is allowed to run. Keys read from a file (``read_key``, ``--key-file``) are
the file's exact bytes.
"""

from __future__ import annotations

import base64
import hashlib
import json
import pickle
import sys
from pathlib import Path
from typing import Any

import gymnasium
import kwenvs
import pytest
from _helpers import run_python

import specpack
from specpack import (
    BuildError,
    PackFormatError,
    SignatureError,
    SpecPack,
    SpecPackError,
    UntrustedPackError,
    files,
)
from specpack._core._fileformat.signed import sign

KEY = b"test key for the trust tests 0123456789"
CARTPOLE = "gymnasium.envs.classic_control.cartpole"


def _manifest(**fields: Any) -> dict[str, Any]:
    data = json.loads(specpack.capture("CartPole-v1", max_episode_steps=20).to_json())
    data.update(fields)
    return data


def _write(tmp_path: Path, data: dict[str, Any], name: str = "p.specpack") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


# -- module attributes of allowed modules ------------------------------------------------


@pytest.mark.parametrize("qualname", ["gym.os.system", "np.os.system"])
def test_reference_through_a_module_attribute_runs_nothing(
        tmp_path: Path, qualname: str) -> None:
    marker = tmp_path / "marker"
    data = _manifest(entry_point={"$ref": f"{CARTPOLE}:{qualname}"},
                     kwargs={"command": f"touch {marker}"})
    path = _write(tmp_path, data)
    for pack in (specpack.load(path, allow=["gymnasium"]),
                 SpecPack.from_json(json.dumps(data), allow=["gymnasium"])):
        with pytest.raises(UntrustedPackError, match="steps through the module"):
            pack.make()
    assert not marker.exists()
    # control: the same command, named directly and loaded without allow, does run
    data["entry_point"] = {"$ref": "os:system"}
    with pytest.raises(UntrustedPackError, match="entry_point = os:system"):
        SpecPack.from_json(json.dumps(data), allow=["gymnasium"])
    with pytest.raises(BuildError):
        SpecPack.from_json(json.dumps(data)).make()  # os.system returns 0, not an env
    assert marker.exists()


def test_reference_to_a_function_of_an_imported_module_runs_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    marker = tmp_path / "marker"

    def make_marker(*args: Any, **kwargs: Any) -> Any:
        marker.write_text("gymnasium.make ran")
        raise RuntimeError("not an env")

    monkeypatch.setattr(gymnasium, "make", make_marker)
    data = _manifest(kwargs={"id": "CartPole-v1"})
    for where in ("entry_point", "layer", "kwarg"):
        d = json.loads(json.dumps(data))
        ref = {"$ref": f"{CARTPOLE}:gym.make"}
        if where == "entry_point":
            d["entry_point"] = ref
        elif where == "layer":
            d["layers"][0]["class"] = ref
        else:
            d["kwargs"]["factory"] = ref
        path = _write(tmp_path, d)
        for pack in (specpack.load(path, allow=["gymnasium"]),
                     SpecPack.from_json(json.dumps(d), allow=["gymnasium"])):
            with pytest.raises(SpecPackError):
                pack.make()
            if where == "kwarg":
                with pytest.raises(UntrustedPackError, match="steps through the module"):
                    dict(pack.kwargs)
    assert not marker.exists()
    with pytest.raises(RuntimeError):  # control: the patched function does write the marker
        gymnasium.make("CartPole-v1")
    assert marker.exists()


@pytest.mark.parametrize("ref", [
    f"{CARTPOLE}:CartPoleEnv.__init__.__globals__", f"{CARTPOLE}:__builtins__",
    "gymnasium:__loader__.exec_module",
])
def test_dunder_references_are_refused_before_anything_is_imported(ref: str) -> None:
    data = _manifest(kwargs={"f": {"$ref": ref}})
    with pytest.raises(UntrustedPackError, match="dunder attribute"):
        SpecPack.from_json(json.dumps(data), allow=["gymnasium"])


# -- the spec's entry-point strings ------------------------------------------------------


def _spec_variants(target: str) -> dict[str, dict[str, Any]]:
    return {
        "entry_point": {"id": "X-v0", "entry_point": target},
        "vector_entry_point": {"id": "X-v0", "vector_entry_point": target},
        "additional_wrappers": {"id": "X-v0", "additional_wrappers": {"$tuple": [
            {"$tuple": ["W", target, None]}]}},
        "additional_wrappers as lists": {"id": "X-v0", "additional_wrappers": [
            ["W", target, {}]]},
    }


@pytest.mark.parametrize("field", list(_spec_variants("x")))
@pytest.mark.parametrize("target, reason", [
    ("os:system", "'os' to allow"),
    ("specpack_not_allowed.mod:Env", "'specpack_not_allowed' to allow"),
    (f"{CARTPOLE}:gym.os.system", "names one attribute"),
    (f"{CARTPOLE}:__builtins__", "dunder"),
    ("no colon", "not of the form"),
])
def test_spec_entry_point_strings_outside_allow_are_refused(
        tmp_path: Path, field: str, target: str, reason: str) -> None:
    data = _manifest(spec=_spec_variants(target)[field])
    path = _write(tmp_path, data)
    for call in (lambda: specpack.load(path, allow=["gymnasium"]),
                 lambda: SpecPack.from_json(json.dumps(data), allow=["gymnasium"])):
        with pytest.raises(UntrustedPackError) as info:
            call()
        assert "spec." in str(info.value) and reason in str(info.value), str(info.value)
    assert not any(m in sys.modules for m in ("specpack_not_allowed",))
    allowed = _manifest(spec=_spec_variants(f"{CARTPOLE}:CartPoleEnv")[field])
    SpecPack.from_json(json.dumps(allowed), allow=["gymnasium"])  # control: inside allow


def test_spec_written_as_a_dict_tag_is_refused(tmp_path: Path) -> None:
    data = _manifest(spec={"$dict": [["id", "X-v0"], ["entry_point", "os:system"]]})
    with pytest.raises(PackFormatError, match="plain JSON object"):
        SpecPack.from_json(json.dumps(data), allow=["gymnasium"])
    with pytest.raises(PackFormatError, match="plain JSON object"):
        SpecPack.from_json(json.dumps(data))


def test_describe_lists_the_spec_entry_point_strings(tmp_path: Path) -> None:
    path = tmp_path / "c.specpack"
    specpack.dump(specpack.capture("CartPole-v1"), path)
    modules = files.describe(path)["modules"]
    assert {"where": "spec.vector_entry_point", "module": CARTPOLE,
            "qualname": "CartPoleVectorEnv"} in modules
    assert modules[0] == {"where": "entry_point", "module": CARTPOLE, "qualname": "CartPoleEnv"}


# -- make()'s own wrappers under allow ---------------------------------------------------


def test_allow_of_the_env_package_alone_builds_with_makes_own_wrappers(tmp_path: Path) -> None:
    pack = specpack.capture("KwCartPole-v0", size=3)
    assert [layer.name for layer in pack.layers] == [
        "TimeLimit", "OrderEnforcing", "PassiveEnvChecker"]
    path = tmp_path / "kw.specpack"
    specpack.dump(pack, path)
    for loaded in (specpack.load(path, allow=["kwenvs"]),
                   SpecPack.from_json(pack.to_json(), allow=["kwenvs"])):
        env = loaded.make()
        assert isinstance(env.unwrapped, kwenvs.KwCartPole) and env.unwrapped.options == {
            "size": 3}
        assert type(env).__name__ == "TimeLimit"
        env.close()
        assert loaded == pack and pickle.loads(pickle.dumps(loaded)).make() is not None


def test_makes_own_wrapper_names_admit_only_their_own_classes(tmp_path: Path) -> None:
    data = json.loads(specpack.capture("KwCartPole-v0").to_json())
    data["layers"][0]["class"] = {"$ref": "gymnasium.wrappers:TimeLimit"}  # re-exported
    pack = SpecPack.from_json(json.dumps(data), allow=["kwenvs"])
    pack.make().close()
    data["layers"][0] = {"class": {"$ref": "gymnasium.wrappers:ClipReward"},
                         "kwargs": {"min_reward": 0.0, "max_reward": 1.0}}
    with pytest.raises(UntrustedPackError, match="ClipReward"):
        SpecPack.from_json(json.dumps(data), allow=["kwenvs"])
    data["layers"][0] = {"class": {"$ref": "gymnasium.wrappers.common:TimeLimit"},
                         "kwargs": {"max_episode_steps": 5, "f": {"$ref": "math:tanh"}}}
    with pytest.raises(UntrustedPackError, match=r"layers\[0\]\.kwargs\.f = math:tanh"):
        SpecPack.from_json(json.dumps(data), allow=["kwenvs"])


# -- from_json keeps load's trust rules --------------------------------------------------


def _payload_manifest() -> str:
    payload = pickle.dumps(7, protocol=4)
    digest = "sha256:" + hashlib.sha256(payload).hexdigest()
    data = _manifest(kwargs={"cfg": {"$object": digest}}, payloads={digest: {
        "kind": "object", "name": "builtins.int", "python": "3.11", "size": len(payload),
        "digest": digest, "format": "cloudpickle", "note": "",
        "data": base64.b64encode(payload).decode("ascii")}})
    return json.dumps(data)


def test_from_json_refuses_payloads_without_trust_or_key() -> None:
    text = _payload_manifest()
    with pytest.raises(UntrustedPackError, match=r"object builtins\.int at kwargs\.cfg"):
        SpecPack.from_json(text)
    with pytest.raises(UntrustedPackError):
        SpecPack.from_json(text.encode())
    assert SpecPack.from_json(text, trust=True)._kwargs["cfg"].payload == pickle.dumps(7, 4)


def test_from_json_accepts_payloads_of_a_signed_manifest_with_its_key() -> None:
    signed = sign(KEY, _payload_manifest().encode())
    for given in (signed, signed.decode("utf-8")):
        assert SpecPack.from_json(given, key=KEY).kwargs["cfg"] == 7
        with pytest.raises(UntrustedPackError, match=f"signed \\(key id {files.key_id(KEY)}"):
            SpecPack.from_json(given)
        with pytest.raises(SignatureError, match="another key"):
            SpecPack.from_json(given, key=b"other key", trust=True)
    altered = signed.replace(b'"CartPole-v1"', b'"CartPole-v0"', 1)
    with pytest.raises(SignatureError, match="altered"):
        SpecPack.from_json(altered, key=KEY, trust=True)
    with pytest.raises(SignatureError, match="not signed"):
        SpecPack.from_json(_payload_manifest(), key=KEY)


def test_from_json_checks_allow_before_payloads() -> None:
    data = json.loads(_payload_manifest())
    data["kwargs"]["f"] = {"$ref": "os:system"}
    with pytest.raises(UntrustedPackError, match=r"kwargs\.f = os:system"):
        SpecPack.from_json(json.dumps(data), trust=True, allow=["gymnasium"])


def test_payload_refusal_lists_a_bounded_number_of_places() -> None:
    data = json.loads(_payload_manifest())
    digest = next(iter(data["payloads"]))
    data["kwargs"] = {"x": [{"$object": digest}] * 60_000}
    with pytest.raises(UntrustedPackError) as info:
        SpecPack.from_json(json.dumps(data))
    text = str(info.value)
    assert "kwargs.x[0], kwargs.x[1]" in text and "and 59995 more places" in text
    assert len(text) < 2000


# -- keys are bytes, exactly -------------------------------------------------------------

WHITESPACE_KEY = b" \n\t key with whitespace bytes \r\n\x00\x0b "


def test_read_key_returns_the_files_bytes_exactly(tmp_path: Path) -> None:
    key_file = tmp_path / "pack.key"
    key_file.write_bytes(WHITESPACE_KEY)
    assert files.read_key(key_file) == WHITESPACE_KEY
    pack = specpack.capture("CartPole-v1")
    by_api, by_file = tmp_path / "api.specpack", tmp_path / "file.specpack"
    specpack.dump(pack, by_api, key=WHITESPACE_KEY)
    specpack.dump(pack, by_file, key=files.read_key(key_file))
    assert by_api.read_bytes() == by_file.read_bytes()
    assert specpack.load(by_api, key=files.read_key(key_file)) == pack
    assert specpack.load(by_file, key=WHITESPACE_KEY) == pack
    with pytest.raises(SignatureError, match="another key"):  # control: whitespace counts
        specpack.load(by_api, key=WHITESPACE_KEY.strip())


def test_key_file_on_the_command_line_verifies_like_key(tmp_path: Path) -> None:
    key_file, stripped = tmp_path / "pack.key", tmp_path / "stripped.key"
    key_file.write_bytes(WHITESPACE_KEY)
    stripped.write_bytes(WHITESPACE_KEY.strip())
    path = tmp_path / "signed.specpack"
    specpack.dump(specpack.capture("CartPole-v1"), path, key=WHITESPACE_KEY)
    ok = run_python(["-m", "specpack", "inspect", "--json", "--key-file", str(key_file),
                     str(path)], cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["signature"]["status"] == "valid"
    bad = run_python(["-m", "specpack", "inspect", "--key-file", str(stripped), str(path)],
                     cwd=tmp_path)
    assert bad.returncode != 0 and "Traceback" not in bad.stderr
    assert "another key" in bad.stdout + bad.stderr


# -- describe's strings are raw ----------------------------------------------------------


def test_describe_returns_raw_strings_that_json_escapes(tmp_path: Path) -> None:
    data = _manifest(id="\x1b[2J\u202eid", notes=["\x1b[31mred"],
                     kwargs={"\x1b]0;t\x07": {"$ref": "math:tanh"}, "s": "\x00\x9b"})
    path = _write(tmp_path, data)
    desc = files.describe(path)
    assert desc["manifest"]["id"] == "\x1b[2J\u202eid"
    assert desc["manifest"]["kwargs"]["s"] == "\x00\x9b"
    assert {"where": "kwargs.\x1b]0;t\x07", "module": "math", "qualname": "tanh"} in desc[
        "modules"]
    text = json.dumps(desc, ensure_ascii=True)
    assert all(c not in text for c in "\x1b\x07\x00\x9b\u202e")
    assert "\\u001b[2J\\u202eid" in text and "\\\\x1b" not in text  # escaped once, by JSON
    assert json.loads(text) == json.loads(json.dumps(desc))


# -- signing keys: 32 bytes or more --------------------------------------------------------------


@pytest.mark.parametrize("key", [b"short", b"k" * 31])
def test_signing_with_a_key_shorter_than_32_bytes_is_refused_naming_token_bytes(
        tmp_path: Path, key: bytes) -> None:
    pack = specpack.capture("CartPole-v1")
    with pytest.raises(SignatureError, match=r"secrets\.token_bytes\(32\)") as info:
        specpack.dump(pack, tmp_path / "short.pack", key=key)
    assert f"the signing key is {len(key)} bytes" in str(info.value)
    assert not (tmp_path / "short.pack").exists()


def test_a_32_byte_key_signs_and_a_file_signed_with_a_short_key_before_still_loads(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pack = specpack.capture("CartPole-v1")
    key = b"k" * 32
    specpack.dump(pack, tmp_path / "ok.pack", key=key)
    assert specpack.load(tmp_path / "ok.pack", key=key) == pack
    # A file signed with a 5-byte key by an earlier version (no minimum then) still verifies.
    monkeypatch.setattr("specpack._core._fileformat.signed.MIN_KEY_BYTES", 0)
    specpack.dump(pack, tmp_path / "old.pack", key=b"short")
    monkeypatch.undo()
    assert specpack.load(tmp_path / "old.pack", key=b"short") == pack
    assert files.describe(tmp_path / "old.pack", key=b"short")["signature"]["status"] == "valid"
