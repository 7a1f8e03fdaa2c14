"""Learning-rate schedulers (to be filled)."""
