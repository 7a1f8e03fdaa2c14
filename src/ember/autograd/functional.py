"""Higher-level autograd: ``jacobian``, ``hessian``, ``vjp``, ``jvp``, ``vhp``, ``hvp``.

Each takes a function of tensors and the point (a tensor or a tuple of tensors) and returns
results shaped as torch returns them: a lone tensor where the function took (or returned) a
lone tensor, tuples where it took (or returned) tuples. Forward-mode products (``jvp``,
``hvp``) use the double-backward trick, as torch does; ``vectorize=True`` computes the same
values with a loop.
"""
from . import grad as _grad
from .grad_mode import set_grad_enabled, state

__all__ = ["vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"]


def _tensor_type():
    from .._tensor import Tensor
    return Tensor


def _as_tuple(value, arg_name, fn_name):
    """``(was_a_tuple, value as a tuple)``, checking that every element is a Tensor."""
    is_tuple = isinstance(value, tuple)
    items = value if is_tuple else (value,)
    for index, item in enumerate(items):
        if not isinstance(item, _tensor_type()):
            where = f"value at index {index}" if is_tuple else f"given {arg_name}"
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple "
                            f"of Tensors but the {where} has type {type(item)}.")
    return is_tuple, items


def _unpack(result, was_tuple):
    """Undo the tuple wrapping: ``was_tuple`` is one flag, or (outer, inner) for nested results."""
    if isinstance(was_tuple, tuple):
        outer, inner = was_tuple
        if not inner:
            result = tuple(row[0] for row in result)
        if not outer:
            result = result[0]
        return result
    return result if was_tuple else result[0]


def _prepare(tensors, create_graph, need_graph):
    """Inputs as fresh graph roots: views keeping their history with ``create_graph``, else
    detached copies that require grad when ``need_graph``."""
    out = []
    for t in tensors:
        if create_graph and t.requires_grad:
            out.append(t.view_as(t))
        else:
            out.append(t.detach().requires_grad_(need_graph))
    return tuple(out)


def _finish(tensors, create_graph):
    """Results detached from the graph unless ``create_graph``."""
    if isinstance(tensors[0], _tensor_type()):
        return tensors if create_graph else tuple(t.detach() for t in tensors)
    return tuple(_finish(t, create_graph) for t in tensors)


def _validate_v(v, other, is_other_tuple):
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for index, (el_v, el_other) in enumerate(zip(v, other)):
        if el_v.size() != el_other.size():
            prefix = f"Entry {index} in " if is_other_tuple else ""
            raise RuntimeError(f"{prefix}v has invalid size: should be {el_other.size()} but got "
                               f"{el_v.size()}.")


_INDEPENDENT = {
    "hessian": ("The hessian of the user-provided function with respect to input {i} is independent "
                "of the input. This is not allowed in strict mode. You should ensure that your "
                "function is thrice differentiable and that the hessian depends on the inputs."),
    "jacobian": ("While computing the hessian, found that the jacobian of the user-provided function "
                 "with respect to input {i} is independent of the input. This is not allowed in "
                 "strict mode. You should ensure that your function is twice differentiable and "
                 "that the jacobian depends on the inputs (this would be violated by a linear "
                 "function for example)."),
    "grad_inputs": ("The gradient with respect to input {i} is independent of the inputs of the "
                    "user-provided function. This is not allowed in strict mode."),
    "outputs": ("Output {i} of the user-provided function does not require gradients. The outputs "
                "must be computed in a differentiable manner from the input when running in "
                "strict mode."),
}


def _check_requires_grad(tensors, kind, strict):
    """In strict mode, refuse results that do not depend on the inputs."""
    if not strict:
        return
    for i, t in enumerate(tensors):
        if t is None:
            raise RuntimeError(f"The output of the user-provided function is independent of input {i}. "
                               "This is not allowed in strict mode.")
        if not t.requires_grad:
            raise RuntimeError(_INDEPENDENT[kind].format(i=i))


def _autograd_grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None):
    """``autograd.grad`` over the outputs that require grad; None for unreached inputs."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    return _grad([o for o, _ in pairs], inputs, [g for _, g in pairs], allow_unused=True,
                 create_graph=create_graph, retain_graph=retain_graph)


_NO_GRAD = {
    "back": "The output of the user-provided function is independent of input {i}. This is not "
            "allowed in strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the "
                  "grad_outputs when using the double backward trick to compute forward mode "
                  "gradients. This is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. This is "
                   "not allowed in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry {i} in "
                         "the grad_jacobian. This is not allowed in strict mode as it prevents from "
                         "using the double backward trick to replace forward mode AD.",
}


def _fill_in_zeros(grads, refs, strict, create_graph, stage):
    """Zeros (shaped like ``refs``) for the gradients that are None, or errors in strict mode."""
    from ..ops.creation import zeros_like
    out = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_NO_GRAD[stage].format(i=i))
            g = zeros_like(refs[i])
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of input {i}. "
                               "This is not allowed in strict mode when create_graph=True.")
        out.append(g)
    return tuple(out)


def _last_backward(outputs, inputs, v, refs, strict, create_graph, stage):
    """The final backward of a product (``v`` as grad_outputs), recorded only with
    ``create_graph``; zeros for inputs it does not reach."""
    with set_grad_enabled(create_graph or state.grad_enabled):
        grads = _autograd_grad(outputs, inputs, v, create_graph=create_graph)
        return _fill_in_zeros(grads, refs, strict, create_graph, stage)


def _prepare_v(v, refs, is_refs_tuple, create_graph, fn_name, none_message):
    if v is not None:
        _, v = _as_tuple(v, "v", fn_name)
        v = _prepare(v, create_graph, need_graph=False)
        _validate_v(v, refs, is_refs_tuple)
        return v
    if len(refs) != 1 or refs[0].nelement() != 1:
        raise RuntimeError(none_message)
    return None


_V_FOR_INPUT = ("The vector v can only be None if the input to the user-provided function is a "
                "single Tensor with a single element.")


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """Compute the dot product between a vector ``v`` and the Jacobian of the given function at
    the point given by the inputs. Returns ``(func_output, vjp)``."""
    with set_grad_enabled(True):
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _prepare(inputs, create_graph, need_graph=True)
        is_outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "vjp")
        _check_requires_grad(outputs, "outputs", strict)
        v = _prepare_v(v, outputs, is_outputs_tuple, create_graph, "vjp",
                       "The vector v can only be None if the user-provided function returns a single "
                       "Tensor with a single element.")
    result = _last_backward(outputs, inputs, v, inputs, strict, create_graph, "back")
    return (_unpack(_finish(outputs, create_graph), is_outputs_tuple),
            _unpack(_finish(result, create_graph), is_inputs_tuple))


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """Compute the dot product between the Jacobian of the given function at the point given by
    the inputs and a vector ``v``. Returns ``(func_output, jvp)``."""
    from ..ops.creation import zeros_like
    with set_grad_enabled(True):
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _prepare(inputs, create_graph, need_graph=True)
        v = _prepare_v(v, inputs, is_inputs_tuple, create_graph, "jvp", _V_FOR_INPUT)
        is_outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "jvp")
        _check_requires_grad(outputs, "outputs", strict)
        # backward is linear in grad_outputs: their value does not matter (but must be finite)
        grad_outputs = tuple(zeros_like(out, requires_grad=True) for out in outputs)
        grad_inputs = _autograd_grad(outputs, inputs, grad_outputs, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict)
    result = _last_backward(grad_inputs, grad_outputs, v, outputs, strict, create_graph, "back_trick")
    return (_unpack(_finish(outputs, create_graph), is_outputs_tuple),
            _unpack(_finish(result, create_graph), is_outputs_tuple))


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """Compute the Jacobian of a given function.

    Returns a Tensor for one input and one output; otherwise tuples where ``Jacobian[i][j]`` is
    the Jacobian of the ``i``-th output with respect to the ``j``-th input, of shape
    ``output_i.shape + input_j.shape``. ``vectorize`` gives the same result (computed by a loop).
    """
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(
            'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your function '
            'has more outputs than inputs, "forward-mode" tends to be more performant. Otherwise, '
            'prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        _check_forward_mode(create_graph, strict, vectorize)
        return _forward_jacobian(func, inputs)
    if vectorize and strict:
        raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` "
                           "are not supported together. Please either set `strict=False` or "
                           "`vectorize=False`.")
    with set_grad_enabled(True):
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _prepare(inputs, create_graph, need_graph=True)
        is_outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function",
                                              "jacobian")
        _check_requires_grad(outputs, "outputs", strict)
        jac = tuple(_jacobian_of_output(i, out, inputs, create_graph, strict)
                    for i, out in enumerate(outputs))
        return _unpack(_finish(jac, create_graph), (is_outputs_tuple, is_inputs_tuple))


def _forward_jacobian(func, inputs):
    """``jacobian`` in forward mode: one evaluation of ``func`` at a dual level per input
    element, with that element's basis tangent (torch batches them with vmap)."""
    from . import forward_ad
    from ..ops.creation import zeros_like
    from ..ops.shape import stack
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    inputs = tuple(t.detach() for t in inputs)
    columns = [[] for _ in inputs]
    outputs = is_outputs_tuple = None
    for j, inp in enumerate(inputs):
        for k in range(inp.nelement()):
            with forward_ad.dual_level():
                tangent = zeros_like(inp)
                tangent._data.reshape(-1)[k] = 1
                duals = list(inputs)
                duals[j] = forward_ad.make_dual(inp, tangent)
                is_outputs_tuple, outs = _as_tuple(func(*duals), "outputs of the user-provided function",
                                                   "jacobian")
                columns[j].append([_tangent_or_zeros(forward_ad.unpack_dual(o), o) for o in outs])
                outputs = [o.detach() for o in outs]
    if outputs is None:
        is_outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function",
                                              "jacobian")
    jac = tuple(tuple(_forward_block(columns[j], i, out, inp, stack) for j, inp in enumerate(inputs))
                for i, out in enumerate(outputs))
    return _unpack(jac, (is_outputs_tuple, is_inputs_tuple))


def _tangent_or_zeros(unpacked, out):
    from ..ops.creation import zeros_like
    return unpacked.tangent.detach() if unpacked.tangent is not None else zeros_like(out).detach()


def _forward_block(columns, i, out, inp, stack):
    shape = tuple(out.shape) + tuple(inp.shape)
    if not columns or not out.nelement():
        return out.new_zeros(shape)
    return stack([c[i] for c in columns], -1).reshape(shape)


def _check_forward_mode(create_graph, strict, vectorize):
    """torch's restrictions on ``strategy="forward-mode"``."""
    if create_graph:
        raise NotImplementedError(
            "torch.autograd.functional.jacobian: `create_graph=True` and "
            '`strategy="forward-mode"` are not supported together (yet). Please either set '
            '`create_graph=False` or `strategy="reverse-mode"`.')
    if strict:
        raise RuntimeError(
            'torch.autograd.functional.jacobian: `strict=True` and `strategy="forward-mode"` are '
            'not supported together (yet). Please either set `strict=False` or '
            '`strategy="reverse-mode"`.')
    if not vectorize:
        raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse "
                                  "Hessian isonly implemented for `vectorize=True`.")


def _jacobian_of_output(i, out, inputs, create_graph, strict):
    """The Jacobians of output ``i`` with respect to each input: one backward per element."""
    from ..ops.creation import zeros_like
    from ..ops.shape import stack
    rows = [[] for _ in inputs]
    flat = out.reshape(-1)
    for k in range(out.nelement()):
        grads = _autograd_grad((flat[k],), inputs, retain_graph=True, create_graph=create_graph)
        for j, (g, inp) in enumerate(zip(grads, inputs)):
            if g is None:
                if strict:
                    raise RuntimeError(f"Output {i} of the user-provided function is independent of "
                                       f"input {j}. This is not allowed in strict mode.")
                g = zeros_like(inp)
            elif strict and create_graph and not g.requires_grad:
                raise RuntimeError(f"The jacobian of the user-provided function is independent of "
                                   f"input {i}. This is not allowed in strict mode when create_graph=True.")
            rows[j].append(g)
    return tuple(_stack_rows(row, out, inp, stack) for row, inp in zip(rows, inputs))


def _stack_rows(row, out, inp, stack):
    shape = tuple(out.shape) + tuple(inp.shape)
    if not row:  # an empty output
        return inp.new_zeros(shape)
    return stack(row, 0).view(shape)


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    """Compute the Hessian of a given scalar function.

    Returns a Tensor for one input; otherwise a tuple of tuples where ``Hessian[i][j]`` is the
    Hessian with respect to the ``i``-th and ``j``-th inputs.
    """
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def single_output(*inp):
        out = func(*inp)
        is_out_tuple, t_out = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(t_out, "outputs", strict)
        if is_out_tuple:
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.nelement() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should contain a "
                               "single element")
        return out.squeeze()

    def jac_func(*inp):
        if outer_jacobian_strategy == "forward-mode":
            inp = tuple(t.requires_grad_(True) for t in inp)
        jac = jacobian(single_output, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        return jac

    res = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize,
                   strategy=outer_jacobian_strategy)
    return _unpack(res, (is_inputs_tuple, is_inputs_tuple))


def _scalar_output(func, inputs, fn_name, strict):
    is_outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", fn_name)
    _check_requires_grad(outputs, "outputs", strict)
    if is_outputs_tuple:
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs[0].nelement() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should contain a "
                           "single element")
    return is_outputs_tuple, outputs


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """Compute the dot product between vector ``v`` and the Hessian of a given scalar function at
    a specified point. Returns ``(func_output, vhp)``."""
    with set_grad_enabled(True):
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vhp")
        inputs = _prepare(inputs, create_graph, need_graph=True)
        v = _prepare_v(v, inputs, is_inputs_tuple, create_graph, "vhp", _V_FOR_INPUT)
        is_outputs_tuple, outputs = _scalar_output(func, inputs, "vhp", strict)
        jac = _autograd_grad(outputs, inputs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
    result = _last_backward(jac, inputs, v, inputs, strict, create_graph, "double_back")
    return (_unpack(_finish(outputs, create_graph), is_outputs_tuple),
            _unpack(_finish(result, create_graph), is_inputs_tuple))


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """Compute the dot product between the Hessian of a given scalar function and a vector ``v``
    at a specified point. Returns ``(func_output, hvp)``."""
    from ..ops.creation import zeros_like
    with set_grad_enabled(True):
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hvp")
        inputs = _prepare(inputs, create_graph, need_graph=True)
        v = _prepare_v(v, inputs, is_inputs_tuple, create_graph, "hvp", _V_FOR_INPUT)
        is_outputs_tuple, outputs = _scalar_output(func, inputs, "hvp", strict)
        jac = _autograd_grad(outputs, inputs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        grad_jac = tuple(zeros_like(inp, requires_grad=True) for inp in inputs)
        double_back = _autograd_grad(jac, inputs, grad_jac, create_graph=True)
        _check_requires_grad(jac, "hessian", strict)
    result = _last_backward(double_back, grad_jac, v, inputs, strict, create_graph, "double_back_trick")
    return (_unpack(_finish(outputs, create_graph), is_outputs_tuple),
            _unpack(_finish(result, create_graph), is_inputs_tuple))
