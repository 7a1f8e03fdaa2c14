"""The address of a NumPy array's data, for the C libraries ember calls through ctypes."""
import ctypes

_from_buffer = ctypes.c_char.from_buffer
_addressof = ctypes.addressof


def address(array):
    """The address of ``array``'s first element (``array.ctypes.data``, which builds a ctypes
    helper object per call; a writable, row-major, non-empty array, the common case, is read
    through its buffer instead, in about a third of the time, and a column-major one (a
    transposed weight) through its transpose's, which starts at the same element: NumPy
    refuses the others that buffer, and they take ``ctypes.data``)."""
    flags = array.flags
    if flags.writeable and array.size and (flags.c_contiguous or flags.f_contiguous):
        try:
            return _addressof(_from_buffer(array if flags.c_contiguous else array.T))
        except ValueError:   # a dtype the buffer protocol does not carry (bfloat16)
            pass
    return array.ctypes.data
