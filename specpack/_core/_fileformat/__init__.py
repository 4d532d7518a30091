"""A pack's text form: the manifest schema (:mod:`.manifest`, :mod:`.schema`), signatures
(:mod:`.signed`), the trust policy (:mod:`.trust`), reading a text under that policy
(:mod:`.read`), and the pack's ``to_json``/``from_json`` on them (:mod:`.text`).

Nothing here imports the pack module, and the pack loads nothing here until it writes or reads
a text; :mod:`specpack.files` (dump, load, describe: files on disk) sits above both.
"""
