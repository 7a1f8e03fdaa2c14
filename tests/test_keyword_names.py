"""The keyword names of every function and Tensor method the op table calls, against torch's.

The op table (tests/op_db/) is walked with a recording stand-in for the library and for the
tensors, which notes each ``lib.X(...)`` and ``tensor.X(...)`` call. torch's names come from
``inspect.signature`` where torch's function is Python, else from the ATen schemas of the
overloads Python sees (those taking a tensor first; ``self`` is Python's ``input``, out
arguments are ``out``; Tensor methods take no ``out``). Every name torch accepts must be
accepted by ember, but for the exceptions listed here with their reasons."""
import inspect

import torch

import ember
from op_db import OPS
from op_db.common import Arg

# names torch accepts and ember does not, on purpose or for now, with the reason
EXCEPTIONS = {
    ("Tensor", "copy_"): ({"other"}, "the name of TorchScript's copy_.Tensor overload, which torch's "
                                     "Python binding also takes; torch documents src, as ember"),
    ("torch", "isin"): ({"test_element"}, "torch's scalar overload's name; ember takes a number as "
                                          "test_elements"),
    ("torch", "concatenate"): ({"axis"}, "NumPy's name, which torch's parser also takes for dim; ember "
                                         "does not take torch's NumPy aliases (x, a, x1 for input, "
                                         "x2 for other, axis for dim, keepdims for keepdim)"),
}
NO_PYTHON_OUT = ({"out"}, "ATen has an out variant, but torch's Python binding takes no out=")
for _name in ("var_mean", "std_mean", "unique_consecutive", "bincount", "_standard_gamma_grad",
              "_dirichlet_grad", "count_nonzero", "diag_embed", "diagonal_scatter", "dist", "fill", "flip",
              "index_fill", "index_put", "linalg.matrix_exp", "masked_fill", "masked_scatter", "put",
              "repeat_interleave", "roll", "rot90", "select_scatter", "trace"):
    EXCEPTIONS[("torch", _name)] = NO_PYTHON_OUT
OUT_DTYPE = ({"out_dtype"}, "torch 2.13's out_dtype (a wider result dtype for low-precision "
                            "products) is not in ember yet")
for _name in ("mm", "bmm", "addmm", "baddbmm"):
    EXCEPTIONS[("torch", _name)] = OUT_DTYPE
EXCEPTIONS[("Tensor", "mm")] = EXCEPTIONS[("Tensor", "addmm")] = OUT_DTYPE

# torch functions whose out= ember does not take yet (to be added inside each function: a
# with_out wrapper costs a Python call on every functional call; the list may only shrink)
OUT_NOT_YET = set()


class _Recorder:
    """Stands in for ``lib`` (kind "lib"), a tensor ("tensor") or a bound method ("method"),
    noting every call made through it in ``calls``."""

    def __init__(self, calls, kind, path=""):
        self._calls, self._kind, self._path = calls, kind, path

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        if self._kind == "lib":
            if name == "Tensor" and not self._path:
                return _Recorder
            return _Recorder(self._calls, "lib", f"{self._path}.{name}" if self._path else name)
        return _Recorder(self._calls, "method", name)

    def __call__(self, *args, **kwargs):
        if self._kind in ("lib", "method"):
            self._calls.add(("torch" if self._kind == "lib" else "Tensor", self._path))
        return _Recorder(self._calls, "tensor")

    def _tensor(self, *args):
        return _Recorder(self._calls, "tensor")

    for _op in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or",
                "xor", "lshift", "rshift"):
        locals()[f"__{_op}__"] = locals()[f"__r{_op}__"] = _tensor
    del _op
    __neg__ = __pos__ = __abs__ = __invert__ = __getitem__ = _tensor
    __lt__ = __le__ = __gt__ = __ge__ = __eq__ = __ne__ = _tensor
    __hash__ = object.__hash__

    def __setitem__(self, key, value):
        pass

    def __iter__(self):
        return iter([_Recorder(self._calls, "tensor"), _Recorder(self._calls, "tensor")])

    def __len__(self):
        return 2

    def __bool__(self):
        return True

    def __index__(self):
        return 1

    __int__ = __index__

    def __float__(self):
        return 1.0


def _stand_ins(x, calls):
    if isinstance(x, Arg):
        return _Recorder(calls, "tensor")
    if isinstance(x, (list, tuple)):
        return type(x)(_stand_ins(v, calls) for v in x)
    if isinstance(x, dict):
        return {k: _stand_ins(v, calls) for k, v in x.items()}
    return x


def _called():
    """{(kind, dotted name)} of the calls the op table makes."""
    calls = set()
    for op in OPS:
        for sample in op.samples:
            try:
                op.fn(_Recorder(calls, "lib"), *_stand_ins(sample.args, calls),
                      **_stand_ins(sample.kwargs, calls))
            except (TypeError, ValueError):   # the stand-ins cannot follow every lambda to its end
                pass
    return calls


def _resolve(lib, kind, path):
    obj = lib.Tensor if kind == "Tensor" else lib
    for part in path.split("."):
        obj = getattr(obj, part, None)
    return obj


def _schema_names(kind, path):
    head, _, name = path.rpartition(".")
    prefix = {"": "", "linalg": "linalg_", "special": "special_", "fft": "fft_"}.get(head)
    if prefix is None:
        return None
    names = []
    for schema in torch._C._jit_get_schemas_for_operator(f"aten::{prefix}{name}"):
        if not schema.arguments or not str(schema.arguments[0].type).startswith(("Tensor", "Optional[Tensor]")):
            continue   # TorchScript's overloads on numbers and lists, which Python does not see
        for arg in schema.arguments:
            n = "out" if arg.is_out else arg.name
            if n == "self":
                if kind == "Tensor":
                    continue
                n = "input"
            if n == "out" and kind == "Tensor":
                continue
            if n not in names:
                names.append(n)
    return names or None


def _torch_names(obj, kind, path):
    if inspect.isfunction(obj) or inspect.ismethod(obj):
        params = list(inspect.signature(obj).parameters.values())
        names = [p.name for p in params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        return names[1:] if kind == "Tensor" and names else names
    return _schema_names(kind, path)


def _ember_names(obj, kind):
    """The keywords ``obj`` takes (and whether it takes any, through ``**kwargs``)."""
    params = list(inspect.signature(obj).parameters.values())
    if kind == "Tensor" and params and params[0].kind != params[0].VAR_POSITIONAL:
        params = params[1:]
    any_keyword = any(p.kind == p.VAR_KEYWORD for p in params)
    names = {p.name for p in params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
    layer = obj
    while layer is not None:   # out= may come from a wrapper (with_out) around the function
        if "out" in inspect.signature(layer, follow_wrapped=False).parameters:
            names.add("out")
        layer = getattr(layer, "__wrapped__", None)
    return names, any_keyword


def _mismatches():
    found, compared = [], 0
    for kind, path in sorted(_called()):
        mine, theirs = _resolve(ember, kind, path), _resolve(torch, kind, path)
        if not (callable(mine) and callable(theirs)) or isinstance(theirs, type):
            continue
        torch_names = _torch_names(theirs, kind, path)
        if torch_names is None:   # no signature and no schema (torch.block_diag, ...)
            continue
        compared += 1
        names, any_keyword = _ember_names(mine, kind)
        if any_keyword:
            continue
        missing = set(torch_names) - names
        allowed, _ = EXCEPTIONS.get((kind, path), (set(), ""))
        missing -= allowed
        if kind == "torch" and path in OUT_NOT_YET:
            missing.discard("out")
        if missing:
            found.append(f"{kind}.{path}: torch takes {sorted(missing)}, ember {sorted(names)}")
    return found, compared


def test_ember_takes_torchs_keyword_names():
    found, compared = _mismatches()
    assert compared > 300
    assert not found, "\n".join(found)


def test_the_out_exceptions_are_still_needed():
    """A function that gained out= leaves OUT_NOT_YET."""
    stale = [name for name in sorted(OUT_NOT_YET)
             if "out" in _ember_names(_resolve(ember, "torch", name), "torch")[0]]
    assert not stale, stale


def test_renamed_keywords_work_as_in_torch():
    x = [[2.0, 1.0], [1.0, 3.0]]
    for lib in (ember, torch):
        a = lib.tensor(x)
        assert lib.linalg.matrix_power(input=a, n=2).shape == (2, 2)
        assert lib.linalg.det(A=a).item() == lib.det(input=a).item()
        assert lib.linalg.norm(input=a, ord="fro").item() > 0
        assert lib.linalg.vector_norm(input=a).item() > 0
        assert lib.linalg.eigvalsh(input=a).shape == (2,)
        assert [t.shape[1] for t in lib.tensor_split(lib.ones(2, 5), sections=2, dim=1)] == [3, 2]
        assert [t.shape[1] for t in lib.ones(2, 5).tensor_split(indices=[1, 4], dim=1)] == [1, 3, 1]
        assert [t.shape[0] for t in lib.vsplit(lib.ones(4, 2), indices=[1])] == [1, 3]
        assert [t.shape[1] for t in lib.hsplit(lib.ones(2, 4), sections=2)] == [2, 2]
        assert [t.shape[0] for t in lib.ones(5).split(split_size=2)] == [2, 2, 1]
        assert lib.ones(2, 3).view(size=(3, 2)).shape == (3, 2)
        assert lib.ones(2, 3).view(dtype=lib.int32).dtype == lib.int32
        assert lib.reshape(lib.ones(2, 3), shape=(6,)).shape == (6,)
        assert lib.ones(1, 3).expand(size=(2, 3)).shape == (2, 3)
        assert lib.ones(2, 3).permute(dims=(1, 0)).shape == (3, 2)
        assert lib.flip(lib.arange(3), dims=(0,)).tolist() == [2, 1, 0]
        assert lib.ones(2, 3).repeat(repeats=(2, 1)).shape == (4, 3)
        assert lib.special.chebyshev_polynomial_t(x=lib.tensor([0.5]), n=2).tolist() == [-0.5]
        assert lib.special.airy_ai(x=lib.tensor([0.0])).shape == (1,)
