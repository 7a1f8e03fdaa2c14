"""``ember.random``: seeding and the state of the default generator, and ``fork_rng``, as
``torch.random``. (The samplers themselves live in ``ember.ops.random``.)"""
import contextlib

from .ops.random import (  # noqa: F401
    default_generator, get_rng_state, initial_seed, manual_seed, seed, set_rng_state,
)

__all__ = ["fork_rng", "manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state"]


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices",
             device_type=None):
    """Forks the RNG: on exit from the ``with`` block the default generator's state is
    restored to what it was on entry, so random numbers drawn inside do not change the
    stream outside. ``enabled=False`` makes it a no-op."""
    if not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)
