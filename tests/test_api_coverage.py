"""scripts/api_coverage.py against the repository: the README's generated block is what the
script prints now, and no name ember had (tests/ember_api_names.txt) has disappeared. The
script's counting rules are checked on made-up modules and functions."""
import importlib.util
import json
import os
import subprocess
import sys
import types
import typing
from pathlib import Path

import pytest
import torch_absent

import ember

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "api_coverage.py"
_spec = importlib.util.spec_from_file_location("api_coverage", SCRIPT)
api_coverage = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(api_coverage)


def _run(code):
    """``code``'s stdout from a fresh Python: what ``import torch`` and ``import ember`` reach
    must not depend on what other tests imported."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(Path(ember.__file__).parents[1]), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT,
                          capture_output=True, text=True, check=True).stdout


@pytest.fixture(scope="module")
def coverage():
    if torch_absent.ABSENT:
        pytest.skip(torch_absent.REASON)
    return json.loads(_run(
        "import importlib.util, json\n"
        f"spec = importlib.util.spec_from_file_location('api_coverage', {str(SCRIPT)!r})\n"
        "api_coverage = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(api_coverage)\n"
        "coverage = api_coverage.collect()\n"
        "print(json.dumps({'markdown': api_coverage.markdown(coverage),\n"
        "                  'unreached': coverage.unreached}))\n"))


def test_the_readme_block_is_what_the_script_prints(coverage):
    block = api_coverage.readme_block((ROOT / "README.md").read_text())
    assert block is not None, f"README.md has lost its {api_coverage.BEGIN} block"
    assert block == coverage["markdown"], (
        "README.md's coverage block is out of date: run `python scripts/api_coverage.py "
        "--write-readme` and commit README.md")


def test_import_ember_reaches_the_modules_import_torch_reaches(coverage):
    assert coverage["unreached"] == []


def test_import_ember_starts_nothing_optional():
    loaded = _run("import sys, ember\n"
                  "print([m for m in ('torch', 'mpi4py', 'tensorboardX', 'cupy') "
                  "if m in sys.modules])")
    assert loaded.strip() == "[]"


def test_no_name_ember_had_has_disappeared():
    lines = api_coverage.BASELINE.read_text().split("\n")
    gone = api_coverage.vanished([line for line in lines if line.strip()])
    assert not gone, (
        f"ember no longer has {gone}. If the removal is deliberate, run `python "
        "scripts/api_coverage.py --write-baseline` and commit tests/ember_api_names.txt")


def test_the_baseline_is_sorted_without_duplicates():
    lines = [line for line in api_coverage.BASELINE.read_text().split("\n") if line]
    assert lines == sorted(set(lines))


def _module(name, **attrs):
    module = types.ModuleType(name)
    module.__dict__.update(attrs)
    return module


def test_public_names_leave_out_imports_and_private_names():
    def own():
        pass
    own.__module__ = "torch.fake"

    def elsewhere():
        pass
    elsewhere.__module__ = "torch.other"
    child = _module("torch.fake.child")
    module = _module("torch.fake", own=own, elsewhere=elsewhere, child=child, os=os,
                     Optional=typing.Optional, torch=_module("torch"), _private=own,
                     CONSTANT=3)
    assert api_coverage.public_names(module, "torch.fake") == ["CONSTANT", "child", "own"]
    module.__all__ = ["own", "elsewhere", "_private"]
    assert api_coverage.public_names(module, "torch.fake") == ["child", "elsewhere", "own"]


def _always():
    """A stub."""
    raise NotImplementedError("not yet")


def _for_some_arguments(mode):
    if mode == "nearest":
        raise NotImplementedError(f"ember: mode {mode!r} is not supported")
    if mode == "bool":
        raise NotImplementedError("\"kernel\" not implemented for 'Bool'")  # torch's own error
    return mode


def _fine(x):
    return x


class _Stub:
    def __init__(self):
        raise NotImplementedError


def test_not_implemented_is_read_from_the_source():
    assert api_coverage.not_implemented(_always) == ("always", "not yet")
    assert api_coverage.not_implemented(_for_some_arguments) == (
        "some arguments", "ember: mode {mode} is not supported")
    assert api_coverage.not_implemented(_fine) is None
    assert api_coverage.not_implemented(_Stub) == ("always", "")
    assert api_coverage.not_implemented(len) is None
