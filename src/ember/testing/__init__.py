"""Test helpers, as ``torch.testing``: ``assert_close`` (and the deprecated
``assert_allclose``), and ``make_tensor``."""
from ._comparison import assert_close, assert_allclose
from ._creation import make_tensor

__all__ = ["assert_close", "assert_allclose", "make_tensor"]
