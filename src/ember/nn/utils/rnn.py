"""Variable-length sequences for the recurrent layers: PackedSequence, packing and padding.

A packed sequence stores the timesteps of a batch of sequences (sorted by decreasing length)
one after the other: first every sequence's step 0, then step 1 of the sequences that have
one, and so on; ``batch_sizes[t]`` counts the sequences still running at step ``t``."""
from collections import namedtuple
from collections.abc import Iterable

from ... import _dtype
from ..._tensor import Tensor
from ...ops.creation import arange, as_tensor
from ...ops.sort import sort

__all__ = [
    "PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence",
    "pad_sequence", "unpad_sequence", "pack_sequence", "unpack_sequence",
]

PackedSequence_ = namedtuple("PackedSequence_",
                             ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])


def _bind(optional, fn):
    return None if optional is None else fn(optional)


class PackedSequence(PackedSequence_):
    """Holds the data and the list of ``batch_sizes`` of a packed sequence; made by
    :func:`pack_padded_sequence` or :func:`pack_sequence`, never by hand."""
    __slots__ = ()

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data
        elif batch_sizes.device.type != "cpu":
            raise ValueError(
                "batch_sizes should always be on CPU. Instances of PackedSequence should never "
                "be created manually. They should be instantiated by functions like "
                "pack_sequence and pack_padded_sequences in nn.utils.rnn. "
                "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence")
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        """``data`` moved or cast as by ``Tensor.to``; the indices follow ``data``'s device and
        ``batch_sizes`` stays on the CPU."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        move = lambda t: t.to(data.device)  # noqa: E731
        return type(self)(data, self.batch_sizes, _bind(self.sorted_indices, move),
                          _bind(self.unsorted_indices, move))

    def cuda(self, *args, **kwargs):
        kwargs.setdefault("device", "cuda")
        return self.to(*args, **kwargs)

    def cpu(self, *args, **kwargs):
        kwargs.setdefault("device", "cpu")
        return self.to(*args, **kwargs)

    def double(self):
        return self.to(dtype=_dtype.float64)

    def float(self):
        return self.to(dtype=_dtype.float32)

    def half(self):
        return self.to(dtype=_dtype.float16)

    def long(self):
        return self.to(dtype=_dtype.int64)

    def int(self):
        return self.to(dtype=_dtype.int32)

    def short(self):
        return self.to(dtype=_dtype.int16)

    def char(self):
        return self.to(dtype=_dtype.int8)

    def byte(self):
        return self.to(dtype=_dtype.uint8)

    @property
    def is_cuda(self):
        """True if ``data`` is on a CUDA device."""
        return self.data.is_cuda

    def is_pinned(self):
        return self.data.is_pinned()


def invert_permutation(permutation):
    """The permutation that undoes ``permutation`` (None stays None)."""
    if permutation is None:
        return None
    return permutation.argsort()


def _lengths_tensor(lengths):
    if isinstance(lengths, Tensor):
        return lengths.to(dtype=_dtype.int64)
    return as_tensor(lengths, dtype=_dtype.int64)


def _check_lengths(input, lengths, batch_first):
    if input.numel() == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    if lengths.dim() != 1:
        raise RuntimeError("'lengths' argument should be a 1D CPU int64 tensor, but got "
                           f"{lengths.dim()}D cpu Long tensor")
    batch_size = input.shape[0 if batch_first else 1]
    values = lengths.tolist()
    if len(values) != batch_size:
        raise RuntimeError("Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{len(values)} (batch_size={batch_size})")
    if values[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element "
                           "in 'lengths' that is <= 0")
    if any(a < b for a, b in zip(values, values[1:])):
        raise RuntimeError(
            "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
            "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to "
            "sidestep this requirement if you do not need ONNX exportability.")
    steps = input.shape[1 if batch_first else 0]
    if values[0] > steps:
        raise RuntimeError(f"lengths can be at most the sequence length ({steps}), but got "
                           f"{values[0]}")


def _step_mask(steps, lengths):
    """(steps, batch) boolean mask: True where step ``t`` lies inside sequence ``b``."""
    return arange(steps).unsqueeze(1) < lengths.unsqueeze(0)


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Packs a Tensor containing padded sequences of variable length: ``input`` is
    ``T x B x *`` (``B x T x *`` with ``batch_first``) and ``lengths`` the length of each
    sequence. With ``enforce_sorted=False`` the sequences are sorted by length first."""
    lengths = _lengths_tensor(lengths)
    sorted_indices = None
    if not enforce_sorted:
        lengths, sorted_indices = sort(lengths, descending=True)
        sorted_indices = sorted_indices.to(input.device)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    _check_lengths(input, lengths, batch_first)
    if batch_first:
        input = input.transpose(0, 1)
    mask = _step_mask(int(lengths[0]), lengths)
    data = input[:mask.shape[0]][mask]  # row-major over (step, batch): the packed order
    batch_sizes = mask.sum(1)
    return PackedSequence(data, batch_sizes, sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Pads a packed batch of variable length sequences (the inverse of
    :func:`pack_padded_sequence`): returns the padded ``T x B x *`` tensor (``B x T x *``
    with ``batch_first``) and the lengths of the sequences."""
    batch_sizes = sequence.batch_sizes
    max_seq_length = batch_sizes.size(0)
    if total_length is not None:
        if total_length < max_seq_length:
            raise ValueError("Expected total_length to be at least the length of the longest "
                             f"sequence in input, but got total_length={total_length} and max "
                             f"sequence length being {max_seq_length}")
        max_seq_length = total_length
    data = sequence.data
    batch = int(batch_sizes[0])
    lengths = (arange(batch).unsqueeze(0) < batch_sizes.unsqueeze(1)).sum(0)
    padded = data.new_full((max_seq_length, batch) + tuple(data.shape[1:]), padding_value)
    padded[_step_mask(max_seq_length, lengths)] = data
    if batch_first:
        padded = padded.transpose(0, 1)
    unsorted_indices = sequence.unsorted_indices
    if unsorted_indices is not None:
        padded = padded.index_select(0 if batch_first else 1, unsorted_indices)
        lengths = lengths[unsorted_indices.cpu()]
    return padded, lengths


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Pads a list of variable length Tensors (each ``L_i x *``) with ``padding_value`` into
    one ``T x B x *`` tensor (``B x T x *`` with ``batch_first``), ``T`` the longest length;
    ``padding_side`` says on which side the padding goes."""
    if not isinstance(sequences, Iterable):
        raise RuntimeError("pad_sequence: Expected iterable for input sequences, but got arg of "
                           f"type: {type(sequences)}")
    sequences = tuple(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    if padding_side not in ("left", "right"):
        raise RuntimeError("Expected padding_side to be one of left or right, but got "
                           f"{padding_side}.")
    max_len = max(s.shape[0] for s in sequences)
    first = sequences[0]
    out = first.new_full((len(sequences), max_len) + tuple(first.shape[1:]), padding_value)
    for i, seq in enumerate(sequences):
        length = seq.shape[0]
        start = 0 if padding_side == "right" else max_len - length
        out[i, start:start + length] = seq
    return out if batch_first else out.transpose(0, 1)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """Unpads a padded Tensor into a list of variable length Tensors (the inverse of
    :func:`pad_sequence`)."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [seq[:int(length)] for seq, length in zip(padded_sequences, lengths)]


def pack_sequence(sequences, enforce_sorted=True):
    """Packs a list of variable length Tensors (each ``L_i x *``)."""
    lengths = as_tensor([v.size(0) for v in sequences])
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """Unpacks a PackedSequence into a list of variable length Tensors."""
    padded_sequences, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded_sequences, lengths, batch_first=True)
