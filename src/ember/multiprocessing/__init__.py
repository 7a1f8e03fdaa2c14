"""``ember.multiprocessing`` (to be filled)."""
