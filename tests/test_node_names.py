"""Each backward node class name means one thing: no two Node classes share a name."""
import collections
import importlib
import pkgutil

import ember
from ember.autograd.graph import Node


OPTIONAL = {"cupy", "cupyx"}


def _all_subclasses(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from _all_subclasses(sub)


def test_node_class_names_are_unique():
    for info in pkgutil.walk_packages(ember.__path__, "ember."):
        try:
            importlib.import_module(info.name)
        except ImportError as error:  # an optional extra (CuPy) that is not installed
            assert error.name in OPTIONAL, error
    classes = {cls for cls in _all_subclasses(Node) if cls.__module__.startswith("ember.")}
    by_name = collections.defaultdict(list)
    for cls in classes:
        by_name[cls.__name__].append(f"{cls.__module__}.{cls.__qualname__}")
    repeated = {name: sorted(where) for name, where in by_name.items() if len(where) > 1}
    assert not repeated, repeated
    assert len(classes) > 100  # the walk found the op modules' nodes
