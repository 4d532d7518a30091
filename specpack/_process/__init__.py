"""Running a pack in another interpreter: the one worker protocol (verify, audit, run)."""
