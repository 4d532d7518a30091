"""make_vec from a script's top level, without an ``if __name__ == "__main__":`` guard (run as a
script: ``vec_no_main_guard.py CONTEXT``). Under spawn and forkserver every worker imports this
script again and dies starting workers of its own; tests/core/vector/test_main_guard_hint.py reads
the parent's error."""

import sys

import specpack

pack = specpack.capture("CartPole-v1")
venv = specpack.make_vec(pack, 2, context=sys.argv[1])
venv.close()
print("built")
