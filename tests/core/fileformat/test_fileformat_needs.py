"""The manifest form of ``requires``, ``assets`` and the seal: written, read back, checked.

A carried asset's bytes are part of the file (base64), covered by the signature like the rest;
a hand edit to them is refused on read, before anything is written to disk or built.
"""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

import specpack
from specpack import PackFormatError, SignatureError, SpecPack
from specpack._core._assets import Asset

DATA = b"<mujoco model='long_ant'/>"
KEY = b"k" * 32


def _pack() -> SpecPack:
    asset = Asset(path="/project/robots/long_ant.xml", kind="file", size=len(DATA),
                  sha256=hashlib.sha256(DATA).hexdigest(), carried=True, data=DATA)
    return specpack.capture("CartPole-v1").evolve(
        requires={"gymnasium": "1.0.0", "mujoco": "3.3.0"}, assets=(asset,))


def _edited(pack: SpecPack, edit: Any) -> str:
    data = json.loads(pack.to_json())
    edit(data)
    return json.dumps(data)


def test_requires_and_carried_assets_round_trip_through_a_signed_file(tmp_path: Path) -> None:
    pack = _pack()
    path = tmp_path / "ant.specpack"
    specpack.dump(pack, path, key=KEY)
    back = specpack.load(path, key=KEY)
    assert back.requires == {"gymnasium": "1.0.0", "mujoco": "3.3.0"}
    assert back.assets == pack.assets and back.assets[0].data == DATA
    assert back.fingerprint == pack.fingerprint


def test_a_manifest_without_the_new_fields_reads_as_before() -> None:
    pack = specpack.capture("CartPole-v1")
    text = _edited(pack, lambda d: d.pop("requires"))
    back = SpecPack.from_json(text)
    assert (dict(back.requires), back.assets, back.sealed) == ({}, (), None)
    assert "assets" not in json.loads(pack.to_json())  # none found: nothing written


def test_a_changed_byte_of_a_carried_asset_is_refused_on_read() -> None:
    def tamper(d: dict[str, Any]) -> None:
        d["assets"][0]["data"] = base64.b64encode(DATA.replace(b"long", b"tiny")).decode()

    with pytest.raises(PackFormatError, match=r"assets\[0\].*altered"):
        SpecPack.from_json(_edited(_pack(), tamper))


def test_a_signed_file_with_an_edited_asset_fails_its_signature(tmp_path: Path) -> None:
    path = tmp_path / "ant.specpack"
    specpack.dump(_pack(), path, key=KEY)
    raw = path.read_bytes()
    digest = hashlib.sha256(DATA).hexdigest()
    path.write_bytes(raw.replace(digest.encode(), ("0" * 64).encode()))
    with pytest.raises(SignatureError):
        specpack.load(path, key=KEY)


@pytest.mark.parametrize(("edit", "message"), [
    (lambda d: d.__setitem__("requires", {"mujoco": 3}), "requires"),
    (lambda d: d["assets"][0].__setitem__("sha256", "xyz"), "sha256"),
    (lambda d: d["assets"][0].__setitem__("carried", False), "no 'data'"),
    (lambda d: d["assets"][0].pop("data"), "'data'"),
    (lambda d: d["assets"][0].__setitem__("kind", "link"), "'kind'"),
    (lambda d: d.__setitem__("seal", {"steps": 1}), "seal"),
], ids=["requires-version-not-a-string", "bad-digest", "uncarried-with-data",
        "carried-without-data", "unknown-kind", "seal-missing-fields"])
def test_malformed_needs_fields_are_refused_naming_the_field(edit: Any, message: str) -> None:
    with pytest.raises(PackFormatError, match=message):
        SpecPack.from_json(_edited(_pack(), edit))


def test_describe_lists_requires_and_assets_without_the_carried_bytes(tmp_path: Path) -> None:
    path = tmp_path / "ant.specpack"
    specpack.dump(_pack(), path, key=KEY)
    manifest = specpack.files.describe(path)["manifest"]
    assert manifest["requires"] == {"gymnasium": "1.0.0", "mujoco": "3.3.0"}
    [asset] = manifest["assets"]
    assert asset["path"] == "/project/robots/long_ant.xml" and asset["carried"] is True
    assert "data" not in asset
