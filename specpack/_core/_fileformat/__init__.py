"""A pack's text form: the manifest schema (:mod:`.manifest`, :mod:`.schema`), signatures
(:mod:`.signed`), the trust policy (:mod:`.trust`) and the pack's ``to_json``/``from_json``,
one read under that policy (:mod:`.text`). Nothing here imports the pack module."""
