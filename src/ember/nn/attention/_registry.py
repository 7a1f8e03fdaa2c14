"""The registry of flash-attention implementations: backend providers register a function
that installs theirs; users activate one by name. ember ships none."""
import logging

logger = logging.getLogger(__name__)

_FLASH_ATTENTION_IMPLS = {}
_active = [None]  # (name, handle) of the activated implementation, or None


def register_flash_attention_impl(impl, *, register_fn):
    """Register the callable that activates a flash attention impl (for SDPA backend
    providers; users call ``activate_flash_attention_impl``)."""
    _FLASH_ATTENTION_IMPLS[impl] = register_fn


def activate_flash_attention_impl(impl):
    """Activate a previously registered flash attention impl (after restoring the default);
    the handle its register function returns, if any, is kept alive."""
    restore_flash_attention_impl(_raise_warn=False)
    register_fn = _FLASH_ATTENTION_IMPLS.get(impl)
    if register_fn is None:
        raise ValueError(f"Unknown flash attention impl '{impl}'. Available implementations: "
                         f"{list_flash_attention_impls()}")
    handle = register_fn()
    if handle is not None:
        _active[0] = (impl, handle)


def list_flash_attention_impls():
    """Return the names of all available flash attention implementations."""
    return sorted(_FLASH_ATTENTION_IMPLS)


def current_flash_attention_impl():
    """Return the currently activated flash attention impl name; ``None`` when no custom impl
    has been activated."""
    return None if _active[0] is None else _active[0][0]


def restore_flash_attention_impl(_raise_warn=True):
    """Restore the default implementation (removing the activated one's handle)."""
    if _active[0] is not None:
        _active[0][1].remove()
    elif _raise_warn:
        logger.warning("Trying to restore default FA2 impl when no custom impl was activated")
    _active[0] = None
