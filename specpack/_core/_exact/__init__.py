"""Values described exactly, by type and bits, and compared: the core's notion of "identical",
shared by a worker checking the spaces it built and by the verifier comparing rollouts.
"""
