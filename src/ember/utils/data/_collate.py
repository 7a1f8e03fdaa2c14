"""``default_collate`` / ``default_convert``: turning fetched samples into batches of tensors,
with torch's rules for nested mappings, namedtuples, sequences, NumPy arrays, numbers and
strings. Inside a DataLoader worker, batches are stacked straight into shared memory, so the
batch is written once and the main process maps it without a copy."""
import collections
import copy
import re

import numpy as np

__all__ = ["collate", "default_collate", "default_convert", "default_collate_fn_map",
           "default_collate_err_msg_format"]

np_str_obj_array_pattern = re.compile(r"[SaUO]")

default_collate_err_msg_format = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}")


def _tensor_type():
    from ..._tensor import Tensor
    return Tensor


def _is_numpy_value(elem_type):
    return (elem_type.__module__ == "numpy" and elem_type.__name__ != "str_"
            and elem_type.__name__ != "string_")


def _rebuild_mapping(data, convert):
    """``data`` (a mapping) with each value converted, keeping its type where possible."""
    try:
        if isinstance(data, collections.abc.MutableMapping):
            clone = copy.copy(data)
            clone.update({key: convert(key) for key in data})
            return clone
        return type(data)({key: convert(key) for key in data})
    except TypeError:
        return {key: convert(key) for key in data}


def _rebuild_sequence(data, items):
    """A sequence of ``data``'s type holding ``items``, or a list if that type cannot be
    built from a list."""
    try:
        if isinstance(data, collections.abc.MutableSequence):
            clone = copy.copy(data)
            for i, item in enumerate(items):
                clone[i] = item
            return clone
        return type(data)(items)
    except TypeError:
        return list(items)


def default_convert(data):
    """Converts each NumPy array (and NumPy scalar) in ``data`` into a tensor, recursing into
    mappings, namedtuples and sequences (tuples come back as lists); other values are left
    unchanged. The DataLoader's collate function when automatic batching is off."""
    elem_type = type(data)
    if isinstance(data, _tensor_type()):
        return data
    if _is_numpy_value(elem_type):
        if elem_type.__name__ == "ndarray" and np_str_obj_array_pattern.search(data.dtype.str):
            return data
        from ... import as_tensor
        return as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return _rebuild_mapping(data, lambda key: default_convert(data[key]))
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return elem_type(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _rebuild_sequence(data, [default_convert(d) for d in data])
    return data


def _collate_by_map(batch, collate_fn_map):
    elem_type = type(batch[0])
    if elem_type in collate_fn_map:
        return collate_fn_map[elem_type]
    for collate_type in collate_fn_map:
        if isinstance(batch[0], collate_type):
            return collate_fn_map[collate_type]
    return None


def _transposed(batch):
    it = iter(batch)
    elem_size = len(next(it))
    if not all(len(elem) == elem_size for elem in it):
        raise RuntimeError("each element in list of batch should be of equal size")
    return list(zip(*batch))


def collate(batch, *, collate_fn_map=None):
    """Collates a batch (a list of samples) by the samples' structure: mappings by key,
    namedtuples and sequences position by position, leaves through the function that
    ``collate_fn_map`` gives for their type (exact type first, then ``isinstance``)."""
    elem = batch[0]
    if collate_fn_map is not None:
        fn = _collate_by_map(batch, collate_fn_map)
        if fn is not None:
            return fn(batch, collate_fn_map=collate_fn_map)
    recurse = lambda samples: collate(samples, collate_fn_map=collate_fn_map)  # noqa: E731
    if isinstance(elem, collections.abc.Mapping):
        return _rebuild_mapping(elem, lambda key: recurse([d[key] for d in batch]))
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(recurse(samples) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        transposed = _transposed(batch)
        if isinstance(elem, tuple):
            return [recurse(samples) for samples in transposed]
        return _rebuild_sequence(elem, [recurse(samples) for samples in transposed])
    raise TypeError(default_collate_err_msg_format.format(type(elem)))


def _stack_into_shared(batch):
    """``stack(batch)`` written directly into a new shared-memory segment."""
    from ... import stack
    from ..._tensor import _make
    from ...multiprocessing import _shm
    elem = batch[0]
    same = all(t._data.shape == elem._data.shape and t._data.dtype == elem._data.dtype for t in batch)
    if not same or elem.device.type != "cpu":
        return stack(batch, 0)  # torch's errors for mismatched sizes; promotion
    out = _shm.empty_shared((len(batch),) + elem._data.shape, elem._data.dtype)
    np.stack([t._data for t in batch], axis=0, out=out)
    return _make(out)


def collate_tensor_fn(batch, *, collate_fn_map=None):
    from ... import stack
    from .dataloader import get_worker_info
    if get_worker_info() is not None and not any(t.requires_grad for t in batch):
        return _stack_into_shared(batch)
    return stack(batch, 0)


def collate_numpy_array_fn(batch, *, collate_fn_map=None):
    from ... import as_tensor
    elem = batch[0]
    if np_str_obj_array_pattern.search(elem.dtype.str) is not None:
        raise TypeError(default_collate_err_msg_format.format(elem.dtype))
    return collate([as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch, *, collate_fn_map=None):
    from ... import as_tensor
    return as_tensor(np.asarray(batch))


def collate_float_fn(batch, *, collate_fn_map=None):
    from ... import float64, tensor
    return tensor(batch, dtype=float64)


def collate_int_fn(batch, *, collate_fn_map=None):
    from ... import tensor
    return tensor(batch)


def collate_str_fn(batch, *, collate_fn_map=None):
    return batch


default_collate_fn_map = {}


def _fill_default_map():
    default_collate_fn_map[_tensor_type()] = collate_tensor_fn
    default_collate_fn_map[np.ndarray] = collate_numpy_array_fn
    default_collate_fn_map[(np.bool_, np.number, np.object_)] = collate_numpy_scalar_fn
    default_collate_fn_map[float] = collate_float_fn
    default_collate_fn_map[int] = collate_int_fn
    default_collate_fn_map[str] = collate_str_fn
    default_collate_fn_map[bytes] = collate_str_fn


_fill_default_map()


def default_collate(batch):
    """Puts each data field of the samples in ``batch`` into a tensor with an outer batch
    dimension: tensors and NumPy arrays are stacked, Python floats become a float64 tensor,
    ints an int64 tensor, strings stay a list; mappings, namedtuples and sequences are
    collated field by field (tuples come back as lists). The DataLoader's collate function
    when automatic batching is on."""
    return collate(batch, collate_fn_map=default_collate_fn_map)
