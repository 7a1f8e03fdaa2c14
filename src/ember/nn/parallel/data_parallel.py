"""``DataParallel`` and its parts (``scatter``, ``replicate``, ``parallel_apply``,
``gather``, ``data_parallel``), as torch.nn.parallel has them.

Without a GPU, ``DataParallel`` is what torch's is without one: a pass-through wrapper whose
``forward`` calls ``module`` (its ``state_dict`` keys get the ``module.`` prefix all the
same), and ``data_parallel`` refuses to run. Over CUDA devices, each forward scatters the
inputs along ``dim``, runs one replica of the module per device (its parameters are
differentiable copies of the module's, so gradients reach the module's own parameters) and
gathers the outputs on ``output_device``. The replicas run one after the other from one
Python thread: CuPy launches their kernels asynchronously, each on its own device.
"""
from itertools import chain

from ..._device import device as _device
from ..._tensor import Tensor
from ..modules.module import Module

__all__ = ["DataParallel", "data_parallel", "scatter", "gather", "replicate", "parallel_apply"]


def _available_device_type():
    from ... import cuda
    return "cuda" if cuda.is_available() else None


def _all_device_indices():
    from ... import cuda
    return list(range(cuda.device_count())) or None


def _device_index(device):
    """An int, ``'cuda:i'`` or ``ember.device`` as a device index (-1 for the CPU)."""
    if isinstance(device, str):
        device = _device(device)
    if isinstance(device, _device):
        return -1 if device.type == "cpu" else (device.index or 0)
    if isinstance(device, int) and not isinstance(device, bool):
        return device
    raise ValueError(f"Expected a torch.device with a specified index or an integer, but got:{device}")


def _target(index):
    return _device("cpu") if index == -1 else _device("cuda", index)


# -- scatter, gather ----------------------------------------------------------------------------

def scatter(inputs, target_gpus, dim=0):
    """Slices tensors into approximately equal chunks along ``dim`` and distributes them
    across the given devices; lists, tuples and dicts are scattered element-wise, other
    objects are referenced by every chunk."""
    def scatter_map(obj):
        if isinstance(obj, Tensor):
            chunks = obj.chunk(len(target_gpus), dim)
            return [chunk.to(_target(_device_index(d))) for chunk, d in zip(chunks, target_gpus)]
        if isinstance(obj, tuple) and hasattr(obj, "_fields"):
            return [type(obj)(*args) for args in zip(*map(scatter_map, obj))]
        if isinstance(obj, tuple) and obj:
            return list(zip(*map(scatter_map, obj)))
        if isinstance(obj, list) and obj:
            return [list(i) for i in zip(*map(scatter_map, obj))]
        if isinstance(obj, dict) and obj:
            return [type(obj)(i) for i in zip(*map(scatter_map, obj.items()))]
        return [obj for _ in target_gpus]
    return scatter_map(inputs)


def scatter_kwargs(inputs, kwargs, target_gpus, dim=0):
    """Scatters ``inputs`` and ``kwargs`` (see ``scatter``), padding the shorter list."""
    scattered_inputs = scatter(inputs, target_gpus, dim) if inputs else []
    scattered_kwargs = scatter(kwargs, target_gpus, dim) if kwargs else []
    if len(scattered_inputs) < len(scattered_kwargs):
        scattered_inputs.extend(() for _ in range(len(scattered_kwargs) - len(scattered_inputs)))
    elif len(scattered_kwargs) < len(scattered_inputs):
        scattered_kwargs.extend({} for _ in range(len(scattered_inputs) - len(scattered_kwargs)))
    return tuple(scattered_inputs), tuple(scattered_kwargs)


def gather(outputs, target_device, dim=0):
    """Gathers tensors from the replicas onto ``target_device`` (-1 or ``'cpu'`` for the
    CPU), concatenated along ``dim``; tuples, lists and dicts are gathered element-wise."""
    from ...ops.shape import cat
    target = _target(_device_index(target_device))

    def gather_map(outs):
        out = outs[0]
        if isinstance(out, Tensor):
            if all(o.dim() == 0 for o in outs) and dim == 0:
                import warnings
                warnings.warn("Was asked to gather along dimension 0, but all input tensors were "
                              "scalars; will instead unsqueeze and return a vector.", UserWarning,
                              stacklevel=4)
                outs = [o.unsqueeze(0) for o in outs]
            return cat([o.to(target) for o in outs], dim)
        if out is None:
            return None
        if isinstance(out, dict):
            if not all(len(out) == len(d) for d in outs):
                raise ValueError("All dicts must have the same number of keys")
            return type(out)((k, gather_map([d[k] for d in outs])) for k in out)
        if isinstance(out, tuple) and hasattr(out, "_fields"):
            return type(out)._make(map(gather_map, zip(*outs)))
        return type(out)(map(gather_map, zip(*outs)))
    return gather_map(outputs)


# -- replicate, parallel_apply ------------------------------------------------------------------

def replicate(network, devices, detach=False):
    """One copy of ``network`` per device; the copies' parameters and buffers are copies of
    the network's on that device, connected to the network's in the graph (unless
    ``detach``), so that backward through a replica reaches the network's parameters."""
    indices = [_device_index(d) for d in devices]
    replicas = []
    for index in indices:
        target = _target(index)
        modules = list(network.modules())
        memo = {}
        for module in modules:
            replica = module.__new__(type(module))
            replica.__dict__ = module.__dict__.copy()
            replica._parameters = dict(module._parameters)
            replica._buffers = dict(module._buffers)
            replica._modules = dict(module._modules)
            memo[id(module)] = replica
        for module in modules:
            replica = memo[id(module)]
            for name, child in module._modules.items():
                replica._modules[name] = None if child is None else memo[id(child)]
            for name, param in module._parameters.items():
                if param is not None:
                    copied = param.to(target)
                    replica._parameters[name] = copied.detach() if detach else copied
            for name, buf in module._buffers.items():
                if buf is not None:
                    replica._buffers[name] = buf.to(target)
        replicas.append(memo[id(network)])
    return replicas


def parallel_apply(modules, inputs, kwargs_tup=None, devices=None):
    """Applies each of ``modules`` to its own ``inputs`` (and keyword arguments); returns their
    outputs in order."""
    if len(modules) != len(inputs):
        raise AssertionError(f"The number of modules {len(modules)} is not equal to the number "
                             f"of inputs {len(inputs)}")
    kwargs_tup = kwargs_tup if kwargs_tup is not None else ({},) * len(modules)
    outputs = []
    for module, args, kwargs in zip(modules, inputs, kwargs_tup):
        if not isinstance(args, (list, tuple)):
            args = (args,)
        outputs.append(module(*args, **kwargs))
    return outputs


# -- DataParallel, data_parallel -----------------------------------------------------------------

def _check_on_source(module, source):
    for t in chain(module.parameters(), module.buffers()):
        if t.device != source:
            raise RuntimeError("module must have its parameters and buffers on device "
                               f"{source} (device_ids[0]) but found one of them on device: "
                               f"{t.device}")


class DataParallel(Module):
    """Implements data parallelism at the module level: ``module`` is replicated on each of
    ``device_ids``, each replica handles a chunk of the input (split along ``dim``), and the
    outputs are gathered on ``output_device``. Without a GPU, it only calls ``module``."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        device_type = _available_device_type()
        if device_type is None:
            self.module = module
            self.device_ids = []
            return
        if device_ids is None:
            device_ids = _all_device_indices()
        if device_ids is None:
            raise RuntimeError("no available devices were found")
        if output_device is None:
            output_device = device_ids[0]
        self.dim = dim
        self.module = module
        self.device_ids = [_device_index(d) for d in device_ids]
        self.output_device = _device_index(output_device)
        self.src_device_obj = _device(device_type, self.device_ids[0])
        if len(self.device_ids) == 1:
            self.module.to(self.src_device_obj)

    def forward(self, *inputs, **kwargs):
        if not self.device_ids:
            return self.module(*inputs, **kwargs)
        _check_on_source(self.module, self.src_device_obj)
        inputs, module_kwargs = self.scatter(inputs, kwargs, self.device_ids)
        if not inputs and not module_kwargs:
            inputs, module_kwargs = ((),), ({},)
        if len(self.device_ids) == 1:
            return self.module(*inputs[0], **module_kwargs[0])
        replicas = self.replicate(self.module, self.device_ids[:len(inputs)])
        outputs = self.parallel_apply(replicas, inputs, module_kwargs)
        return self.gather(outputs, self.output_device)

    def replicate(self, module, device_ids):
        return replicate(module, device_ids, not self.training)

    def scatter(self, inputs, kwargs, device_ids):
        return scatter_kwargs(inputs, kwargs, device_ids, dim=self.dim)

    def parallel_apply(self, replicas, inputs, kwargs):
        return parallel_apply(replicas, inputs, kwargs, self.device_ids[:len(replicas)])

    def gather(self, outputs, output_device):
        return gather(outputs, output_device, dim=self.dim)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0, module_kwargs=None):
    """Evaluates ``module(input)`` in parallel across the GPUs given in ``device_ids``: the
    functional version of ``DataParallel``."""
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    device_type = _available_device_type()
    if device_type is None:
        raise RuntimeError("device type could not be determined")
    if device_ids is None:
        device_ids = _all_device_indices()
    if device_ids is None:
        raise RuntimeError("no available devices were found")
    if output_device is None:
        output_device = device_ids[0]
    device_ids = [_device_index(d) for d in device_ids]
    output_device = _device_index(output_device)
    _check_on_source(module, _device(device_type, device_ids[0]))
    inputs, module_kwargs = scatter_kwargs(inputs, module_kwargs, device_ids, dim)
    if not inputs and not module_kwargs:
        inputs, module_kwargs = ((),), ({},)
    if len(device_ids) == 1:
        return module(*inputs[0], **module_kwargs[0])
    used = device_ids[:len(inputs)]
    replicas = replicate(module, used)
    outputs = parallel_apply(replicas, inputs, module_kwargs, used)
    return gather(outputs, output_device, dim)
