"""The fast path of ``nn.MultiheadAttention`` and ``nn.TransformerEncoder``, as
``torch.backends.mha``. ember's fast path is its packed self-attention (one projection of the
packed input, then fused attention); with the switch off, every call takes the general path."""
__all__ = ["get_fastpath_enabled", "set_fastpath_enabled"]

_is_fastpath_enabled = True


def get_fastpath_enabled():
    """Returns whether fast path for TransformerEncoder and MultiHeadAttention is enabled.

    The fastpath might not be run even if ``get_fastpath_enabled`` returns ``True`` unless
    all conditions on inputs are met."""
    return _is_fastpath_enabled


def set_fastpath_enabled(value):
    """Sets whether fast path is enabled."""
    global _is_fastpath_enabled
    _is_fastpath_enabled = value
