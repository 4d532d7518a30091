"""Where a module's code comes from, what a pack requires, and the check make() runs.

Each question about installed distributions runs where the answer is real: the distributions of
this venv, or distributions written into a temporary site folder that a fresh interpreter finds
through its search path (the ownership index is made once per process).
"""

from __future__ import annotations

import base64
import hashlib
import importlib
import importlib.metadata as md
import json
import sys
import textwrap
import warnings
from pathlib import Path
from typing import Any

import cloudpickle
import gymnasium
import numpy as np
import pytest
from _helpers import run_python

from specpack._core._errors import BuildError, VersionSkewWarning
from specpack._core._provenance import (
    requires_of,
    source_of,
    user_modules,
)
from specpack._core._versions import check_requires


def _fresh_json(code: str, cwd: Path, pythonpath: list[Path] | None = None) -> Any:
    """Run ``code`` in a fresh interpreter (this checkout's specpack first on its path); parse
    the last line it prints as JSON."""
    env = None
    if pythonpath is not None:
        import os

        env = {"PYTHONPATH": os.pathsep.join(
            [*(str(p) for p in pythonpath), os.environ.get("PYTHONPATH", "")])}
    proc = run_python(["-c", textwrap.dedent(code)], cwd=cwd, env=env)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _record_line(root: Path, rel: str) -> str:
    data = (root / rel).read_bytes()
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{rel},sha256={digest},{len(data)}"


def _dist_info(site: Path, name: str, version: str, record: list[str],
               **extra: str) -> None:
    """Write ``<name>-<version>.dist-info`` into ``site`` as an installer would."""
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    for fname, text in extra.items():
        (info / fname).write_text(text)
    (info / "RECORD").write_text("\n".join([*record, f"{info.name}/RECORD,,"]) + "\n")


# -- origins -------------------------------------------------------------------------------------


def test_numpy_and_gymnasium_are_distributions_with_their_metadata_versions() -> None:
    for module, dist in (("numpy", "numpy"), ("numpy.linalg", "numpy"),
                         ("gymnasium", "gymnasium"), ("gymnasium.spaces.box", "gymnasium")):
        src = source_of(module)
        assert (src.origin, src.distribution, src.version) == (
            "distribution", dist, md.version(dist)), src
        assert src.path == sys.modules[module].__file__ and not src.editable
    assert requires_of(["numpy.linalg", "gymnasium", "json"]) == {
        "gymnasium": md.version("gymnasium"), "numpy": md.version("numpy")}


def test_an_extension_module_belongs_to_the_distribution_that_installed_it() -> None:
    suffixes = tuple(importlib.machinery.EXTENSION_SUFFIXES)
    ext = next(name for name, mod in list(sys.modules.items())
               if name.startswith("numpy.") and str(getattr(mod, "__file__", "")).endswith(suffixes))
    src = source_of(ext)
    assert (src.origin, src.distribution, src.version) == ("distribution", "numpy", np.__version__)


def test_json_is_stdlib_and_sys_is_builtin() -> None:
    assert source_of("json").origin == "stdlib"
    assert source_of("json.decoder").origin == "stdlib"
    assert source_of("sys") == type(source_of("sys"))("sys", "builtin")
    assert requires_of(["json", "sys", "os", "__main__"]) == {}


def test_a_module_in_a_temp_folder_on_sys_path_is_the_users(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "prov_user_mod.py").write_text("X = 1\n")
    (tmp_path / "prov_user_unloaded.py").write_text("raise SystemExit('imported')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.import_module("prov_user_mod")
    try:
        src = source_of("prov_user_mod")
        assert src.origin == "user" and Path(src.path or "") == tmp_path / "prov_user_mod.py"
        # Not loaded: located without importing it (importing it would exit).
        assert source_of("prov_user_unloaded").origin == "user"
        assert "prov_user_unloaded" not in sys.modules
        assert source_of("__main__").origin == "user"
        assert user_modules(["json", "prov_user_mod", "numpy", "prov_user_mod", "__main__"]) == [
            "prov_user_mod", "__main__"]
        assert requires_of(["prov_user_mod"]) == {}
    finally:
        sys.modules.pop("prov_user_mod", None)


def test_modules_registered_by_value_are_by_value_with_their_submodules(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pkg = tmp_path / "prov_byval_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "sub.py").write_text("Y = 2\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = importlib.import_module("prov_byval_pkg")
    importlib.import_module("prov_byval_pkg.sub")
    cloudpickle.register_pickle_by_value(mod)
    try:
        assert source_of("prov_byval_pkg").origin == "by_value"
        assert source_of("prov_byval_pkg.sub").origin == "by_value"
        assert user_modules(["prov_byval_pkg.sub"]) == []
    finally:
        cloudpickle.unregister_pickle_by_value(mod)
        for name in ("prov_byval_pkg.sub", "prov_byval_pkg"):
            sys.modules.pop(name, None)
    assert source_of("prov_byval_pkg.sub").origin == "user"  # no longer registered


def test_specpack_itself_is_never_required_nor_the_users() -> None:
    import specpack._core._pack

    src = source_of(specpack._core._pack.__name__)
    assert (src.origin, src.distribution) == ("distribution", "specpack")
    assert requires_of(["specpack", "specpack._core._pack", "numpy"]) == {"numpy": md.version("numpy")}
    assert user_modules(["specpack", "specpack._core._pack"]) == []


# -- distributions written into a temporary site folder (a fresh interpreter finds them) ----------


def test_editable_installs_shared_files_namespaces_and_extensions_in_a_fresh_interpreter(
        tmp_path: Path) -> None:
    site, project = tmp_path / "sitedir", tmp_path / "project"
    site.mkdir()
    (project / "edpkg").mkdir(parents=True)
    (project / "edpkg" / "__init__.py").write_text("")
    (project / "stray_mod.py").write_text("")  # in the project folder, not installed by it
    _dist_info(site, "Demo_Editable", "1.02.3+Local.7", ["__editable__.demo.pth,,"],
               **{"direct_url.json": json.dumps({"url": project.as_uri(),
                                                 "dir_info": {"editable": True}}),
                  "top_level.txt": "edpkg\n"})
    # One file listed by two distributions: the one whose recorded digest matches owns it.
    (site / "shared_mod.py").write_text("WHO = 'second'\n")
    good = _record_line(site, "shared_mod.py")
    _dist_info(site, "first-writer", "1.0", ["shared_mod.py,sha256=AAAA,3"])
    _dist_info(site, "second-writer", "2.0", [good])
    # A namespace package with a portion from each of two distributions.
    for portion, dist in (("a", "ns-a"), ("b", "ns-b")):
        (site / "nspkg" / portion).mkdir(parents=True)
        (site / "nspkg" / portion / "__init__.py").write_text("")
        _dist_info(site, dist, "0.1", [_record_line(site, f"nspkg/{portion}/__init__.py")])
    # An extension module (located, never imported) and a top-level single-file module.
    ext = "fakeext" + importlib.machinery.EXTENSION_SUFFIXES[0]
    (site / ext).write_bytes(b"not loaded")
    (site / "single.py").write_text("")
    _dist_info(site, "one-file", "3.0", [_record_line(site, ext), _record_line(site, "single.py")])

    out = _fresh_json("""
        import dataclasses, json, importlib
        from specpack._core._provenance import requires_of, source_of
        names = ["edpkg", "stray_mod", "shared_mod", "nspkg", "nspkg.a", "nspkg.b", "fakeext",
                 "single"]
        for n in names:
            if n != "fakeext":
                importlib.import_module(n)
        print(json.dumps({"sources": {n: dataclasses.asdict(source_of(n)) for n in names},
                          "requires": requires_of(names)}))
    """, cwd=tmp_path, pythonpath=[site, project])
    src = out["sources"]
    assert src["edpkg"]["origin"] == "distribution" and src["edpkg"]["editable"] is True
    assert (src["edpkg"]["distribution"], src["edpkg"]["version"]) == (
        "Demo_Editable", "1.02.3+Local.7")  # the metadata's own spelling, not normalised
    assert src["edpkg"]["path"] == str(project / "edpkg" / "__init__.py")
    assert src["stray_mod"]["origin"] == "user"
    assert src["shared_mod"]["distribution"] == "second-writer"
    assert (src["nspkg"]["origin"], src["nspkg"]["distribution"]) == ("distribution", None)
    assert src["nspkg.a"]["distribution"] == "ns-a" and src["nspkg.b"]["distribution"] == "ns-b"
    assert src["fakeext"]["distribution"] == src["single"]["distribution"] == "one-file"
    assert out["requires"] == {"Demo_Editable": "1.02.3+Local.7", "ns-a": "0.1", "ns-b": "0.1",
                               "one-file": "3.0", "second-writer": "2.0"}


def test_files_recorded_by_absolute_dotted_and_quoted_paths_belong_to_their_distribution(
        tmp_path: Path) -> None:
    site, elsewhere = tmp_path / "sitedir", tmp_path / "elsewhere"
    for folder in (site / "odd_pkg", elsewhere):
        folder.mkdir(parents=True)
    for path in (site / "odd_pkg" / "__init__.py", site / "odd_pkg" / "dotted.py",
                 site / "comma,mod.py", elsewhere / "far_mod.py"):
        path.write_text("")
    _dist_info(site, "odd-paths", "4.0", [
        f"{elsewhere / 'far_mod.py'},,",  # absolute: RECORD allows it
        "../sitedir/odd_pkg/./__init__.py,,",  # leaves the folder and comes back
        "odd_pkg//dotted.py,,",
        '"comma,mod.py",,',  # quoted by csv
    ])
    out = _fresh_json("""
        import json, importlib
        from specpack._core._provenance import source_of
        names = ["far_mod", "odd_pkg", "odd_pkg.dotted", "comma,mod"]
        print(json.dumps({n: source_of(n).distribution for n in names}))
    """, cwd=tmp_path, pythonpath=[site, elsewhere])
    assert out == {"far_mod": "odd-paths", "odd_pkg": "odd-paths", "odd_pkg.dotted": "odd-paths",
                   "comma,mod": "odd-paths"}


def test_capture_keeps_no_file_list_of_a_distribution_the_pack_never_asks_about(
        tmp_path: Path) -> None:
    # A distribution with 20,000 module files (torch lists ~14,000): capturing CartPole-v1 asks
    # about gymnasium's files only, so this one's list is never kept, nor its RECORD (1.6 MB)
    # held whole while the index is made; asking about it reads its list.
    site = tmp_path / "sitedir"
    (site / "bulky_dist").mkdir(parents=True)
    (site / "bulky_dist" / "__init__.py").write_text("")
    digest = "sha256=" + "A" * 43
    _dist_info(site, "bulky-dist", "1.0", [_record_line(site, "bulky_dist/__init__.py"), *(
        f"bulky_dist/sub{i // 100}/module_{i}.py,{digest},1234" for i in range(20_000))])
    out = _fresh_json("""
        import json, tracemalloc
        import importlib.metadata, gymnasium, specpack
        import specpack._core._owners
        from specpack._core._provenance import source_of
        only = [tracemalloc.Filter(True, specpack._core._owners.__file__)]
        def kept():
            return sum(s.size for s in
                       tracemalloc.take_snapshot().filter_traces(only).statistics("filename"))
        tracemalloc.start()
        first_question = source_of("gymnasium.spaces").distribution
        peak = tracemalloc.get_traced_memory()[1]
        pack = specpack.capture("CartPole-v1")
        after_capture = kept()
        bulky = source_of("bulky_dist").distribution
        print(json.dumps({"first": first_question, "peak": peak, "requires": dict(pack.requires),
                          "after_capture": after_capture, "bulky": bulky,
                          "after_bulky": kept()}))
    """, cwd=tmp_path, pythonpath=[site])
    assert out["first"] == "gymnasium" and "bulky-dist" not in out["requires"]
    assert out["peak"] < 1_000_000, out  # reading every RECORD whole: > 1.6 MB
    assert out["after_capture"] < 1_000_000, out  # the whole map of this venv: ~10 MB
    assert out["bulky"] == "bulky-dist"
    assert out["after_bulky"] > out["after_capture"] + 1_000_000, out  # its 20,000 paths


# -- check_requires ------------------------------------------------------------------------------


def test_missing_distributions_raise_one_build_error_naming_pip_install_in_a_fresh_interpreter(
        tmp_path: Path) -> None:
    out = _fresh_json(f"""
        import json
        from specpack._core._versions import check_requires
        try:
            check_requires({{"numpy": {np.__version__!r}, "specpack-no-such-dist": "1.0",
                             "another_missing": "2.0b1"}}, label="'Demo-v0'")
        except Exception as e:
            print(json.dumps([str(e), [c.__name__ for c in type(e).__mro__]]))
    """, cwd=tmp_path)
    message, mro = out
    assert "BuildError" in mro and "SpecPackError" in mro
    assert "'Demo-v0'" in message
    assert "pip install another_missing==2.0b1 specpack-no-such-dist==1.0" in message
    assert "numpy" not in message


def test_a_different_version_warns_naming_the_distribution_and_both_versions() -> None:
    with pytest.warns(VersionSkewWarning) as caught:
        check_requires({"numpy": "0.0.1", "gymnasium": gymnasium.__version__}, label="'X-v0'")
    text = str(caught[0].message)
    assert "numpy 0.0.1 (captured)" in text and f"{np.__version__} (here)" in text
    assert "gymnasium" not in text and "specpack.check(pack)" in text
    assert "specpack.verify(pack)" not in text


def test_matching_versions_pass_silently() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_requires({"numpy": np.__version__, "gymnasium": gymnasium.__version__},
                       label="'X-v0'")
        check_requires({}, label="'X-v0'")


def test_a_hostile_distribution_name_is_quoted_in_the_install_command() -> None:
    with pytest.raises(BuildError) as info:
        check_requires({"nope; rm -rf ~": "1"}, label="'X-v0'")
    assert "pip install 'nope; rm -rf ~==1'" in str(info.value)


@pytest.mark.parametrize("requires", [{"numpy": 2}, {1: "1.0"}, {"numpy": ["2"]},
                                      {"a": "1", 2: "1"}])
def test_requires_that_are_not_names_to_versions_raise_build_error(requires: Any) -> None:
    with pytest.raises(BuildError, match="'X-v0': its requires must map distribution names"):
        check_requires(requires, label="'X-v0'")


def test_check_requires_reads_installed_versions_once_per_process(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import specpack._core._versions as versions

    asked: list[str] = []
    real = versions._dist_version

    def counting(name: str) -> str | None:
        asked.append(name)
        return real(name)

    monkeypatch.setattr(versions, "_dist_version", counting)
    requires = {"numpy": np.__version__, "cloudpickle": cloudpickle.__version__,
                "specpack-once-only-probe": "0.0"}
    for _ in range(3):
        with pytest.raises(BuildError, match=r"specpack-once-only-probe==0\.0"):
            check_requires(requires, label="'X-v0'")
    assert sorted(asked) == ["cloudpickle", "numpy", "specpack-once-only-probe"]
