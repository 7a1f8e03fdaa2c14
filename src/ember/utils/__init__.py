"""``ember.utils``."""
from . import data  # noqa: F401
