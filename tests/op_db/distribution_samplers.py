"""The deterministic ops behind ember.distributions' reparameterised samples: the gradient of
a gamma sample with respect to its shape (``_standard_gamma_grad``) and of a Beta/Dirichlet
sample with respect to its concentration (``_dirichlet_grad``). Samples cover every branch of
torch's approximations (small x, large shapes, the rational fits in between)."""
from .common import Arg as A, OpInfo, Sample

OPS = [
    OpInfo("_standard_gamma_grad", lambda lib, alpha, x: lib._standard_gamma_grad(alpha, x), [
        Sample((A((4, 5), 0.05, 20.0, requires_grad=False), A((4, 5), 0.02, 30.0, requires_grad=False)),
               name="wide"),
        Sample((A((6,), 0.1, 3.0, requires_grad=False), A((6,), 0.01, 0.79, requires_grad=False)), name="small_x"),
        Sample((A((6,), 9.0, 40.0, requires_grad=False), A((6,), 10.0, 40.0, requires_grad=False)),
               name="large_alpha"),
        Sample((A((2, 3), values=[[10.0, 10.0, 20.0], [2.0, 5.0, 8.0]], requires_grad=False),
                A((2, 3), values=[[9.5, 10.8, 21.0], [1.0, 4.0, 7.9]], requires_grad=False)), name="near_mean"),
    ], grad=False),
    OpInfo("_dirichlet_grad", lambda lib, x, a, b: lib._dirichlet_grad(x, a, a + b), [
        Sample((A((4, 5), 0.01, 0.99, requires_grad=False), A((4, 5), 0.1, 10.0, requires_grad=False),
                A((4, 5), 0.1, 10.0, requires_grad=False)), name="wide"),
        Sample((A((6,), 0.001, 0.05, requires_grad=False), A((6,), 0.2, 3.0, requires_grad=False),
                A((6,), 0.2, 3.0, requires_grad=False)), name="near_0"),
        Sample((A((6,), 0.95, 0.999, requires_grad=False), A((6,), 0.2, 3.0, requires_grad=False),
                A((6,), 0.2, 3.0, requires_grad=False)), name="near_1"),
        Sample((A((6,), 0.3, 0.7, requires_grad=False), A((6,), 7.0, 30.0, requires_grad=False),
                A((6,), 7.0, 30.0, requires_grad=False)), name="large"),
    ], grad=False, float64_tolerances=(1e-10, 1e-9)),
]
