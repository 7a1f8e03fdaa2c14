"""``ember.accelerator`` with a GPU: ember.cuda's answers, on NumPy posing as CuPy."""
import ember


def test_the_accelerator_is_cuda(fake_cuda):
    acc = ember.accelerator
    assert acc.is_available() is True
    assert acc.current_accelerator() == acc.current_accelerator(check_available=True) == ember.device("cuda")
    assert acc.device_count() == ember.cuda.device_count() == 1
    assert acc.current_device_index() == ember.cuda.current_device() == 0
    acc.set_device_index(0)
    acc.set_device_index("cuda:0")
    acc.synchronize()
    acc.synchronize(0)
    with acc.device_index(0):
        assert acc.current_device_index() == 0
    assert ember.zeros(2, device=acc.current_accelerator()).device.type == "cuda"


def test_the_default_device_can_be_cuda(fake_cuda):
    with ember.device("cuda"):
        assert ember.get_default_device() == ember.device("cuda", 0)
        for t in (ember.zeros(2), ember.tensor([1.0]), ember.arange(3), ember.randn(2),
                  ember.nn.Linear(2, 2).weight):
            assert t.device == ember.device("cuda", 0)
        assert ember.zeros_like(ember.zeros(2, device="cpu")).device.type == "cpu"
    assert ember.zeros(2).device.type == "cpu"


def test_memory_streams_and_capability_are_cudas(fake_cuda):
    acc = ember.accelerator
    x = ember.zeros(256, device="cuda")
    assert acc.memory_allocated() == ember.cuda.memory_allocated() >= x.nbytes
    assert acc.max_memory_allocated(0) >= acc.memory_allocated(0)
    assert acc.memory_reserved() >= acc.memory_allocated()
    assert acc.max_memory_reserved("cuda:0") >= acc.memory_reserved()
    stats = acc.memory_stats()
    assert list(stats) == sorted(stats) and stats["allocated_bytes.all.current"] == acc.memory_allocated()
    acc.reset_peak_memory_stats()
    acc.reset_accumulated_memory_stats()
    acc.empty_cache()
    acc.empty_host_cache()
    assert acc.current_stream() == ember.cuda.current_stream()
    stream = ember.cuda.Stream()
    acc.set_stream(stream)
    try:
        assert acc.current_stream() == stream
    finally:
        acc.set_stream(ember.cuda.default_stream())
    assert ember.float32 in acc.get_device_capability()["supported_dtypes"]
    del x
