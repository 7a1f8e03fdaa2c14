"""Grad modes: ``no_grad``, ``enable_grad``, ``set_grad_enabled``, ``inference_mode``, and the
multithreaded-backward setting.

The state is thread-local, as in torch. Each works as a context manager and as a decorator.
"""
import functools
import inspect
import threading

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled", "set_multithreading_enabled", "is_multithreading_enabled"]


class _State(threading.local):
    grad_enabled = True
    inference = False
    multithreading_enabled = True


state = _State()


def is_grad_enabled():
    """Returns True if grad mode is currently enabled."""
    return state.grad_enabled


def is_inference_mode_enabled():
    """Returns True if inference mode is currently enabled."""
    return state.inference


class _DecoratorContextManager:
    """Context manager that also decorates functions and generator functions."""

    def __call__(self, func):
        if inspect.isclass(func):
            raise RuntimeError("grad-mode decorators cannot decorate a class")
        if inspect.isgeneratorfunction(func):
            return self._wrap_generator(func)

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)
        return wrapper

    def _wrap_generator(self, func):
        """Each step of the generator runs in this mode; the caller's mode is untouched."""
        @functools.wraps(func)
        def generator_wrapper(*args, **kwargs):
            gen = func(*args, **kwargs)
            try:
                with self.clone():
                    response = gen.send(None)
                while True:
                    try:
                        request = yield response
                    except GeneratorExit:
                        with self.clone():
                            gen.close()
                        raise
                    except BaseException as exc:
                        with self.clone():
                            response = gen.throw(exc)
                    else:
                        with self.clone():
                            response = gen.send(request)
            except StopIteration as stop:
                return stop.value
        return generator_wrapper

    def clone(self):
        return self.__class__()


class _NoParamDecoratorContextManager(_DecoratorContextManager):
    """Usable bare as a decorator too: ``@no_grad`` as well as ``@no_grad()``."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class no_grad(_NoParamDecoratorContextManager):
    """Context manager (and decorator) that disables gradient calculation."""

    def __init__(self):
        self.prev = False

    def __enter__(self):
        self.prev = state.grad_enabled
        state.grad_enabled = False

    def __exit__(self, *exc):
        state.grad_enabled = self.prev


class enable_grad(_NoParamDecoratorContextManager):
    """Context manager (and decorator) that enables gradient calculation."""

    def __init__(self):
        self.prev = False

    def __enter__(self):
        self.prev = state.grad_enabled
        state.grad_enabled = True

    def __exit__(self, *exc):
        state.grad_enabled = self.prev


class set_grad_enabled(_DecoratorContextManager):
    """Sets gradient calculation on or off; takes effect at once, and as a context manager
    restores the previous mode on exit."""

    def __init__(self, mode):
        if not isinstance(mode, bool):
            raise TypeError(f"set_grad_enabled(): argument 'mode' must be bool, not {type(mode).__name__}")
        self.prev = state.grad_enabled
        self.mode = mode
        state.grad_enabled = mode

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        state.grad_enabled = self.prev

    def clone(self):
        return self.__class__(self.mode)

    def __call__(self, func):
        state.grad_enabled = self.prev
        return super().__call__(func)


class set_multithreading_enabled(_DecoratorContextManager):
    """Enables or disables multithreaded backward (per thread); takes effect at once, and as a
    context manager restores the previous setting on exit. ember's engine runs backward on the
    calling thread either way; the setting is kept for programs that read or set it."""

    def __init__(self, mode):
        if not isinstance(mode, bool):
            raise TypeError("set_multithreading_enabled(): argument 'enabled' must be bool, not "
                            f"{type(mode).__name__}")
        self.prev = state.multithreading_enabled
        self.mode = mode
        state.multithreading_enabled = mode

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        state.multithreading_enabled = self.prev

    def clone(self):
        return self.__class__(self.mode)


def is_multithreading_enabled():
    """Whether backward may run on worker threads (see :class:`set_multithreading_enabled`)."""
    return state.multithreading_enabled


class inference_mode(_DecoratorContextManager):
    """Like ``no_grad``, for code that will never take part in autograd: no graph is recorded.
    (ember does not tag the tensors made inside as inference tensors.)"""

    def __new__(cls, mode=True):
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)

    def __init__(self, mode=True):
        self.mode = mode
        self.prev = None

    def __enter__(self):
        self.prev = (state.grad_enabled, state.inference)
        if self.mode:
            state.grad_enabled = False
            state.inference = True
        else:
            state.inference = False

    def __exit__(self, *exc):
        state.grad_enabled, state.inference = self.prev

    def clone(self):
        return self.__class__(self.mode)

    def __call__(self, func):
        if isinstance(func, bool):
            return self.__class__(func)
        return super().__call__(func)
