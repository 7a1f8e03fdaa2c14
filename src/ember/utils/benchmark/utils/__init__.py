"""The modules of ``ember.utils.benchmark``: ``common`` (Measurement and formatting helpers),
``timer`` (Timer) and ``compare`` (Compare)."""
