"""``check_sparse_tensor_invariants``: whether the sparse constructors check their arguments
(index bounds, CSR row pointers) when ``check_invariants`` is not given."""

__all__ = ["check_sparse_tensor_invariants"]

_state = {"enabled": False}


class check_sparse_tensor_invariants:
    """Controls the checks of sparse tensor invariants in ``sparse_coo_tensor`` and
    ``sparse_csr_tensor``: off by default; ``enable()``/``disable()`` set it for the process,
    and an instance is a context manager (or a decorator) that sets it to ``enable`` inside.
    An explicit ``check_invariants`` argument of a constructor takes precedence."""

    @staticmethod
    def is_enabled():
        """Whether the checks are on by default."""
        return _state["enabled"]

    @staticmethod
    def enable():
        """Turns the checks on by default."""
        _state["enabled"] = True

    @staticmethod
    def disable():
        """Turns the checks off by default."""
        _state["enabled"] = False

    def __init__(self, enable=True):
        self.state = enable
        self.saved_state = None

    def __enter__(self):
        if self.saved_state is not None:
            raise RuntimeError("This context manager instance is already activated. Use a different "
                               "context manager instance for context nesting.")
        self.saved_state = self.is_enabled()
        _state["enabled"] = self.state

    def __exit__(self, type, value, traceback):
        _state["enabled"] = self.saved_state
        self.saved_state = None

    def __call__(self, function):
        """As a decorator: ``function`` runs with the checks set to this instance's state."""
        def with_state(*args, **kwargs):
            with type(self)(self.state):
                return function(*args, **kwargs)
        return with_state
