"""``assert_close``: torch's comparison of tensors, tensor-likes, numbers and (nested)
sequences and mappings of them, with torch's default tolerances and messages."""
import cmath
import collections.abc
import contextlib
import warnings

import numpy as np

from .. import _dtype
from .._tensor import Tensor

# {dtype: (rtol, atol)}
_DTYPE_PRECISIONS = {
    _dtype.float16: (0.001, 1e-5),
    _dtype.bfloat16: (0.016, 1e-5),
    _dtype.float32: (1.3e-6, 1e-5),
    _dtype.float64: (1e-7, 1e-7),
    _dtype.complex64: (1.3e-6, 1e-5),
    _dtype.complex128: (1e-7, 1e-7),
}
_TYPE_TO_DTYPE = {int: _dtype.int64, float: _dtype.float64, complex: _dtype.complex128}


class _Failure(Exception):
    """A comparison's failure: the exception type to raise, its message and the item path."""

    def __init__(self, type, msg, id=()):
        super().__init__(msg)
        self.type, self.msg, self.id = type, msg, id

    def to_error(self, msg=None):
        if not isinstance(msg, str):
            generated = self.msg
            if self.id:
                generated += f"\n\nThe failure occurred for item {''.join(str([i]) for i in self.id)}"
            msg = msg(generated) if callable(msg) else generated
        return self.type(msg)


class _Unsupported(Exception):
    pass


def _tolerances(dtypes, rtol, atol, id, precisions=_DTYPE_PRECISIONS):
    if (rtol is None) ^ (atol is None):
        raise _Failure(ValueError, "Both 'rtol' and 'atol' must be either specified or omitted, "
                                   f"but got no {'rtol' if rtol is None else 'atol'}.", id)
    if rtol is not None:
        return rtol, atol
    rtols, atols = zip(*[precisions.get(d, (0.0, 0.0)) for d in dtypes])
    return max(rtols), max(atols)


def _mismatch_msg(identifier, extra, abs_diff, abs_idx, atol, rel_diff, rel_idx, rtol):
    equality = rtol == 0 and atol == 0

    def diff_msg(kind, diff, idx, tol):
        msg = (f"{kind.title()} difference: {diff}" if idx is None
               else f"Greatest {kind} difference: {diff} at index {idx}")
        return msg + ("" if equality else f" (up to {tol} allowed)") + "\n"

    msg = f"{identifier} are not {'equal' if equality else 'close'}!\n\n"
    if extra:
        msg += f"{extra.strip()}\n"
    msg += diff_msg("absolute", abs_diff, abs_idx, atol)
    msg += diff_msg("relative", rel_diff, rel_idx, rtol)
    return msg.strip()


def _scalar_msg(actual, expected, rtol, atol):
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _mismatch_msg("Scalars", f"Expected {expected} but got {actual}.", abs_diff, None, atol,
                         rel_diff, None, rtol)


def _tensor_msg(actual, expected, matches, rtol, atol):
    import ember
    shape = tuple(matches.shape)

    def unravel(flat):
        return tuple(int(i) for i in np.unravel_index(flat, shape)) if shape else ()

    n = matches.numel()
    mismatches = n - int(matches.sum())
    extra = f"Mismatched elements: {mismatches} / {n} ({mismatches / n:.1%})"
    a, e, m = actual.flatten(), expected.flatten(), matches.flatten()
    if not actual.dtype.is_floating_point and not actual.dtype.is_complex:
        a, e = a.to(ember.int64), e.to(ember.int64)
    abs_diff = ember.abs(a - e)
    abs_diff[m] = 0
    max_abs, abs_at = ember.max(abs_diff, 0)
    rel_diff = abs_diff / ember.abs(e)
    rel_diff[m] = 0
    max_rel, rel_at = ember.max(rel_diff, 0)
    return _mismatch_msg("Tensor-likes", extra, max_abs.item(), unravel(int(abs_at)), atol,
                         max_rel.item(), unravel(int(rel_at)), rtol)


def _none_pair(actual, expected, id, **options):
    if not (actual is None or expected is None):
        raise _Unsupported
    if not (actual is None and expected is None):
        raise _Failure(AssertionError, f"None mismatch: {actual} is not {expected}", id)


def _bool_pair(actual, expected, id, **options):
    if not all(isinstance(x, (bool, np.bool_)) for x in (actual, expected)):
        raise _Unsupported
    actual, expected = bool(actual), bool(expected)
    return lambda: None if actual is expected else _fail(
        AssertionError, f"Booleans mismatch: {actual} is not {expected}", id)


def _fail(type, msg, id):
    raise _Failure(type, msg, id)


def _number_pair(actual, expected, id, rtol, atol, equal_nan, check_dtype, **options):
    kinds = (int, float, complex, np.number)
    if not all(isinstance(x, kinds) for x in (actual, expected)):
        raise _Unsupported
    actual, expected = (x.item() if isinstance(x, np.number) else x for x in (actual, expected))
    rtol, atol = _tolerances([_TYPE_TO_DTYPE[type(x)] for x in (actual, expected)], rtol, atol, id)

    def compare():
        if check_dtype and type(actual) is not type(expected):
            _fail(AssertionError, f"The (d)types do not match: {type(actual)} != {type(expected)}.", id)
        if actual == expected:
            return
        if equal_nan and cmath.isnan(actual) and cmath.isnan(expected):
            return
        abs_diff = abs(actual - expected)
        if cmath.isfinite(abs_diff) and abs_diff <= atol + rtol * abs(expected):
            return
        _fail(AssertionError, _scalar_msg(actual, expected, rtol, atol), id)
    return compare


def _tensor_pair(actual, expected, id, allow_subclasses, rtol, atol, equal_nan, check_device,
                 check_dtype, check_layout, check_stride, **options):
    import ember
    if not (isinstance(actual, type(expected)) or isinstance(expected, type(actual))):
        raise _Unsupported
    if not allow_subclasses and type(actual) is not type(expected):
        raise _Unsupported
    try:
        actual, expected = (x if isinstance(x, Tensor) else ember.as_tensor(x)
                            for x in (actual, expected))
    except Exception:
        raise _Unsupported from None
    rtol, atol = _tolerances([actual.dtype, expected.dtype], rtol, atol, id)

    def mismatch(name, a, e):
        _fail(AssertionError, f"The values for attribute '{name}' do not match: {a} != {e}.", id)

    def compare():
        a, e = actual, expected
        if a.shape != e.shape:
            mismatch("shape", a.shape, e.shape)
        if a.layout != e.layout:
            if check_layout:
                mismatch("layout", a.layout, e.layout)
        elif check_stride and a.stride() != e.stride():
            mismatch("stride()", a.stride(), e.stride())
        if check_device and a.device != e.device:
            mismatch("device", a.device, e.device)
        if check_dtype and a.dtype != e.dtype:
            mismatch("dtype", a.dtype, e.dtype)
        a, e = a.detach(), e.detach()
        if a.device != e.device:
            a, e = a.cpu(), e.cpu()
        if a.dtype != e.dtype:
            dtype = ember.promote_types(a.dtype, e.dtype)
            a, e = a.to(dtype), e.to(dtype)
        matches = ember.isclose(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan)
        if bool(matches.all()):
            return
        if a.shape == ():
            msg = _scalar_msg(a.item(), e.item(), rtol, atol)
        else:
            msg = _tensor_msg(a, e, matches, rtol, atol)
        _fail(AssertionError, msg, id)
    return compare


_PAIRS = (_none_pair, _bool_pair, _number_pair, _tensor_pair)


def _originate(actual, expected, id, options):
    """The comparisons of ``actual`` and ``expected``, recursing through sequences and
    mappings; raises a _Failure for structures that do not match or inputs no pair takes."""
    seq = collections.abc.Sequence
    if isinstance(actual, seq) and not isinstance(actual, str) and isinstance(expected, seq) \
            and not isinstance(expected, str):
        if len(actual) != len(expected):
            raise _Failure(AssertionError, "The length of the sequences mismatch: "
                                           f"{len(actual)} != {len(expected)}", id)
        return [c for i in range(len(actual))
                for c in _originate(actual[i], expected[i], (*id, i), options)]
    mapping = collections.abc.Mapping
    if isinstance(actual, mapping) and isinstance(expected, mapping):
        ak, ek = set(actual.keys()), set(expected.keys())
        if ak != ek:
            raise _Failure(AssertionError, (
                "The keys of the mappings do not match:\n"
                f"Missing keys in the actual mapping: {sorted(ek - ak)}\n"
                f"Additional keys in the actual mapping: {sorted(ak - ek)}"), id)
        keys = ak
        with contextlib.suppress(Exception):
            keys = sorted(keys)
        return [c for k in keys for c in _originate(actual[k], expected[k], (*id, k), options)]
    for pair in _PAIRS:
        try:
            compare = pair(actual, expected, id, **options)
        except _Unsupported:
            continue
        return [compare] if compare is not None else []
    raise _Failure(TypeError, "No comparison pair was able to handle inputs of type "
                              f"{type(actual)} and {type(expected)}.", id)


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None,
                 equal_nan=False, check_device=True, check_dtype=True, check_layout=True,
                 check_stride=False, msg=None):
    r"""Asserts that ``actual`` and ``expected`` are close.

    If ``actual`` and ``expected`` are strided, non-quantized, real-valued, and finite, they
    are considered close if ``|actual - expected| <= atol + rtol * |expected|``, and they have
    the same device (if ``check_device``), dtype (if ``check_dtype``), layout (if
    ``check_layout``) and stride (if ``check_stride``). Non-finite values are only considered
    close if they are equal; NaNs only if ``equal_nan`` is True. ``actual`` and ``expected``
    can be tensors, tensor-likes (from which ``ember.as_tensor`` builds a tensor), Python
    scalars, or sequences and mappings of them, compared element by element. Without
    ``rtol``/``atol``, the tolerances of the inputs' dtypes apply (float16: 1e-3/1e-5,
    bfloat16: 1.6e-2/1e-5, float32 and complex64: 1.3e-6/1e-5, float64 and complex128:
    1e-7/1e-7, others 0/0). ``msg`` replaces the message, or, callable, edits it.

    Raises:
        AssertionError: with torch's message when the inputs are not close.
        ValueError: if only ``rtol`` or ``atol`` is specified.
        TypeError: if no comparison handles the inputs' types."""
    __tracebackhide__ = True
    options = dict(allow_subclasses=allow_subclasses, rtol=rtol, atol=atol, equal_nan=equal_nan,
                   check_device=check_device, check_dtype=check_dtype,
                   check_layout=check_layout, check_stride=check_stride)
    try:
        for compare in _originate(actual, expected, (), options):
            compare()
    except _Failure as failure:
        raise failure.to_error(msg) from None


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=""):
    """Deprecated since torch 1.12: use ``assert_close`` instead."""
    import ember
    warnings.warn("`ember.testing.assert_allclose()` is deprecated since 1.12 and will be removed in "
                  "a future release. Please use `ember.testing.assert_close()` instead.",
                  FutureWarning, stacklevel=2)
    if not isinstance(actual, Tensor):
        actual = ember.tensor(actual)
    if not isinstance(expected, Tensor):
        expected = ember.tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        rtol, atol = _tolerances([actual.dtype, expected.dtype], None, None, (), {
            _dtype.float16: (1e-3, 1e-3), _dtype.float32: (1e-4, 1e-5),
            _dtype.float64: (1e-5, 1e-8)})
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=True,
                 check_dtype=False, check_stride=False, msg=msg or None)
