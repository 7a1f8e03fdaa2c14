"""Module attributes that hold a bool switch, checked as torch's setters check them."""
import types


class BoolFlag:
    """A switch on a module class: reads give its value; assigning anything but a bool raises
    torch's RuntimeError naming ``setter`` (the C++ setter torch reports) and changes nothing."""

    def __init__(self, default, setter):
        self.value, self.setter = default, setter

    def __get__(self, module, owner=None):
        return self if module is None else self.value

    def __set__(self, module, value):
        self.value = check_bool(value, self.setter)


def check_bool(value, setter):
    if not isinstance(value, bool):
        raise RuntimeError(f"{setter} expects a bool, but got {type(value).__name__}")
    return value


def install(module_name, namespace):
    """Give the module ``module_name`` a class of its own holding ``namespace``'s flags, so
    that ``module.flag = value`` goes through them."""
    import sys
    module = sys.modules[module_name]
    module.__class__ = type("_FlagModule", (types.ModuleType,), dict(namespace))
