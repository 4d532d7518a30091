"""A user's CustomAnt project, written into a folder at test time (imported from the script dir).

The layout is gymnasium's "load a custom quadruped" pattern: a project folder holding
``robots/long_ant.xml`` (gymnasium's own ``ant.xml`` with longer lower legs) whose legs live in a
second file, ``robots/parts.xml``, pulled in by ``<include file="parts.xml"/>``, and an env
module ``my_envs.py`` that registers ``CustomAnt-v0`` = gymnasium's ``AntEnv`` with
``xml_file`` pointing into the folder. The XML is derived from the ``ant.xml`` of the installed
gymnasium when the project is written, so no MuJoCo or gymnasium file lives in this repository.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import gymnasium

ENV_ID = "CustomAnt-v0"
#: Lower legs (the ``*_ankle_geom`` capsules) are this many times gymnasium's.
LEG_SCALE = 1.5

MY_ENVS = '''\
"""The user's env module: registers CustomAnt-v0 with a robot file from this project."""

import os

import gymnasium

HERE = os.path.dirname(os.path.abspath(__file__))

gymnasium.register(
    "{env_id}",
    entry_point="gymnasium.envs.mujoco.ant_v5:AntEnv",
    max_episode_steps=1000,
    kwargs={{"xml_file": os.path.join(HERE, "robots", "long_ant.xml")}},
)
'''


def write_project(folder: Path) -> Path:
    """Write the project into ``folder`` (created); return the path of ``long_ant.xml``."""
    robots = folder / "robots"
    robots.mkdir(parents=True, exist_ok=True)
    source = Path(gymnasium.__file__).parent / "envs" / "mujoco" / "assets" / "ant.xml"
    tree = ET.parse(source)
    for geom in tree.iter("geom"):
        if geom.get("name", "").endswith("_ankle_geom"):
            ends = [float(v) * LEG_SCALE for v in geom.attrib["fromto"].split()]
            geom.set("fromto", " ".join(f"{v:g}" for v in ends))
    torso = tree.find("./worldbody/body[@name='torso']")
    assert torso is not None, f"{source} has no torso body"
    legs = [body for body in torso.findall("body") if body.get("name", "").endswith("leg")]
    assert len(legs) == 4, f"{source}: expected 4 legs, found {len(legs)}"
    parts = ET.Element("mujoco", {"model": "long_ant_legs"})
    for leg in legs:
        torso.remove(leg)
        parts.append(leg)
    torso.append(ET.Element("include", {"file": "parts.xml"}))
    tree.getroot().set("model", "long_ant")
    ET.ElementTree(parts).write(robots / "parts.xml", encoding="unicode")
    tree.write(robots / "long_ant.xml", encoding="unicode")
    (folder / "my_envs.py").write_text(MY_ENVS.format(env_id=ENV_ID))
    return robots / "long_ant.xml"


def leg_length(env: object) -> float:
    """Length of the first lower leg of a built Ant env (the model's ``left_ankle_geom``)."""
    model = env.unwrapped.model  # type: ignore[attr-defined]
    import mujoco

    geom = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, "left_ankle_geom")
    return float(2 * model.geom_size[geom][1])  # a capsule's size[1] is its half-length

