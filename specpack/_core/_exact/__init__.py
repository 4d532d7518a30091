"""Values described exactly: type and bits (:mod:`.exact`), the nodes of an encoding and their
equality (:mod:`.nodes`), and spaces and values described for comparison (:mod:`.describe`).

The core's own notion of "identical": a worker compares the spaces it built with the ones its
parent was shown (:mod:`specpack._core._vector._factory`), and the verifier
(:mod:`specpack._tools._verify`) compares whole rollouts with the same encoding.
"""
