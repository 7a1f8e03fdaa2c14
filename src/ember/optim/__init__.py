"""``ember.optim``: optimizers (to be filled)."""
