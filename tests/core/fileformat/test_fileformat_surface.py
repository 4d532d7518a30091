"""A pack file's recorded surface (spaces, metadata, render mode) is data: no code in it.

``allow`` and ``describe`` look at the entry point, kwargs, spec and layers; a ``$ref`` hidden
in the surface's metadata was neither allow-checked nor listed, and reached a user as
``pack.metadata``. The surface is written only with gymnasium's own space types and plain
metadata values, so a code reference or payload there is refused as malformed, and what
``to_json`` writes never holds one.
"""

from __future__ import annotations

import base64
import enum
import hashlib
import json
import pickle
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
import pytest

import specpack
from specpack import PackFormatError, SpecPack, UntrustedPackError, files


def _object_node(data: dict[str, Any]) -> dict[str, Any]:
    """An ``$object`` node, with its payload entered in ``data``'s table."""
    payload = pickle.dumps(7, protocol=4)
    digest = "sha256:" + hashlib.sha256(payload).hexdigest()
    data["payloads"][digest] = {
        "kind": "object", "name": "builtins.int", "python": "3.11", "size": len(payload),
        "digest": digest, "format": "cloudpickle", "note": "",
        "data": base64.b64encode(payload).decode("ascii")}
    return {"$object": digest}


NODES = {
    "$ref": lambda data: {"$ref": "os:system"},
    "$ref in a list": lambda data: ["human", {"$tuple": [{"$ref": "os:system"}]}],
    "$enum": lambda data: {"$enum": "signal:Signals", "name": "SIGINT"},
    "$object": _object_node,
}


@pytest.mark.parametrize("what", list(NODES))
def test_code_in_the_recorded_metadata_is_refused_by_load_and_describe(
        tmp_path: Path, what: str) -> None:
    data = json.loads(specpack.capture("CartPole-v1", record_spaces=True).to_json())
    data["surface"]["metadata"]["render_modes"] = NODES[what](data)
    path = tmp_path / "surface.specpack"
    path.write_text(json.dumps(data))
    calls = {
        "load": lambda: specpack.load(path),
        "load allow": lambda: specpack.load(path, allow=["gymnasium", "os", "signal"]),
        "load trust": lambda: specpack.load(path, trust=True),
        "from_json trust": lambda: SpecPack.from_json(json.dumps(data), trust=True),
        "describe": lambda: files.describe(path),
    }
    for name, call in calls.items():
        if what == "$object" and name in ("load", "load allow"):
            with pytest.raises(UntrustedPackError):  # refused first for its payload
                call()
            continue
        with pytest.raises(PackFormatError) as info:
            call()
        message = str(info.value)
        assert "surface.metadata.render_modes" in message, (name, message)
        assert "holds no code references or payloads" in message, (name, message)


class _Mode(enum.Enum):
    FAST = 1


class _EnumMetadataEnv(gymnasium.Env):  # type: ignore[type-arg]
    metadata = {"render_modes": [], "modes": [_Mode.FAST], "render_fps": 4}
    observation_space = gymnasium.spaces.Box(0.0, 1.0, (1,), np.float32)
    action_space = gymnasium.spaces.Discrete(2)

    def reset(self, *, seed: int | None = None, options: Any = None) -> Any:
        super().reset(seed=seed)
        return np.zeros(1, np.float32), {}

    def step(self, action: Any) -> Any:
        return np.zeros(1, np.float32), 0.0, False, False, {}


def test_to_json_leaves_out_metadata_that_would_be_written_as_code() -> None:
    pack = specpack.capture(_EnumMetadataEnv())
    assert pack.metadata is not None and pack.metadata["modes"] == [_Mode.FAST]
    data = json.loads(pack.to_json())
    assert data["surface"]["metadata"] == {"render_modes": [], "render_fps": 4}
    again = SpecPack.from_json(json.dumps(data), trust=True)
    assert again.metadata == {"render_modes": [], "render_fps": 4}
    assert again.observation_space == pack.observation_space
