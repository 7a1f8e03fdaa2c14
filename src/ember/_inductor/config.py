"""``ember._inductor.config``: settings of ember.compile's generated kernels.

``cc``: the C compiler (None: ``$CC``, else ``gcc``). ``fuse``: whether the default backend
generates kernels at all. ``parallel_min_elements``: below this many elements a kernel runs on
one thread (OpenMP's start-up costs more than it saves). ``aot_backward``: whether the default
backend builds an ahead-of-time backward for graphs captured for training (its forward and
backward graphs fused, the backward calling eager's array kernels node by node) rather than
replaying with eager autograd; on by default. Both can also be given per compiled function:
``ember.compile(model, options={"aot_backward": False})``."""
cc = None
fuse = True
parallel_min_elements = 32768
aot_backward = True
