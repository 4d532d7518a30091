"""A pack's text form: the manifest schema (:mod:`.manifest`, :mod:`.schema`), signatures
(:mod:`.signed`), the trust policy (:mod:`.trust`), one read under it (:mod:`.read`) and the
pack's ``to_json``/``from_json`` (:mod:`.text`). Nothing here imports the pack module.
"""
