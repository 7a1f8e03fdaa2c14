"""How ops are declared (docs/architecture.md, "How to add an op"), checked on the source:
a node's formulas never choose between arrays and ember ops by testing grad mode; that choice
is the engine's (``backward`` always, ``backward_arrays`` when no graph of the backward is
built)."""
import ast
import pathlib

import ember

SRC = pathlib.Path(ember.__file__).parent

# Nodes still on the old pattern, each with what moves it.
NOT_YET = {}


def _formulas():
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
            for fn in cls.body:
                if isinstance(fn, ast.FunctionDef) and fn.name in ("backward", "backward_arrays"):
                    yield path.relative_to(SRC), cls.name, fn


def test_formulas_do_not_test_grad_mode():
    found = []
    for path, cls, fn in _formulas():
        if cls in NOT_YET:
            continue
        for node in ast.walk(fn):
            if isinstance(node, ast.Attribute) and node.attr == "grad_enabled":
                found.append(f"{path}:{node.lineno} {cls}.{fn.name}")
    assert not found, found


def test_the_walk_sees_the_formulas():
    seen = {(cls, fn.name) for _, cls, fn in _formulas()}
    assert ("MulBackward0", "backward_arrays") in seen and ("ReluBackward0", "backward") in seen
    assert {cls for cls, _ in seen} >= set(NOT_YET)
