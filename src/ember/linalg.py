"""``ember.linalg``: linear algebra with gradients (to be filled)."""
