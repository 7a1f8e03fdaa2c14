"""Where programs exported by earlier versions name the recurrent layer's call (graphs are
saved with functions by qualified name); the function lives in ``ember.jit._layers``."""
from ..jit._layers import recurrent_layer  # noqa: F401
