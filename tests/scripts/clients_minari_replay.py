"""Recover the env of a Minari dataset in a fresh interpreter and replay its actions.

``python clients_minari_replay.py DATASET_ID specpack|control`` (MINARI_DATASETS_PATH and
CLIENTS_KEY as for clients_minari_collect.py). specpack: the env from the attached pack
(``specpack.adapters.minari.recover_environment``); control: Minari's own
``dataset.recover_environment()``. Each episode is replayed from its seed with the dataset's
actions; prints one JSON line with the replayed and the stored observations.
"""

import os
import sys

import minari
from clients_common import SEED, attempt, describe, emit


def replay(env, dataset):
    """Episode i reset with SEED + i, then the dataset's actions; the observations seen."""
    out = []
    for i, episode in enumerate(dataset.iterate_episodes()):
        obs, _ = env.reset(seed=SEED + i)
        seen = [obs.tolist()]
        for a in episode.actions:
            obs, *_ = env.step(int(a))
            seen.append(obs.tolist())
        out.append(seen)
    return out


if __name__ == "__main__":
    dataset_id, mode = sys.argv[1], sys.argv[2]
    dataset = minari.load_dataset(dataset_id)
    stored = [ep.observations.tolist() for ep in dataset.iterate_episodes()]
    result = {"stored": stored}
    if mode == "control":
        result["recover"] = attempt(lambda: replay(dataset.recover_environment(), dataset))
    else:
        from specpack.adapters.minari import recover_environment, recover_pack

        key = bytes.fromhex(os.environ["CLIENTS_KEY"])
        result["recover"] = attempt(lambda: replay(recover_environment(dataset, key=key),
                                                   dataset))
        try:  # without the key, by-value code is refused
            recover_pack(dataset)
            result["unsigned"] = "accepted"
        except Exception as e:  # noqa: BLE001
            result["unsigned"] = describe(e)
        try:
            recover_pack(dataset, key=b"another key")
            result["other_key"] = "accepted"
        except Exception as e:  # noqa: BLE001
            result["other_key"] = describe(e)
    emit(result)
