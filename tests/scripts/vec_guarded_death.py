"""The control of vec_no_main_guard.py: a script with its main guard whose env kills the worker
that builds it (``os._exit``), so the worker dies without a word for another reason (run as a
script: ``vec_guarded_death.py CONTEXT``)."""

import multiprocessing
import os
import sys

import gymnasium


class DiesInWorkers(gymnasium.Env):
    observation_space = gymnasium.spaces.Discrete(2)
    action_space = gymnasium.spaces.Discrete(2)

    def __init__(self):
        if multiprocessing.parent_process() is not None:
            os._exit(3)


if __name__ == "__main__":
    import specpack

    pack = specpack.capture(DiesInWorkers, record_spaces=True)
    venv = specpack.make_vec(pack, 2, context=sys.argv[1])
    venv.close()
    print("built")
