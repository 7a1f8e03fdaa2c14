"""Forward mode through complex-valued ops (view_as_real/view_as_complex, conj, angle, complex,
polar, the FFTs, linalg.eig/eigvals, abs, and holomorphic functions of complex tensors) against torch's tangents on
random inputs."""
import numpy as np
import pytest
import torch
import torch.autograd.forward_ad as tfw

import ember
import ember.autograd.forward_ad as efw

_rng = np.random.default_rng(21)
_Z = _rng.standard_normal((3, 4)) + 1j * _rng.standard_normal((3, 4))
_ZT = _rng.standard_normal((3, 4)) + 1j * _rng.standard_normal((3, 4))
_X = _rng.standard_normal((3, 4))
_XT = _rng.standard_normal((3, 4))
_Y = _rng.uniform(0.5, 2, (3, 4))
_YT = _rng.standard_normal((3, 4))

# name -> (function of (lib, *duals), [(primal, tangent) per input])
CASES = {
    "view_as_real": (lambda lib, z: lib.view_as_real(z) * 2, [(_Z, _ZT)]),
    "view_as_complex": (lambda lib, x: lib.view_as_complex(x.reshape(3, 2, 2)) * 1, [(_X, _XT)]),
    "conj": (lambda lib, z: z.conj() * z, [(_Z, _ZT)]),
    "conj_physical": (lambda lib, z: lib.conj_physical(z) + 1, [(_Z, _ZT)]),
    "angle_complex": (lambda lib, z: lib.angle(z), [(_Z, _ZT)]),
    "angle_real": (lambda lib, x: lib.angle(x) + x, [(_X, _XT)]),
    "complex": (lambda lib, a, b: lib.complex(a, b[:1]), [(_X, _XT), (_Y, _YT)]),
    "polar": (lambda lib, a, t: lib.polar(a, t), [(_Y, _YT), (_X, _XT)]),
    "abs_of_polar": (lambda lib, a, t: lib.polar(a, t).abs() + lib.angle(lib.polar(a, t)), [(_Y, _YT), (_X, _XT)]),
    "abs": (lambda lib, z: z.abs(), [(_Z, _ZT)]),
    "angle_of_polar": (lambda lib, a, t: lib.angle(lib.polar(a, t)), [(_Y, _YT), (_X, _XT)]),
    "holomorphic": (lambda lib, z: (z.exp() * z.sin() / z + z.sqrt() * z.log() + z ** 3 + z.tanh()
                                    + z.sigmoid()) @ z.conj().T, [(_Z, _ZT)]),
    "real_parts": (lambda lib, z: z.real * z.imag + z.abs() ** 2, [(_Z, _ZT)]),
    "eig_values": (lambda lib, a: lib.linalg.eig(a).eigenvalues, [(_X[:3, :3], _XT[:3, :3])]),
    "eig_vectors": (lambda lib, a: lib.linalg.eig(a).eigenvectors, [(_X[:3, :3], _XT[:3, :3])]),
    "eig_complex": (lambda lib, z: lib.linalg.eig(z).eigenvectors * lib.linalg.eig(z).eigenvalues,
                    [(_Z[:3, :3], _ZT[:3, :3])]),
    "eigvals": (lambda lib, a: lib.linalg.eigvals(a), [(_X[:3, :3], _XT[:3, :3])]),
    "fft": (lambda lib, z: lib.fft.fft(z, norm="ortho"), [(_Z, _ZT)]),
    "ifftn": (lambda lib, z: lib.fft.ifftn(z), [(_Z, _ZT)]),
    "rfft": (lambda lib, x: lib.fft.rfft(x), [(_X, _XT)]),
    "hfft": (lambda lib, z: lib.fft.hfft(z, n=5), [(_Z, _ZT)]),
    "irfft": (lambda lib, z: lib.fft.irfft(z, n=6, norm="forward"), [(_Z, _ZT)]),
    "rfft2_irfft2": (lambda lib, x: lib.fft.irfft2(lib.fft.rfft2(x) * 2, s=(3, 4)), [(_X, _XT)]),
    "fft_of_real": (lambda lib, x: lib.fft.fft(x), [(_X, _XT)]),
}


def _tangent(lib, fw, fn, inputs):
    with fw.dual_level():
        duals = [fw.make_dual(lib.tensor(p), lib.tensor(t)) for p, t in inputs]
        out = fn(lib, *duals)
        primal, tangent = fw.unpack_dual(out)
        tangent = np.zeros(tuple(out.shape)) if tangent is None else tangent.detach().numpy()
        return primal.detach().numpy(), tangent


@pytest.mark.parametrize("name", sorted(CASES))
def test_complex_tangents_against_torch(name):
    fn, inputs = CASES[name]
    ep, et = _tangent(ember, efw, fn, inputs)
    tp, tt = _tangent(torch, tfw, fn, inputs)
    np.testing.assert_allclose(ep, tp, atol=1e-12, rtol=1e-10)
    np.testing.assert_allclose(et, tt, atol=1e-10, rtol=1e-8)
