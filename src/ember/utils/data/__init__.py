"""``ember.utils.data`` (to be filled)."""
