"""The check torch's C++ setters make on a bool switch."""


def check_bool(value, setter):
    """``value`` if it is a bool; else torch's RuntimeError naming ``setter`` (the C++ setter
    torch reports)."""
    if not isinstance(value, bool):
        raise RuntimeError(f"{setter} expects a bool, but got {type(value).__name__}")
    return value
