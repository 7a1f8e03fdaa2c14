"""Where the product, convolution and attention ops find the active FLOP counter: None unless
an ``ember.utils.flop_counter.FlopCounterMode`` is counting, so that each such op pays one
check and no other op pays anything."""

counter = None
