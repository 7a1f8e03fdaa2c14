"""``set_stance``: how compiled functions behave for a while (torch.compiler's stances)."""
import functools

__all__ = ["set_stance", "current_stance", "STANCES"]

STANCES = ("default", "force_eager", "eager_on_recompile", "fail_on_recompile")
_stance = ["default"]


def current_stance():
    return _stance[0]


class set_stance:
    """Set how compiled functions run: ``"default"``; ``"force_eager"`` (run the Python
    function, ignoring graphs); ``"eager_on_recompile"`` (replay graphs already captured, run
    eagerly where a new capture would be needed); ``"fail_on_recompile"`` (raise RuntimeError
    where a new capture would be needed). Takes effect at once; as a context manager or a
    decorator, the previous stance comes back at the end."""

    def __init__(self, stance="default", *, skip_guard_eval_unsafe=False, force_backend=None):
        if stance not in STANCES:
            raise RuntimeError(f"Unknown stance {stance!r}: expected one of "
                               f"{', '.join(STANCES)}")
        if force_backend is not None:
            raise RuntimeError("ember.compiler.set_stance: force_backend is not supported")
        self.stance = stance
        self.previous = _stance[0]
        _stance[0] = stance

    def __enter__(self):
        _stance[0] = self.stance
        return self

    def __exit__(self, *exc):
        _stance[0] = self.previous

    def __call__(self, fn):
        _stance[0] = self.previous
        stance = self.stance

        @functools.wraps(fn)
        def with_stance(*args, **kwargs):
            with set_stance(stance):
                return fn(*args, **kwargs)
        return with_stance
