"""``SyncBatchNorm``: batch normalization whose statistics cover the whole distributed batch."""
from ...autograd.graph import Node
from ...autograd.grad_mode import no_grad
from ...ops import creation as ops
from ...ops._common import record
from ...ops.shape import cat
from .normalization import _BatchNorm

__all__ = ["SyncBatchNorm"]


def _distributed():
    from ... import distributed as dist
    return dist


class AllReduceSumBackward(Node):
    """The gradient of a sum over the process group: the sum of the ranks' gradients."""
    __slots__ = ()

    def backward(self, grad):
        total = grad.clone().contiguous()
        _distributed().all_reduce(total, group=self.group)
        return (total,)


def _all_reduce_sum(tensor, group):
    """``tensor`` summed over the processes of ``group``, differentiably."""
    total = tensor.detach().clone().contiguous()
    _distributed().all_reduce(total, group=group)
    node = record(AllReduceSumBackward, (tensor,), total)
    if node is not None:
        node.group = group
    return total


class SyncBatchNorm(_BatchNorm):
    """Applies Batch Normalization over an N-dimensional input, with the mean and variance
    computed over the mini-batches of all processes of ``process_group`` (its gradients are
    all-reduced likewise in backward). Outside training, or without an initialized process
    group, it is ordinary batch normalization."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 process_group=None, device=None, dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype,
                         bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input):
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def forward(self, input):
        self._check_input_dim(input)
        dist = _distributed()
        synced = self.training and dist.is_available() and dist.is_initialized() \
            and dist.get_world_size(self.process_group) > 1
        if not synced:
            return super().forward(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:
                factor = 1.0 / float(self.num_batches_tracked.item())
        return self._synced_batch_norm(input, factor)

    def _synced_batch_norm(self, input, factor):
        dims = [0] + list(range(2, input.dim()))
        shape = [1, -1] + [1] * (input.dim() - 2)
        count = input.numel() // input.shape[1]
        sums = cat([input.sum(dims), ops.tensor([float(count)], dtype=input.dtype)])
        sums = _all_reduce_sum(sums, self.process_group)
        total = sums[-1]
        mean = sums[:-1] / total
        centered = input - mean.reshape(shape)
        var = _all_reduce_sum((centered * centered).sum(dims), self.process_group) / total
        if self.track_running_stats and self.running_mean is not None:
            self._update_running_stats(mean.detach(), var.detach(), total.item(), factor)
        out = centered * (var + self.eps).rsqrt().reshape(shape)
        if self.weight is not None:
            out = out * self.weight.reshape(shape) + self.bias.reshape(shape)
        return out

    def _update_running_stats(self, mean, var, total, factor):
        unbiased = var * (total / max(total - 1, 1))
        with no_grad():
            self.running_mean.mul_(1 - factor).add_(mean * factor)
            self.running_var.mul_(1 - factor).add_(unbiased * factor)

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """Converts all ``BatchNorm*D`` layers in ``module`` into ``SyncBatchNorm`` layers
        (sharing their parameters and buffers)."""
        converted = module
        if isinstance(module, _BatchNorm) and not isinstance(module, SyncBatchNorm):
            converted = cls(module.num_features, module.eps, module.momentum, module.affine,
                            module.track_running_stats, process_group,
                            bias=module.bias is not None)
            if module.affine:
                converted.weight = module.weight
                converted.bias = module.bias
            converted.running_mean = module.running_mean
            converted.running_var = module.running_var
            converted.num_batches_tracked = module.num_batches_tracked
            converted.training = module.training
        for name, child in module.named_children():
            converted.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return converted

