"""What a user's launcher runs before training: configure the package in this process.

``specpack audit auditpkg/ --import auditpkg.launch`` runs it in the audit's parent, as a
training script would; the audit's fresh worker processes never do.
"""

from auditpkg import envs

envs.configure(calibration=2.5)
