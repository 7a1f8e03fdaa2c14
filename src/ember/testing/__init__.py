"""Test helpers, as ``torch.testing``: ``assert_close`` (and the deprecated
``assert_allclose``)."""
from ._comparison import assert_close, assert_allclose

__all__ = ["assert_close", "assert_allclose"]
