"""The exceptions of ``ember.compile``, named as torch._dynamo.exc's."""

__all__ = ["TorchDynamoException", "Unsupported", "InvalidBackend", "BackendCompilerFailed"]


class TorchDynamoException(RuntimeError):
    """The base of ember.compile's errors (torch's name, so ``except`` clauses carry over)."""


class Unsupported(TorchDynamoException):
    """A graph break where ``fullgraph=True`` asked for one graph: the function consumed a
    tensor's value in Python (``if x.sum() > 0``, ``.item()``, ``print(x)``)."""


class InvalidBackend(TorchDynamoException):
    """``ember.compile`` was given a backend name it does not have."""

    def __init__(self, name, known, note=""):
        super().__init__(f"Invalid backend: {name!r}{note}, see `ember._dynamo.list_backends()` for "
                         f"available backends: {', '.join(known)}")


class BackendCompilerFailed(TorchDynamoException):
    """A callable backend raised while compiling a captured graph."""

    def __init__(self, backend_fn, inner_exception):
        name = getattr(backend_fn, "__name__", repr(backend_fn))
        super().__init__(f"backend={name!r} raised:\n{type(inner_exception).__name__}: "
                         f"{inner_exception}")
        self.backend_name = name
        self.inner_exception = inner_exception
