"""``_Namespace``: hands out the unique, legal Python identifiers that name nodes and globals."""
import builtins
import keyword
import math
import re
from collections import defaultdict

_illegal_char_regex = re.compile("[^0-9a-zA-Z_]+")
_name_suffix_regex = re.compile(r"(.*)_(\d+)$")


def custom_builtins():
    """The names every generated module defines besides Python's builtins."""
    import ember
    return {"inf": math.inf, "nan": math.nan, "NoneType": type(None), "ember": ember,
            "device": ember.device}


_RESERVED = ("inf", "nan", "NoneType", "ember", "device")


class _Namespace:
    """A context of names: ``create_name('add', obj)`` returns ``add``, then ``add_1``, ...; a
    name never shadows a Python keyword or builtin (``sum`` becomes ``sum_1``)."""

    def __init__(self):
        self._obj_to_name = {}
        self._used_names = set()
        self._base_count = defaultdict(int)

    def create_name(self, candidate, obj):
        if obj is not None:
            hit = self._obj_to_name.get(id(obj))
            if hit is not None and hit[0] is obj:
                return hit[1]
        candidate = _illegal_char_regex.sub("_", candidate)
        if not candidate:
            candidate = "_unnamed"
        if candidate[0].isdigit():
            candidate = f"_{candidate}"
        match = _name_suffix_regex.match(candidate)
        if match is None:
            base, num = candidate, None
        else:
            base, num_str = match.group(1, 2)
            num = int(num_str)
        candidate = base if num is None else f"{base}_{num}"
        if not num:
            num = self._base_count[base]
        while candidate in self._used_names or self._is_illegal_name(candidate, obj):
            num += 1
            candidate = f"{base}_{num}"
        self._used_names.add(candidate)
        self._base_count[base] = num
        if obj is not None:
            self._obj_to_name[id(obj)] = (obj, candidate)
        return candidate

    def associate_name_with_obj(self, name, obj):
        """Make ``obj``'s name ``name`` (already created for it or for None)."""
        self._obj_to_name[id(obj)] = (obj, name)

    def _is_illegal_name(self, name, obj):
        if name in keyword.kwlist:
            return True
        if name in builtins.__dict__:
            return obj is not builtins.__dict__[name]
        if name in _RESERVED:
            return obj is not custom_builtins()[name]
        return False
