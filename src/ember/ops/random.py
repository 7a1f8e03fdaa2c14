"""Random numbers: ``Generator``, the default generator and seeding, and the samplers (rand,
randn, randint, randperm, normal, bernoulli, multinomial, the ``_like`` forms and the in-place
``uniform_``/``normal_``/``bernoulli_``/``random_``/``exponential_``/``geometric_``/``cauchy_``/
``log_normal_``), and ``poisson``.

Each generator wraps NumPy's PCG64 bit generator. The streams are not torch's (a seed gives
other numbers than in torch), but they follow torch's rules: one seed always gives the same
stream, ``get_state``/``set_state`` save and restore it, and the shapes, dtypes, value ranges
and distributions are torch's. Samples are drawn on the host and moved to ``device``.
"""
import numbers
import os

import numpy as np

from .. import _dtype
from .._backend import to_device_of
from .._backend.meta import MetaArray
from .._device import _default as _default_device, to_device
from .._dtype import get_default_dtype, to_dtype
from ._common import (
    bump_version, check_inplace, grad_state, make, method, namespace_of, record_not_differentiable,
    record_zero_gradient, Tensor, zero_gradient_node,
)
from .creation import _place, _size

__all__ = ["Generator", "default_generator", "manual_seed", "seed", "initial_seed",
           "get_rng_state", "set_rng_state", "rand", "randn", "randint", "randperm", "normal",
           "bernoulli", "multinomial", "poisson", "rand_like", "randn_like", "randint_like"]

_DEFAULT_SEED = 67280421310721  # torch's seed for a new Generator
_STATE_BYTES = 56


class Generator:
    """A pseudo-random number generator (PCG64), the state behind every sampler's
    ``generator=`` argument. ``manual_seed`` makes its stream reproducible; its numbers
    differ from torch's for the same seed."""

    def __init__(self, device="cpu"):
        self._device = to_device(device)
        self.manual_seed(_DEFAULT_SEED)

    @property
    def device(self):
        return self._device

    def manual_seed(self, seed):
        """Sets the seed for generating random numbers; returns the generator."""
        seed = _seed_value(seed)
        self._initial_seed = seed
        self._rng = np.random.Generator(np.random.PCG64(seed))
        return self

    def seed(self):
        """Seeds the generator with a non-deterministic random number; returns that seed."""
        seed = int.from_bytes(os.urandom(8), "little")
        self.manual_seed(seed)
        return seed

    def initial_seed(self):
        """The seed the generator was last seeded with."""
        return self._initial_seed

    def get_state(self):
        """The generator's state as a uint8 tensor (for ``set_state``)."""
        st = self._rng.bit_generator.state
        raw = (st["state"]["state"].to_bytes(16, "little") + st["state"]["inc"].to_bytes(16, "little")
               + st["has_uint32"].to_bytes(8, "little") + st["uinteger"].to_bytes(8, "little")
               + self._initial_seed.to_bytes(8, "little"))
        return make(np.frombuffer(raw, dtype=np.uint8).copy())

    def set_state(self, new_state):
        """Restores a state from ``get_state``; returns the generator."""
        if not isinstance(new_state, Tensor):
            raise TypeError(f"expected a ByteTensor, but got {type(new_state).__name__}")
        if new_state._data.dtype != np.uint8:
            raise TypeError("RNG state must be a ByteTensor")
        raw = bytes(new_state.cpu()._data.reshape(-1))
        if len(raw) != _STATE_BYTES:
            raise RuntimeError(f"Expected a CPUGeneratorImplState of size {_STATE_BYTES} but found the "
                               f"input RNG state size to be {len(raw)}")
        word = lambda lo, hi: int.from_bytes(raw[lo:hi], "little")  # noqa: E731
        bit_gen = np.random.PCG64()
        bit_gen.state = {"bit_generator": "PCG64",
                         "state": {"state": word(0, 16), "inc": word(16, 32)},
                         "has_uint32": word(32, 40), "uinteger": word(40, 48)}
        self._rng = np.random.Generator(bit_gen)
        self._initial_seed = word(48, 56)
        return self

    def __repr__(self):
        return f"<ember.Generator object at {hex(id(self))}>"


def _seed_value(seed):
    if isinstance(seed, Tensor):
        seed = seed.item()
    if not isinstance(seed, numbers.Integral):
        raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
    seed = int(seed)
    if not -(1 << 63) <= seed < (1 << 64):
        raise ValueError("Overflow when unpacking long long")
    return seed % (1 << 64)


default_generator = Generator()
default_generator.seed()


def manual_seed(seed):
    """Sets the seed of the default generator; returns it."""
    return default_generator.manual_seed(seed)


def seed():
    """Seeds the default generator non-deterministically; returns the seed."""
    return default_generator.seed()


def initial_seed():
    """The default generator's initial seed."""
    return default_generator.initial_seed()


def get_rng_state():
    """The default generator's state as a uint8 tensor."""
    return default_generator.get_state()


def set_rng_state(new_state):
    """Restores the default generator's state."""
    default_generator.set_state(new_state)


# ----------------------------------------------------------------------------------------
# Drawing arrays

def _rng(generator):
    return (default_generator if generator is None else generator)._rng


def _type_word(np_dtype):
    from ._common import _type_word as word
    return word(np_dtype)


def _float_dtype(dtype, kernel):
    """The NumPy dtype a float sampler draws (default dtype when None); others are refused."""
    np_dtype = get_default_dtype().np if dtype is None else to_dtype(dtype).np
    if not (np_dtype.kind in "fc" or np_dtype == _dtype.bfloat16.np):
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_type_word(np_dtype)}\'')
    return np_dtype


_MANTISSA_DIGITS = {np.dtype(np.float16): 11, _dtype.bfloat16.np: 8}


def _uniform_array(rng, shape, np_dtype):
    """Uniform samples in [0, 1), exactly representable in ``np_dtype`` (never 1)."""
    np_dtype = np.dtype(np_dtype)
    if np_dtype.kind == "c":
        pair = _uniform_array(rng, tuple(shape) + (2,), np.dtype(np_dtype.char.lower()))
        return pair[..., 0] + 1j * pair[..., 1]
    if np_dtype in (np.float32, np.float64):
        return rng.random(shape, dtype=np_dtype)
    digits = _MANTISSA_DIGITS[np_dtype]
    return (rng.integers(0, 1 << digits, size=shape) * 2.0 ** -digits).astype(np_dtype)


def _normal_array(rng, shape, np_dtype):
    """Standard normal samples (complex: real and imaginary parts of variance 1/2)."""
    np_dtype = np.dtype(np_dtype)
    if np_dtype.kind == "c":
        pair = rng.standard_normal(tuple(shape) + (2,)) * np.sqrt(0.5)
        return (pair[..., 0] + 1j * pair[..., 1]).astype(np_dtype)
    if np_dtype in (np.float32, np.float64):
        return rng.standard_normal(shape, dtype=np_dtype)
    return rng.standard_normal(shape, dtype=np.float32).astype(np_dtype)


def _finish(arr, device, requires_grad):
    if device is None:
        device = _default_device.device
    t = make(_place(arr, device) if device is not None else arr)
    if requires_grad:
        t.requires_grad_(True)
    return t


# ----------------------------------------------------------------------------------------
# Samplers

def rand(*size, generator=None, out=None, dtype=None, layout=None, device=None,
         requires_grad=False, pin_memory=False):
    """A tensor of samples from the uniform distribution on [0, 1)."""
    np_dtype = _float_dtype(dtype, "check_uniform_bounds")
    return _finish(_uniform_array(_rng(generator), _size(size, "rand"), np_dtype), device, requires_grad)


def randn(*size, generator=None, out=None, dtype=None, layout=None, device=None,
          requires_grad=False, pin_memory=False):
    """A tensor of samples from the standard normal distribution."""
    np_dtype = _float_dtype(dtype, "normal_kernel_cpu")
    return _finish(_normal_array(_rng(generator), _size(size, "randn"), np_dtype), device, requires_grad)


def _check_range(low, high):
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")


def _integers(generator, low, high, shape, np_dtype):
    _check_range(low, high)
    return _rng(generator).integers(low, high, size=shape, dtype=np.int64).astype(np_dtype, copy=False)


def randint(low=None, high=None, size=None, *, generator=None, out=None, dtype=None, layout=None,
            device=None, requires_grad=False, pin_memory=False):
    """A tensor of integers drawn uniformly from [low, high): ``randint(high, size)`` or
    ``randint(low, high, size)``; int64 unless ``dtype`` says otherwise."""
    if size is None and high is not None:
        low, high, size = 0, low, high
    if low is None:
        low = 0
    if high is None or size is None:
        raise TypeError("randint() missing required arguments: expected (high, size) or "
                        "(low, high, size)")
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"randint(): argument 'size' (position 2) must be tuple of ints, not "
                        f"{type(size).__name__}")
    np_dtype = np.dtype(np.int64) if dtype is None else to_dtype(dtype).np
    arr = _integers(generator, int(low), int(high), _size((size,), "randint"), np_dtype)
    return _finish(arr, device, requires_grad)


def randperm(n, *, generator=None, out=None, dtype=None, layout=None, device=None,
             requires_grad=False, pin_memory=False):
    """A random permutation of the integers 0 .. n-1 (int64 unless ``dtype`` says otherwise)."""
    n = int(n)
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    np_dtype = np.dtype(np.int64) if dtype is None else to_dtype(dtype).np
    return _finish(_rng(generator).permutation(n).astype(np_dtype), device, requires_grad)


def rand_like(input, *, generator=None, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None):
    """``rand`` with ``input``'s size (and, unless given, dtype and device)."""
    return rand(input._data.shape, generator=generator, dtype=dtype or input.dtype,
                device=device or input.device, requires_grad=requires_grad)


def randn_like(input, *, generator=None, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=None):
    """``randn`` with ``input``'s size (and, unless given, dtype and device)."""
    return randn(input._data.shape, generator=generator, dtype=dtype or input.dtype,
                 device=device or input.device, requires_grad=requires_grad)


def randint_like(input, low=0, high=None, *, generator=None, dtype=None, layout=None, device=None,
                 requires_grad=False, memory_format=None):
    """``randint`` with ``input``'s size: ``randint_like(input, high)`` or
    ``randint_like(input, low, high)``; dtype and device default to ``input``'s."""
    if high is None:
        low, high = 0, low
    return randint(low, high, input._data.shape, generator=generator, dtype=dtype or input.dtype,
                   device=device or input.device, requires_grad=requires_grad)


# -- normal ---------------------------------------------------------------------------------

NormalBackward1 = zero_gradient_node("NormalBackward1")
NormalBackward2 = zero_gradient_node("NormalBackward2")
NormalBackward3 = zero_gradient_node("NormalBackward3")
BernoulliBackward0 = zero_gradient_node("BernoulliBackward0")
UniformBackward0 = zero_gradient_node("UniformBackward0")
NormalBackward0 = zero_gradient_node("NormalBackward0")
RandomBackward0 = zero_gradient_node("RandomBackward0")
ExponentialBackward0 = zero_gradient_node("ExponentialBackward0")
GeometricBackward0 = zero_gradient_node("GeometricBackward0")
CauchyBackward0 = zero_gradient_node("CauchyBackward0")
LogNormalBackward0 = zero_gradient_node("LogNormalBackward0")
PoissonBackward0 = zero_gradient_node("PoissonBackward0")


def _check_std(std):
    if isinstance(std, Tensor):
        if bool((std._data < 0).any()):
            raise RuntimeError("normal expects all elements of std >= 0.0")
    elif std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")


def normal(mean, std=1.0, size=None, *, generator=None, out=None, dtype=None, layout=None,
           device=None, pin_memory=False, requires_grad=False):
    """Samples from normal distributions: ``normal(mean, std)`` with a tensor mean and/or std
    (elementwise, broadcast), or ``normal(mean, std, size)`` with numbers."""
    mean_t, std_t = isinstance(mean, Tensor), isinstance(std, Tensor)
    if not (mean_t or std_t):
        if size is None:
            raise TypeError("normal() received an invalid combination of arguments - got (float, "
                            "float): a size is needed when mean and std are numbers")
        _check_std(std)
        np_dtype = _float_dtype(dtype, "normal_kernel_cpu")
        arr = _normal_array(_rng(generator), _size((size,), "normal"), np_dtype)
        return _finish(arr * np_dtype.type(std) + np_dtype.type(mean), device, requires_grad)
    ref = mean if mean_t else std
    np_dtype = ref._data.dtype
    if not (np_dtype.kind == "f" or np_dtype == _dtype.bfloat16.np):
        raise NotImplementedError(f'"normal_kernel_cpu" not implemented for \'{_type_word(np_dtype)}\'')
    _check_std(std)
    m = mean._data if mean_t else mean
    s = std._data if std_t else std
    shape = ref._data.shape
    if mean_t and std_t and mean._data.shape != std._data.shape:
        from .pointwise import _broadcast_check
        _broadcast_check("normal", mean, std)
        shape = np.broadcast_shapes(mean._data.shape, std._data.shape)
    noise = to_device_of(_normal_array(_rng(generator), shape, np_dtype), ref._data)
    out = make((noise * s + m).astype(np_dtype, copy=False))
    node_cls = NormalBackward3 if mean_t and std_t else (NormalBackward1 if mean_t else NormalBackward2)
    return record_zero_gradient(node_cls, tuple(t for t in (mean, std) if isinstance(t, Tensor)), out)


# -- bernoulli, multinomial -------------------------------------------------------------------

def _check_float_input(input, kernel):
    dt = input._data.dtype
    if not (dt.kind == "f" or dt == _dtype.bfloat16.np):
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_type_word(dt)}\'')


def _check_p(p):
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")


@method()
def bernoulli(input, p=None, *, generator=None, out=None):
    """Draws 0 or 1 for each element: 1 with probability ``input`` (or ``p`` when given)."""
    _check_float_input(input, "bernoulli_tensor_cpu_p_")
    data = input._data
    u = to_device_of(_uniform_array(_rng(generator), data.shape, np.float64), data)
    if p is None:
        if data.size and not bool(((data >= 0) & (data <= 1)).all()):
            raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this "
                               "error message be improved?  If so, please report an enhancement request "
                               "to PyTorch.)")
        result = make((u < data).astype(data.dtype))
        return record_zero_gradient(BernoulliBackward0, (input,), result)
    _check_p(p)
    result = make((u < p).astype(data.dtype))
    return record_not_differentiable((input,), result, "the derivative for 'bernoulli.p' is not implemented.")


@method()
def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    """Indices drawn from the categorical distribution in each row of ``input`` (non-negative
    weights, not necessarily normalised); without replacement each index appears once."""
    dt = input._data.dtype
    if not (dt.kind == "f" or dt == _dtype.bfloat16.np):
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{_type_word(dt)}")
    if input._data.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    probs = input.cpu()._data.astype(np.float64).reshape(-1, input._data.shape[-1])
    if not replacement and num_samples > probs.shape[1]:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    if not np.isfinite(probs).all() or (probs < 0).any():
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if (probs.sum(1) <= 0).any():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    rng = _rng(generator)
    draw = _with_replacement if replacement else _without_replacement
    idx = draw(rng, probs, num_samples)
    if input._data.ndim == 1:
        idx = idx[0]
    return make(_place(idx, input.device))


def _with_replacement(rng, probs, n):
    """Inverse-CDF sampling for all rows in one search: row r's CDF is shifted by r."""
    rows, cats = probs.shape
    cdf = np.cumsum(probs, axis=1)
    cdf /= cdf[:, -1:]
    cdf[:, -1] = 1.0
    offsets = np.arange(rows)[:, None]
    flat = (cdf + offsets).ravel()
    u = rng.random((rows, n)) + offsets
    idx = np.searchsorted(flat, u, side="right") - offsets * cats
    return np.minimum(idx, cats - 1).astype(np.int64)


def _without_replacement(rng, probs, n):
    """The n smallest of Exp(1)/p (the exponential race): draws without replacement in order."""
    with np.errstate(divide="ignore"):
        keys = rng.standard_exponential(probs.shape) / probs
    return np.argsort(keys, axis=1, kind="stable")[:, :n].astype(np.int64)


# ----------------------------------------------------------------------------------------
# In-place samplers (used by nn.init)

def _fill_(self, sample, node_cls):
    """Write ``sample`` into ``self``; a non-leaf that requires grad gets a zero-gradient node."""
    check_inplace(self)
    namespace_of(self._data).copyto(self._data, to_device_of(np.asarray(sample), self._data),
                                    casting="unsafe")
    bump_version(self)
    if self._requires_grad and grad_state.grad_enabled:
        record_zero_gradient(node_cls, (self,), self)
    return self


def _draw_shape(self):
    """The shape of the samples an in-place fill draws: ``self``'s, or none (one draw, to
    broadcast) for a meta tensor, which has no values to fill."""
    return () if self._data.__class__ is MetaArray else self._data.shape


def _check_float_self(self, kernel):
    _check_float_input(self, kernel)
    return self._data.dtype


def uniform_(self, from_=0, to=1, *, generator=None, **kwargs):
    """Fills ``self`` with samples from the uniform distribution on [from, to)."""
    from_ = kwargs.pop("from", from_)
    np_dtype = _check_float_self(self, "check_uniform_bounds")
    if from_ > to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={from_:g} > "
                           f"to={to:g}")
    u = _uniform_array(_rng(generator), _draw_shape(self), np.float64)
    return _fill_(self, (u * (to - from_) + from_).astype(np_dtype), UniformBackward0)


def normal_(self, mean=0, std=1, *, generator=None):
    """Fills ``self`` with samples from the normal distribution N(mean, std**2)."""
    np_dtype = _check_float_self(self, "normal_kernel_cpu")
    _check_std(std)
    z = _normal_array(_rng(generator), _draw_shape(self), np_dtype)
    return _fill_(self, z * np_dtype.type(std) + np_dtype.type(mean), NormalBackward0)


def bernoulli_(self, p=0.5, *, generator=None):
    """Fills ``self`` with 0/1 draws that are 1 with probability ``p`` (a number or tensor)."""
    u = _uniform_array(_rng(generator), _draw_shape(self), np.float64)
    if isinstance(p, Tensor):
        p = p.cpu()._data
    else:
        _check_p(p)
    return _fill_(self, u < p, BernoulliBackward0)


def random_(self, from_=0, to=None, *, generator=None, **kwargs):
    """Fills ``self`` with integers drawn uniformly from [from, to); ``random_(to)`` means
    [0, to), and no bound means the dtype's range of exactly representable integers."""
    from_ = kwargs.pop("from", from_)
    if to is None and from_ != 0:
        from_, to = 0, from_
    if to is None:
        to = _random_upper_bound(self._data.dtype)
    _check_random_bounds(self, int(from_), int(to))
    arr = _integers(generator, int(from_), int(to), _draw_shape(self), self._data.dtype)
    return _fill_(self, arr, RandomBackward0)


def _check_random_bounds(self, low, high):
    """torch's refusal of a range that the integer dtype of ``self`` cannot hold."""
    np_dtype = self._data.dtype
    if np_dtype.kind not in "iub" or low >= high:
        return
    from .linalg import _cpp
    lo, hi = (0, 1) if np_dtype.kind == "b" else (np.iinfo(np_dtype).min, np.iinfo(np_dtype).max)
    if not lo <= low <= hi:
        raise RuntimeError(f"from is out of bounds for {_cpp(self)}")
    if not lo <= high - 1 <= hi:
        raise RuntimeError(f"to - 1 is out of bounds for {_cpp(self)}")


def _random_upper_bound(np_dtype):
    if np_dtype.kind == "b":
        return 2
    if np_dtype.kind in "iu":
        return int(np.iinfo(np_dtype).max) + 1 if np_dtype.itemsize < 8 else (1 << 63) - 1
    return (1 << _MANTISSA_DIGITS.get(np.dtype(np_dtype), np.finfo(np_dtype).nmant + 1)) + 1


def exponential_(self, lambd=1.0, *, generator=None):
    """Fills ``self`` with samples from the exponential distribution of rate ``lambd``."""
    _check_continuous(self, "Exponential", _type_word(self._data.dtype))
    np_dtype = self._data.dtype
    if lambd <= 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd:g}")
    e = _rng(generator).standard_exponential(_draw_shape(self)) / lambd
    return _fill_(self, e.astype(np_dtype), ExponentialBackward0)


def _check_continuous(self, distribution, type_name=None):
    """torch's refusal to fill an integer or bool tensor from a continuous distribution."""
    dt = self._data.dtype
    if not (dt.kind in "fc" or dt == _dtype.bfloat16.np):
        from .linalg import _cpp
        name = type_name or _cpp(self)
        raise RuntimeError(f"{distribution} distribution is a continuous probability distribution. "
                           f"dtype must be a floating point but you specified {name}")


def geometric_(self, p, *, generator=None):
    """Fills ``self`` with samples from the geometric distribution: the number of Bernoulli(p)
    trials up to and including the first success (1, 2, ...)."""
    if self._data.dtype.kind == "b":
        raise NotImplementedError("\"geometric_cpu\" not implemented for 'Bool'")
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p:g}")
    return _fill_(self, _rng(generator).geometric(p, _draw_shape(self)), GeometricBackward0)


def cauchy_(self, median=0, sigma=1, *, generator=None):
    """Fills ``self`` with samples from the Cauchy distribution of location ``median`` and
    scale ``sigma``."""
    _check_continuous(self, "Cauchy")
    if sigma <= 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma:g}")
    c = _rng(generator).standard_cauchy(_draw_shape(self)) * sigma + median
    return _fill_(self, c, CauchyBackward0)


def log_normal_(self, mean=1, std=2, *, generator=None):
    """Fills ``self`` with samples whose logarithm is N(mean, std**2)."""
    _check_float_self(self, "log_normal_cpu")
    if std <= 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std:g}")
    z = _rng(generator).standard_normal(_draw_shape(self))
    return _fill_(self, np.exp(z * std + mean), LogNormalBackward0)


def poisson(input, generator=None):
    """Samples from the Poisson distribution whose rate is each element of ``input``, in
    ``input``'s dtype."""
    _check_float_input(input, "poisson_cpu")
    rates = input.cpu()._data
    if rates.size and not bool((rates >= 0).all()):
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    counts = _rng(generator).poisson(rates.astype(np.float64)).astype(rates.dtype)
    return record_zero_gradient(PoissonBackward0, (input,), make(_place(counts, input.device)))


for _fn in (uniform_, normal_, bernoulli_, random_, exponential_, geometric_, cauchy_,
            log_normal_):
    method(_fn.__name__)(_fn)
