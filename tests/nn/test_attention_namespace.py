"""``ember.nn.attention`` against ``torch.nn.attention``: ``SDPBackend`` as torch's enum,
``sdpa_kernel`` setting the backends' switches (and restoring them), the CPU attention running
exactly where torch's does, and the flash-attention registry."""
import pytest
import torch
import torch.nn.functional as TF

import ember
import ember.nn.functional as F
from ember.nn.attention import SDPBackend, sdpa_kernel


def test_names_are_torchs():
    assert sorted(ember.nn.attention.__all__) == sorted(torch.nn.attention.__all__)
    assert ember.nn.attention.WARN_FOR_UNFUSED_KERNELS is torch.nn.attention.WARN_FOR_UNFUSED_KERNELS
    tb = torch.nn.attention.SDPBackend
    assert list(SDPBackend.__members__) == list(tb.__members__)
    for name, member in SDPBackend.__members__.items():
        want = tb.__members__[name]
        assert (int(member), repr(member), str(member), member.name) == \
            (int(want), repr(want), str(want), want.name)


def _sdp(lib):
    c = lib.backends.cuda
    return [c.flash_sdp_enabled(), c.mem_efficient_sdp_enabled(), c.math_sdp_enabled(),
            c.cudnn_sdp_enabled()]


BACKENDS = ["MATH", "FLASH_ATTENTION", "EFFICIENT_ATTENTION", "CUDNN_ATTENTION", "OVERRIDEABLE"]


@pytest.mark.parametrize("chosen", [[b] for b in BACKENDS] + [[], ["MATH", "CUDNN_ATTENTION"]])
def test_sdpa_kernel_runs_where_torchs_runs(chosen):
    q = torch.randn(2, 3, 5, 4)
    want_out = want_err = None
    with sdpa_kernel([getattr(SDPBackend, b) for b in chosen]):
        inside = _sdp(ember)
        try:
            got = F.scaled_dot_product_attention(*(ember.tensor(q.numpy()),) * 3)
        except RuntimeError as e:
            got = e
    with torch.nn.attention.sdpa_kernel([getattr(torch.nn.attention.SDPBackend, b) for b in chosen]):
        assert inside == _sdp(torch)
        try:
            want_out = TF.scaled_dot_product_attention(q, q, q)
        except RuntimeError as e:
            want_err = e
    if want_err is not None:
        assert isinstance(got, RuntimeError) and str(got) == str(want_err)
    else:
        assert torch.allclose(torch.from_numpy(got.numpy()), want_out, atol=1e-6)
    assert _sdp(ember) == _sdp(torch) == [True] * 4


def test_sdpa_kernel_checks_its_argument_and_keeps_priority():
    for lib in (ember, torch):
        with pytest.raises(AssertionError, match="Backend must be an instance of SDPBackend or a "
                                                 "list of SDPBackend instances, got tuple"):
            with lib.nn.attention.sdpa_kernel((lib.nn.attention.SDPBackend.MATH,)):
                pass
    from ember.backends.cuda import _sdp
    before = list(_sdp.priority)
    with sdpa_kernel([SDPBackend.MATH, SDPBackend.FLASH_ATTENTION], set_priority=True):
        assert _sdp.priority[:2] == [0, 1]
        assert ember.nn.attention._cur_sdpa_kernel_backends(with_priority=True) == \
            [SDPBackend.MATH, SDPBackend.FLASH_ATTENTION]
    assert _sdp.priority == before == torch._C._get_sdp_priority_order()


def test_deprecated_sdp_kernel_goes_through_sdpa_kernel():
    with pytest.warns(FutureWarning, match="sdp_kernel"):
        with ember.backends.cuda.sdp_kernel(enable_math=False, enable_flash=False):
            with pytest.raises(RuntimeError, match="No viable backend"):
                F.scaled_dot_product_attention(*(ember.randn(1, 2, 3),) * 3)


def test_flash_attention_registry():
    att = ember.nn.attention
    assert att.current_flash_attention_impl() is None
    handles = []

    class Handle:
        def remove(self):
            handles.append("removed")

    att.register_flash_attention_impl("Mine", register_fn=Handle)
    try:
        assert "Mine" in att.list_flash_attention_impls()
        att.activate_flash_attention_impl("Mine")
        assert att.current_flash_attention_impl() == "Mine"
        att.restore_flash_attention_impl()
        assert att.current_flash_attention_impl() is None and handles == ["removed"]
        with pytest.raises(ValueError, match="Unknown flash attention impl 'Nope'"):
            att.activate_flash_attention_impl("Nope")
    finally:
        att._registry._FLASH_ATTENTION_IMPLS.pop("Mine")
    assert att.register_flash_attention_impl.__module__ == "ember.nn.attention"


def test_nn_attention_is_the_namespace_not_the_layer_module():
    assert ember.nn.attention.__name__ == "ember.nn.attention"
    assert ember.nn.MultiheadAttention.__module__ == "ember.nn.modules.multihead_attention"
