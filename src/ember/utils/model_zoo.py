"""``ember.utils.model_zoo``: ``load_url``, the name torch keeps for
:func:`ember.hub.load_state_dict_from_url`."""
from ..hub import load_state_dict_from_url as load_url  # noqa: F401
