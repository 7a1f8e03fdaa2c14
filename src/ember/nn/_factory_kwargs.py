"""``nn.factory_kwargs``: the ``device`` / ``dtype`` / ``memory_format`` arguments a module
hands to the tensors it creates."""

__all__ = ["factory_kwargs"]


def factory_kwargs(kwargs):
    """Merge ``kwargs``' ``device``, ``dtype`` and ``memory_format`` with a nested
    ``factory_kwargs`` dict (which lets a signature that has a ``dtype`` of its own still pass
    one to factories); raises TypeError on other keys or on a key given both ways."""
    if kwargs is None:
        return {}
    simple_keys = {"device", "dtype", "memory_format"}
    expected_keys = simple_keys | {"factory_kwargs"}
    if not kwargs.keys() <= expected_keys:
        raise TypeError(f"unexpected kwargs {kwargs.keys() - expected_keys}")
    result = dict(kwargs.get("factory_kwargs", {}))
    for key in simple_keys:
        if key in kwargs:
            if key in result:
                raise TypeError(f"{key} specified twice, in **kwargs and in factory_kwargs")
            result[key] = kwargs[key]
    return result
