"""A pack's text form: the manifest schema (:mod:`.manifest`, :mod:`.schema`), signatures
(:mod:`.signed`), the trust policy (:mod:`.trust`), reading a text under that policy
(:mod:`.read`) and the pack's ``to_json``/``from_json`` (:mod:`.face`).

Nothing here imports the pack module: the pack mixes in :class:`.face.FileFace`, and
:mod:`specpack.files` (dump, load, describe: files on disk) sits above both.
"""
