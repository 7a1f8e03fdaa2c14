"""``immutable_list`` and ``immutable_dict``: the containers a Node keeps its arguments in, so that
changing them in place cannot bypass the bookkeeping of ``Node.args``/``Node.kwargs``."""

__all__ = ["immutable_list", "immutable_dict"]


def _no_mutation(self, *args, **kwargs):
    raise NotImplementedError(f"'{type(self).__name__}' object does not support mutation. "
                              "Assign a new value to the node's args or kwargs instead.")


class immutable_list(list):
    """A list whose contents cannot be changed in place (an argument of a Node)."""

    __delitem__ = __iadd__ = __imul__ = __setitem__ = _no_mutation
    append = clear = extend = insert = pop = remove = reverse = sort = _no_mutation

    def __hash__(self):
        return hash(tuple(self))

    def __reduce__(self):
        return (immutable_list, (tuple(iter(self)),))


class immutable_dict(dict):
    """A dict whose contents cannot be changed in place (the keyword arguments of a Node)."""

    __delitem__ = __setitem__ = __ior__ = _no_mutation
    clear = pop = popitem = setdefault = update = _no_mutation

    def __hash__(self):
        return hash(tuple(self.items()))

    def __reduce__(self):
        return (immutable_dict, (list(self.items()),))
