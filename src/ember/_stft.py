"""``stft`` and ``istft``: the short-time Fourier transform and its inverse, composed as torch
composes them (framing as a strided view, a window, one transform per frame; the inverse by
overlap-add divided by the summed squared window), from differentiable ember ops."""
import warnings

from . import _dtype
from .fft._spectral import BY_N, BY_ROOT_N, NONE, fft_c2c, fft_c2r, fft_r2c
from .nn.functional.padding import _constant_pad, pad
from .ops._common import Tensor, make, method, namespace_of
from .ops.complex import view_as_real
from .ops.creation import ones, zeros
from .ops.index import index_add

__all__ = ["stft", "istft"]


def _describe(t):
    kind = "Tensor"
    if isinstance(t, Tensor):
        kind = f"ember.{t.dtype._cpp_name}Tensor{list(t.shape)}"
    return kind


def _stft_error(input, n_fft, hop_length, win_length, window, normalized, onesided,
                return_complex, align_to_window, what):
    window_text = "None" if window is None else f"ember.{window.dtype._cpp_name}Tensor{{{list(window.shape)}}}"
    return RuntimeError(
        f"stft({_describe(input)}, n_fft={n_fft}, hop_length={hop_length}, win_length={win_length}, "
        f"window={window_text}, normalized={int(normalized)}, onesided={_opt(onesided)}, "
        f"return_complex={_opt(return_complex)}, align_to_window={_opt(align_to_window)}) : {what}")


def _opt(flag):
    return "None" if flag is None else int(flag)


def _centered_window(window, n_fft, win_length, like):
    """The window as ``n_fft`` points: ``win_length`` ones when none is given, zero-padded
    equally on both sides when shorter."""
    if window is None:
        if win_length == n_fft:
            return None
        window = ones(win_length, dtype=like.dtype, device=like.device)
    if win_length < n_fft:
        left = (n_fft - win_length) // 2
        window = _constant_pad(window, [left, n_fft - win_length - left], 0)
    return window


@method()
def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
         pad_mode="reflect", normalized=False, onesided=None, return_complex=None,
         align_to_window=None):
    """The short-time Fourier transform of ``input`` (a signal, or a batch of them as rows):
    frames of ``n_fft`` points every ``hop_length`` (n_fft // 4), each multiplied by
    ``window`` (``win_length`` points, centred; a rectangular one by default) and transformed.
    The result has shape (batch?, frequencies, frames): n_fft // 2 + 1 frequencies for a real
    signal and window (``onesided``), else n_fft. ``center`` pads the signal by n_fft // 2 on
    both sides with ``pad_mode`` first, so that frame t is centred on sample t * hop_length;
    ``normalized`` scales by 1/sqrt(n_fft). ``return_complex`` must be given for real inputs;
    False (deprecated) returns the real and imaginary parts in a last dimension of size 2."""
    if not isinstance(input, Tensor):
        raise TypeError(f"stft(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if center and align_to_window is not None:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    if window is None:
        warnings.warn("A window was not provided. A rectangular window will be applied,which is known "
                      "to cause spectral leakage. Other windows such as ember.hann_window or "
                      "ember.hamming_window are recommended to reduce spectral leakage.To suppress this "
                      "warning and use a rectangular window, explicitly set `window=ember.ones(n_fft, "
                      "device=<device>)`.", UserWarning, stacklevel=2)
    ndim = input._data.ndim
    if center and ndim in (1, 2, 3):   # (a 3-D input is refused below, after its padding)
        padded = pad(input.reshape((1,) * (3 - ndim) + tuple(input.shape)),
                     [n_fft // 2, n_fft // 2], pad_mode)
        input = padded.reshape(padded.shape[3 - ndim:])
    hop_length = n_fft >> 2 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    args = (n_fft, hop_length, win_length, window, normalized, onesided, return_complex, align_to_window)
    _check_return_complex(input, window, return_complex)
    if return_complex is None:
        return_complex = True   # a complex input or window
    data = input._data
    if not (data.dtype.kind in "fc" or data.dtype == _dtype.bfloat16.np):
        raise _stft_error(input, *args, "expected a tensor of floating point or complex values")
    if ndim not in (1, 2):
        raise _stft_error(input, *args, "expected a 1D or 2D tensor")
    frames_of = input.unsqueeze(0) if ndim == 1 else input
    if align_to_window and win_length < n_fft:
        left = (n_fft - win_length) // 2
        frames_of = _constant_pad(frames_of, [left, n_fft - win_length - left], 0)
    length = frames_of._data.shape[1]
    if n_fft <= 0 or n_fft > length:
        raise _stft_error(input, *args, f"expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    if hop_length <= 0:
        raise _stft_error(input, *args, f"expected hop_length > 0, but got hop_length={hop_length}")
    if win_length <= 0 or win_length > n_fft:
        raise _stft_error(input, *args, f"expected 0 < win_length <= n_fft, but got win_length={win_length}")
    if window is not None and (window.ndim != 1 or window.shape[0] != win_length):
        raise _stft_error(input, *args, f"expected a 1D window tensor of size equal to win_length="
                                        f"{win_length}, but got window with size {list(window.shape)}")
    if data.dtype.char not in "fdFD":   # half precision: torch's CPU transform has no kernel
        raise RuntimeError(f"MKL FFT doesn't support tensors of type: {input.dtype._cpp_name}")
    frames = frames_of.unfold(1, n_fft, hop_length)      # (batch, frames, n_fft), a view
    window = _centered_window(window, n_fft, win_length, frames_of)
    if window is not None:
        frames = frames * window
    complex_fft = frames.is_complex()
    onesided = (not complex_fft) if onesided is None else onesided
    norm = BY_ROOT_N if normalized else NONE
    if complex_fft:
        if onesided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        out = fft_c2c(frames, (2,), norm, True)
    else:
        out = fft_r2c(frames, (2,), norm, onesided)
    out = out.transpose(1, 2)
    if ndim == 1:
        out = out.squeeze(0)
    return out if return_complex else view_as_real(out)


def _check_return_complex(input, window, return_complex):
    if return_complex is None and not (input.is_complex() or (window is not None and window.is_complex())):
        raise RuntimeError("stft requires the return_complex parameter be given for real inputs, and "
                           "will further require that return_complex=True in a future PyTorch release.")
    if return_complex is False:
        warnings.warn("stft with return_complex=False is deprecated. In a future pytorch release, stft "
                      "will return complex tensors for all inputs, and return_complex=False will raise "
                      "an error.\nNote: you can still call ember.view_as_real on the complex output to "
                      "recover the old return format.", UserWarning, stacklevel=3)


def _istft_error(input, n_fft, hop_length, win_length, window, center, normalized, onesided, length,
                 return_complex, what, sep=" : "):
    window_text = "None" if window is None else f"ember.{window.dtype._cpp_name}Tensor{{{list(window.shape)}}}"
    return RuntimeError(
        f"istft(CPU{input.dtype._cpp_name}Type{list(input.shape)}, n_fft={n_fft}, "
        f"hop_length={hop_length}, win_length={win_length}, window={window_text}, center={int(center)}, "
        f"normalized={int(normalized)}, onesided={_opt(onesided)}, length={length}, "
        f"return_complex={int(return_complex)}){sep}{what}")


def _overlap_add(frames, hop_length, total):
    """Sums frames (batch, n_frames, n_fft) placed every ``hop_length`` points into signals of
    ``total`` points (differentiable): the adjoint of framing."""
    xp = namespace_of(frames._data)
    batch, n_frames, n_fft = frames._data.shape
    positions = (xp.arange(n_frames)[:, None] * hop_length + xp.arange(n_fft)).reshape(-1)
    base = zeros(batch, total, dtype=frames.dtype, device=frames.device)
    return index_add(base, 1, make(positions), frames.reshape(batch, -1))


@method()
def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
          normalized=False, onesided=None, length=None, return_complex=False):
    """The inverse of :func:`stft`: the signal whose short-time Fourier transform is
    ``input`` (complex, (batch?, frequencies, frames)), by inverse-transforming each frame,
    windowing it and overlap-adding, divided by the overlap-added squared window. Use the
    ``window``, ``hop_length`` and ``center`` the transform was made with; ``length`` crops or
    zero-pads the result."""
    if not isinstance(input, Tensor):
        raise TypeError(f"istft(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    hop_length = n_fft >> 2 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    if not input.is_complex():
        raise RuntimeError("istft requires a complex-valued input tensor matching the output from stft "
                           "with return_complex=True.")
    args = (n_fft, hop_length, win_length, window, center, normalized, onesided, length, return_complex)
    parts = view_as_real(input)
    ndim = parts._data.ndim
    if input._data.size == 0:
        raise _istft_error(input, *args, "input tensor cannot be empty.")
    if ndim not in (3, 4):
        raise _istft_error(input, *args, f"expected a tensor with 3 or 4 dimensions of "
                                         f"{parts.dtype}, but got {ndim}")
    n_frames, fft_size = parts._data.shape[-2], parts._data.shape[-3]
    total = n_fft + hop_length * (n_frames - 1)
    onesided = fft_size != n_fft if onesided is None else onesided
    if onesided and n_fft // 2 + 1 != fft_size:
        raise _istft_error(input, *args, "expected the frequency dimension (3rd to the last) of the input "
                                         f"tensor to match n_fft / 2 + 1 when onesided=True, but got {fft_size}")
    if not onesided and n_fft != fft_size:
        raise _istft_error(input, *args, "expected the frequency dimension (3rd to the last) of the input "
                                         f"tensor to match n_fft when onesided=False, but got {fft_size}")
    if not 0 < hop_length <= win_length:
        raise _istft_error(input, *args, "expected 0 < hop_length <= win_length")
    if not 0 < win_length <= n_fft:
        raise _istft_error(input, *args, "expected 0 < win_length <= n_fft")
    if window is not None and (window.ndim != 1 or window.shape[0] != win_length):
        raise _istft_error(input, *args, "Invalid window shape. window has to be 1D and length of "
                                         "`win_length`")
    if window is None:
        warnings.warn("A window was not provided. A rectangular window will be applied.Please provide "
                      "the same window used by stft to make the inversion lossless.To suppress this "
                      "warning and use a rectangular window, explicitly set `window=ember.ones(n_fft, "
                      "device=<device>)`.", UserWarning, stacklevel=2)
        window = ones(win_length, dtype=parts.dtype, device=input.device)
    window = _centered_window(window, n_fft, win_length, parts)
    frames = input.unsqueeze(0) if ndim == 3 else input
    frames = frames.transpose(1, 2)                        # (batch, frames, frequencies)
    norm = BY_ROOT_N if normalized else BY_N
    if return_complex:
        if onesided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        frames = fft_c2c(frames, (2,), norm, False)
    else:
        if window.is_complex():
            raise RuntimeError("Complex windows are incompatible with return_complex=False")
        if not onesided:
            frames = frames.narrow(-1, 0, n_fft // 2 + 1)
        frames = fft_c2r(frames, (2,), norm, n_fft)
    y = _overlap_add(frames * window.reshape(1, 1, n_fft), hop_length, total)
    envelope = _overlap_add((window * window).reshape(1, 1, n_fft).expand(1, n_frames, n_fft),
                            hop_length, total)
    start = n_fft // 2 if center else 0
    if length is not None:
        end = start + length
    else:
        end = total - n_fft // 2 if center else total
    y = y[:, start:end]
    envelope = envelope[:, start:end]
    if bool((envelope.detach().abs() < 1e-11).any()):
        raise _istft_error(input, *args, "window overlap add min: 1\n[ CPUBoolType{} ]", sep=" ")
    y = y / envelope
    if ndim == 3:
        y = y.squeeze(0)
    if end > total:
        warnings.warn("The length of signal is shorter than the length parameter. Result is being padded "
                      "with zeros in the tail. Please check your center and hop_length settings.",
                      UserWarning, stacklevel=2)
        y = _constant_pad(y, [0, end - total], 0)
    return y
