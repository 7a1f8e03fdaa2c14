"""Sparse COO tensors against real torch: construction, conversion, printing, the sparse ops and
their gradients (values and the gradient's layout), sparse embedding gradients, the optimizers
that take them, and torch's checkpoint format."""
import io

import numpy as np
import pytest
import torch

import ember
import ember.nn.functional as EF

RNG = np.random.default_rng(0)


def both(array):
    return ember.tensor(array), torch.tensor(array)


def random_sparse_array(shape, density=0.4, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    a[rng.random(shape) > density] = 0
    return a


def dense_of(t):
    t = t.detach()
    if t.is_sparse or t.is_sparse_csr:
        t = t.to_dense()
    return t.numpy()


def assert_same_sparse(e, t, check_coalesced=True):
    """Same layout, indices, values, size (and coalesced flag) as torch's."""
    assert e.is_sparse and t.is_sparse
    assert tuple(e.shape) == tuple(t.shape)
    assert e.sparse_dim() == t.sparse_dim() and e.dense_dim() == t.dense_dim()
    assert e._nnz() == t._nnz()
    np.testing.assert_array_equal(e._indices().numpy(), t._indices().numpy())
    np.testing.assert_allclose(e._values().detach().numpy(), t._values().detach().numpy(),
                               rtol=1e-6, atol=1e-7)
    if check_coalesced:
        assert e.is_coalesced() == t.is_coalesced()


def assert_same_grad(e, t):
    """Gradients equal as dense arrays, and in the same layout."""
    assert (e is None) == (t is None)
    if e is None:
        return
    assert e.is_sparse == t.is_sparse, (e.layout, t.layout)
    np.testing.assert_allclose(dense_of(e), dense_of(t), rtol=1e-6, atol=1e-7)


# -- construction and conversion ----------------------------------------------------------------

UNCOALESCED = (np.array([[0, 2, 0, 1, 2], [1, 0, 1, 3, 0]]), RNG.standard_normal(5))


@pytest.mark.parametrize("size", [None, (3, 4), (5, 6)])
def test_sparse_coo_tensor_matches_torch(size):
    indices, values = UNCOALESCED
    args = () if size is None else (size,)
    e = ember.sparse_coo_tensor(ember.tensor(indices), ember.tensor(values), *args)
    t = torch.sparse_coo_tensor(torch.tensor(indices), torch.tensor(values), *args)
    assert_same_sparse(e, t)
    assert e.layout is ember.sparse_coo and e.is_sparse and e.dtype == ember.float64
    np.testing.assert_array_equal(dense_of(e), dense_of(t))
    assert_same_sparse(e.coalesce(), t.coalesce())


def test_sparse_coo_tensor_from_lists_dtype_and_requires_grad():
    e = ember.sparse_coo_tensor([[0, 1], [2, 0]], [1, 2], (2, 3), dtype=ember.float32,
                                requires_grad=True)
    t = torch.sparse_coo_tensor([[0, 1], [2, 0]], [1, 2], (2, 3), dtype=torch.float32,
                                requires_grad=True)
    assert_same_sparse(e, t)
    assert e.dtype == ember.float32 and e.requires_grad and e.is_leaf
    assert e.device == ember.device("cpu") and e.size() == ember.Size([2, 3])


def test_hybrid_sparse_coo_tensor():
    values = RNG.standard_normal((3, 2))
    indices = np.array([[0, 1, 1]])
    e = ember.sparse_coo_tensor(ember.tensor(indices), ember.tensor(values))
    t = torch.sparse_coo_tensor(torch.tensor(indices), torch.tensor(values))
    assert_same_sparse(e, t)
    np.testing.assert_allclose(dense_of(e), dense_of(t))


def test_sparse_coo_tensor_bad_input_raises_torch_errors():
    for lib in (ember, torch):
        with pytest.raises(RuntimeError, match="nnz"):
            lib.sparse_coo_tensor(lib.tensor([[0, 1]]), lib.tensor([1.0, 2.0, 3.0]), (3,))
        converted = lib.sparse_coo_tensor(lib.tensor([[0.0, 1.0]]), lib.tensor([1.0, 2.0]), (3,))
        assert converted._indices().dtype == lib.int64
        with pytest.raises(RuntimeError, match="inconsistent"):
            lib.sparse_coo_tensor(lib.tensor([[5]]), lib.tensor([1.0]), (3,), check_invariants=True)


@pytest.mark.parametrize("shape,sparse_dim", [((4, 5), None), ((3, 4, 2), 2), ((3, 4, 2), 1),
                                              ((6,), None), ((3, 4, 2), None)])
def test_to_sparse_matches_torch(shape, sparse_dim):
    e, t = both(random_sparse_array(shape))
    args = () if sparse_dim is None else (sparse_dim,)
    es, ts = e.to_sparse(*args), t.to_sparse(*args)
    assert_same_sparse(es, ts)
    np.testing.assert_array_equal(dense_of(es), t.numpy())
    assert_same_sparse(e.to_sparse_coo(), t.to_sparse_coo())


def test_coalesce_sums_repeats_like_torch():
    rng = np.random.default_rng(3)
    indices = rng.integers(0, 3, (2, 12))
    values = rng.standard_normal((12, 2))
    e = ember.sparse_coo_tensor(ember.tensor(indices), ember.tensor(values), (3, 3, 2))
    t = torch.sparse_coo_tensor(torch.tensor(indices), torch.tensor(values), (3, 3, 2))
    assert not e.is_coalesced()
    assert_same_sparse(e.coalesce(), t.coalesce())
    c = e.coalesce()
    assert c.coalesce() is c
    np.testing.assert_array_equal(c.indices().numpy(), t.coalesce().indices().numpy())
    np.testing.assert_allclose(c.values().numpy(), t.coalesce().values().numpy())


def test_indices_and_values_of_uncoalesced_raise_torch_error():
    indices, values = UNCOALESCED
    for lib in (ember, torch):
        s = lib.sparse_coo_tensor(lib.tensor(indices), lib.tensor(values))
        with pytest.raises(RuntimeError, match="uncoalesced"):
            s.values()
        with pytest.raises(RuntimeError, match="uncoalesced"):
            s.indices()
        assert s._values().shape == (5,) and s._indices().shape == (2, 5)


def test_accessors_on_dense_tensors():
    e, t = both(np.ones((2, 3)))
    assert e.layout is ember.strided and not e.is_sparse
    assert e.dense_dim() == t.dense_dim() and e.sparse_dim() == t.sparse_dim()
    assert e.to_dense() is e
    for x in (e, t):
        with pytest.raises(RuntimeError, match="expected sparse coordinate tensor layout"):
            x.is_coalesced()


# -- printing -----------------------------------------------------------------------------------

def _repr_cases(lib):
    s = lib.tensor(random_sparse_array((3, 4), seed=1)).to_sparse()
    yield s
    yield s.detach().requires_grad_()
    yield s.float() * 2
    yield lib.tensor([[1, 0], [0, 2]]).to_sparse()
    yield lib.sparse_coo_tensor(lib.zeros(2, 0, dtype=lib.int64), lib.zeros(0), (2, 3))
    yield lib.tensor(random_sparse_array((3, 2, 2), seed=2)).to_sparse(1)
    yield lib.tensor(random_sparse_array((9, 9), 0.9, seed=3)).to_sparse()


def test_repr_matches_torch():
    for e, t in zip(_repr_cases(ember), _repr_cases(torch)):
        assert repr(e).replace("ember.", "torch.") == repr(t)


# -- ops and their gradients -----------------------------------------------------------------------

A = random_sparse_array((3, 4), seed=4)
B = np.random.default_rng(5).standard_normal((4, 2))
X = np.random.default_rng(6).standard_normal((3, 4))
H = random_sparse_array((3, 4, 2), density=0.5, seed=7)

OPS = {
    "neg": lambda lib, s, b, x: -s,
    "mul_scalar": lambda lib, s, b, x: s * 2.5,
    "div_scalar": lambda lib, s, b, x: s / 2,
    "add_sparse": lambda lib, s, b, x: s + s * 3,
    "sub_sparse": lambda lib, s, b, x: s - s * 3,
    "mul_sparse": lambda lib, s, b, x: s * s,
    "mul_dense": lambda lib, s, b, x: s * x,
    "dense_add_sparse": lambda lib, s, b, x: x + s,
    "t": lambda lib, s, b, x: s.t(),
    "transpose": lambda lib, s, b, x: s.transpose(0, 1),
    "clone": lambda lib, s, b, x: s.clone(),
    "mm": lambda lib, s, b, x: lib.mm(s, b),
    "matmul": lambda lib, s, b, x: lib.matmul(s, b),
    "matmul_operator": lambda lib, s, b, x: s @ b,
    "matmul_vector": lambda lib, s, b, x: s @ b[:, 0],
    "sparse_mm": lambda lib, s, b, x: lib.sparse.mm(s, b),
    "sparse_addmm": lambda lib, s, b, x: lib.sparse.addmm(x[:, :2], s, b, beta=0.5, alpha=2.0),
    "sparse_sum": lambda lib, s, b, x: lib.sparse.sum(s),
    "sum": lambda lib, s, b, x: s.sum(),
    "sparse_sum_dim1": lambda lib, s, b, x: lib.sparse.sum(s, 1),
    "sparse_sum_dim0": lambda lib, s, b, x: lib.sparse.sum(s, 0),
    "sparse_sum_all_dims": lambda lib, s, b, x: lib.sparse.sum(s, (0, 1)),
    "sparse_softmax": lambda lib, s, b, x: lib.sparse.softmax(s, 1),
    "sparse_softmax_dim0": lambda lib, s, b, x: lib.sparse.softmax(s, 0),
    "sparse_log_softmax": lambda lib, s, b, x: lib.sparse.log_softmax(s, 0),
    "sparse_log_softmax_neg_dim": lambda lib, s, b, x: lib.sparse.log_softmax(s, -1),
    "values": lambda lib, s, b, x: s.values() * 3,
    "to_dense": lambda lib, s, b, x: s.to_dense() * x,
}


def _run(lib, name, source=A):
    s = lib.tensor(source).to_sparse().requires_grad_()
    b = lib.tensor(B, requires_grad=True)
    x = lib.tensor(X, requires_grad=True)
    out = OPS[name](lib, s, b, x)
    dense = out.to_dense() if out.is_sparse else out
    weights = lib.tensor(np.random.default_rng(8).standard_normal(tuple(dense.shape)))
    (dense * weights).sum().backward()
    return out, (s.grad, b.grad, x.grad)


@pytest.mark.parametrize("name", sorted(OPS))
def test_sparse_op_values_and_gradients_match_torch(name):
    e_out, e_grads = _run(ember, name)
    t_out, t_grads = _run(torch, name)
    assert e_out.is_sparse == t_out.is_sparse
    assert type(e_out.grad_fn).__name__ == type(t_out.grad_fn).__name__
    np.testing.assert_allclose(dense_of(e_out), dense_of(t_out), rtol=1e-6, atol=1e-7)
    if e_out.is_sparse:
        assert e_out._nnz() == t_out._nnz()
    for e, t in zip(e_grads, t_grads):
        assert_same_grad(e, t)


@pytest.mark.parametrize("name,dims", [("sum", (1, 2)), ("sum", (2,)), ("sum", (0, 2)),
                                       ("softmax", 2), ("softmax", 1), ("log_softmax", 0)])
def test_hybrid_sparse_reductions_match_torch(name, dims):
    results = []
    for lib in (ember, torch):
        s = lib.tensor(H).to_sparse(2).requires_grad_()
        out = getattr(lib.sparse, name)(s, dims)
        dense = out.to_dense() if out.is_sparse else out
        weights = lib.tensor(np.random.default_rng(9).standard_normal(tuple(dense.shape)))
        (dense * weights).sum().backward()
        results.append((out, s.grad))
    (e_out, e_grad), (t_out, t_grad) = results
    np.testing.assert_allclose(dense_of(e_out), dense_of(t_out), rtol=1e-6, atol=1e-7)
    assert e_out.is_sparse == t_out.is_sparse
    assert_same_grad(e_grad, t_grad)


def test_sparse_mm_gradient_is_sparse_and_uncoalesced_as_torch():
    (_, e_grads), (_, t_grads) = _run(ember, "sparse_mm"), _run(torch, "sparse_mm")
    assert_same_sparse(e_grads[0], t_grads[0])
    (_, e_grads), (_, t_grads) = _run(ember, "mm"), _run(torch, "mm")
    assert not e_grads[0].is_sparse and not t_grads[0].is_sparse


def test_sparse_coo_tensor_values_gradient():
    indices, values = UNCOALESCED
    grads = []
    for lib in (ember, torch):
        v = lib.tensor(values, requires_grad=True)
        s = lib.sparse_coo_tensor(lib.tensor(indices), v, (3, 4))
        assert type(s.grad_fn).__name__ == "SparseCooTensorWithDimsAndTensorsBackward0"
        (s.coalesce().to_dense() ** 2 * lib.tensor(X)).sum().backward()
        grads.append(v.grad)
    np.testing.assert_allclose(grads[0].numpy(), grads[1].numpy())


def test_to_sparse_gradient_is_dense():
    grads = []
    for lib in (ember, torch):
        d = lib.tensor(A, requires_grad=True)
        (d.to_sparse() * 2).to_dense().sum().backward()
        grads.append(d.grad)
    assert not grads[0].is_sparse
    np.testing.assert_allclose(grads[0].numpy(), grads[1].numpy())


def test_detach_clone_requires_grad():
    e = ember.tensor(A).to_sparse()
    assert not e.requires_grad
    assert e.requires_grad_() is e and e.requires_grad
    d = e.detach()
    assert d.is_sparse and not d.requires_grad and d.grad_fn is None
    c = e.clone()
    assert c.is_sparse and type(c.grad_fn).__name__ == "CloneBackward0"
    np.testing.assert_array_equal(dense_of(c), A)


def test_dense_ops_on_sparse_raise_torch_errors():
    for lib in (ember, torch):
        s = lib.tensor(A).to_sparse()
        with pytest.raises(RuntimeError, match=r"add\(sparse, dense\) is not supported"):
            s + lib.tensor(X)
        with pytest.raises(NotImplementedError, match="Could not run 'aten::exp' with arguments "
                                                      "from the 'SparseCPU' backend"):
            s.exp()
        with pytest.raises(NotImplementedError, match="SparseCPU"):
            s.view(4, 3)


# -- sparse embedding gradients ---------------------------------------------------------------

INDICES = np.array([[1, 2, 4], [4, 3, 1]])


@pytest.mark.parametrize("kwargs", [{}, {"padding_idx": 1}, {"padding_idx": -2}])
def test_embedding_sparse_gradient_matches_torch(kwargs):
    weight = np.random.default_rng(10).standard_normal((6, 3))
    grads = []
    for lib, F in ((ember, EF), (torch, torch.nn.functional)):
        w = lib.tensor(weight, requires_grad=True)
        out = F.embedding(lib.tensor(INDICES), w, sparse=True, **kwargs)
        (out * lib.tensor(np.arange(18.0).reshape(2, 3, 3))).sum().backward()
        grads.append(w.grad)
    assert_same_sparse(grads[0], grads[1])
    assert not grads[0].is_coalesced()


def test_sparse_embedding_refusals_match_torch():
    for lib in (ember, torch):
        w = lib.ones(5, 3, requires_grad=True)
        out = lib.nn.functional.embedding(lib.tensor([1, 2]), w, sparse=True, scale_grad_by_freq=True)
        with pytest.raises(RuntimeError, match="scale_grad_by_freq not supported with sparse gradients"):
            out.sum().backward()
        with pytest.raises(ValueError, match="max mode does not support sparse weights"):
            lib.nn.functional.embedding_bag(lib.tensor([[1, 2]]), w, mode="max", sparse=True)


@pytest.mark.parametrize("mode", ["sum", "mean"])
def test_embedding_bag_sparse_gradient_matches_torch(mode):
    weight = np.random.default_rng(11).standard_normal((6, 3))
    grads = []
    for lib in (ember, torch):
        bag = lib.nn.EmbeddingBag(6, 3, mode=mode, sparse=True)
        with lib.no_grad():
            bag.weight.copy_(lib.tensor(weight))
        out = bag(lib.tensor([1, 2, 4, 4, 3, 1, 0]), lib.tensor([0, 3, 5]))
        (out * lib.tensor(np.arange(9.0).reshape(3, 3))).sum().backward()
        grads.append(bag.weight.grad)
    assert grads[0].is_sparse and grads[1].is_sparse
    np.testing.assert_allclose(dense_of(grads[0]), dense_of(grads[1]), rtol=1e-6, atol=1e-7)


def test_embedding_module_sparse_gradients_accumulate():
    weight = np.random.default_rng(12).standard_normal((6, 3)).astype(np.float32)
    grads = []
    for lib in (ember, torch):
        emb = lib.nn.Embedding(6, 3, sparse=True)
        with lib.no_grad():
            emb.weight.copy_(lib.tensor(weight))
        assert "sparse=True" in repr(emb)
        emb(lib.tensor(INDICES)).sum().backward()
        emb(lib.tensor([[0, 1]])).pow(2).sum().backward()
        grads.append(emb.weight.grad)
    assert grads[0].is_sparse
    np.testing.assert_allclose(dense_of(grads[0]), dense_of(grads[1]), rtol=1e-6)


# -- optimizers -------------------------------------------------------------------------------------

class _TinyModel:
    def __init__(self, lib, weight, linear):
        self.lib = lib
        self.emb = lib.nn.Embedding(8, 4, sparse=True)
        self.fc = lib.nn.Linear(4, 1)
        with lib.no_grad():
            self.emb.weight.copy_(lib.tensor(weight))
            self.fc.weight.copy_(lib.tensor(linear))
            self.fc.bias.zero_()

    def loss(self, batch):
        return self.fc(self.emb(self.lib.tensor(batch)).mean(1)).pow(2).mean()


OPTIMIZERS = [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.9}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "dampening": 0.3}),
    ("SGD", {"lr": 0.1, "maximize": True}),
    ("Adagrad", {"lr": 0.1}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.1, "initial_accumulator_value": 0.2}),
    ("Adagrad", {"lr": 0.1, "maximize": True}),
    ("SparseAdam", {"lr": 0.05}),
    ("SparseAdam", {"lr": 0.05, "betas": (0.8, 0.9), "maximize": True}),
]


@pytest.mark.parametrize("name,kwargs", OPTIMIZERS)
def test_training_with_sparse_gradients_matches_torch(name, kwargs):
    rng = np.random.default_rng(13)
    weight = rng.standard_normal((8, 4)).astype(np.float32)
    linear = rng.standard_normal((1, 4)).astype(np.float32)
    batches = [rng.integers(0, 8, (3, 2)) for _ in range(4)]
    params = []
    for lib in (ember, torch):
        model = _TinyModel(lib, weight, linear)
        sparse_opt = getattr(lib.optim, name)(model.emb.parameters(), **kwargs)
        dense_opt = lib.optim.SGD(model.fc.parameters(), lr=0.1)
        for batch in batches:
            sparse_opt.zero_grad()
            dense_opt.zero_grad()
            model.loss(batch).backward()
            assert model.emb.weight.grad.is_sparse
            sparse_opt.step()
            dense_opt.step()
        params.append((model.emb.weight.detach().numpy().copy(), model.fc.weight.detach().numpy().copy()))
    for e, t in zip(*params):
        np.testing.assert_allclose(e, t, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name,kwargs,message", [
    ("Adam", {}, "Adam does not support sparse gradients, please consider SparseAdam instead"),
    ("AdamW", {}, "Adam does not support sparse gradients, please consider SparseAdam instead"),
    ("RMSprop", {}, "RMSprop does not support sparse gradients"),
    ("Adadelta", {}, "Adadelta does not support sparse gradients"),
    ("Adamax", {}, "Adamax does not support sparse gradients"),
    ("NAdam", {}, "NAdam does not support sparse gradients"),
    ("RAdam", {}, "RAdam does not support sparse gradients"),
    ("Rprop", {}, "Rprop does not support sparse gradients"),
    ("ASGD", {}, "ASGD does not support sparse gradients"),
    ("SGD", {"weight_decay": 0.1}, r"add\(sparse, dense\) is not supported"),
    ("Adagrad", {"weight_decay": 0.1}, "weight_decay option is not compatible with sparse gradients"),
])
def test_optimizers_refuse_sparse_gradients_as_torch(name, kwargs, message):
    for lib in (ember, torch):
        w = lib.nn.Parameter(lib.ones(5, 3))
        lib.nn.functional.embedding(lib.tensor([1, 2, 1]), w, sparse=True).sum().backward()
        opt = getattr(lib.optim, name)([w], lr=0.1, **kwargs)
        with pytest.raises(RuntimeError, match=message):
            opt.step()
        assert (w.detach() == 1).all()


def test_sparse_adam_refuses_dense_gradients_and_sparse_params():
    for lib in (ember, torch):
        w = lib.nn.Parameter(lib.ones(2, 2))
        (w * 2).sum().backward()
        with pytest.raises(RuntimeError, match="SparseAdam does not support dense gradients"):
            lib.optim.SparseAdam([w]).step()
        with pytest.raises(ValueError, match="Invalid learning rate"):
            lib.optim.SparseAdam([w], lr=0.0)
        with pytest.raises(ValueError, match="SparseAdam requires dense parameter tensors"):
            lib.optim.SparseAdam([lib.ones(2, 2).to_sparse()])


# -- checkpoints ----------------------------------------------------------------------------------

def test_torch_loads_ember_sparse_tensors():
    s = ember.tensor(A).to_sparse()
    indices, values = UNCOALESCED
    u = ember.sparse_coo_tensor(ember.tensor(indices), ember.tensor(values), (3, 4))
    h = ember.tensor(H).to_sparse(2)
    buffer = io.BytesIO()
    ember.save({"s": s, "u": u, "h": h}, buffer)
    buffer.seek(0)
    loaded = torch.load(buffer)
    for key, original in (("s", s), ("u", u), ("h", h)):
        assert_same_sparse(original, loaded[key])


def test_ember_loads_torch_sparse_tensors():
    indices, values = UNCOALESCED
    saved = {"s": torch.tensor(A).to_sparse(),
             "u": torch.sparse_coo_tensor(torch.tensor(indices), torch.tensor(values), (3, 4)),
             "h": torch.tensor(H).to_sparse(2)}
    buffer = io.BytesIO()
    torch.save(saved, buffer)
    buffer.seek(0)
    loaded = ember.load(buffer)
    for key, original in saved.items():
        assert_same_sparse(loaded[key], original)


# -- in place ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["mul_", "add_", "sub_", "zero_", "div_", "dense_add_", "dense_sub_"])
def test_in_place_ops_match_torch(name):
    results = []
    for lib in (ember, torch):
        s = lib.tensor(A).to_sparse()
        x = lib.tensor(X)
        out = {"mul_": lambda: s.mul_(2.0), "add_": lambda: s.add_(s * 2, alpha=0.5),
               "sub_": lambda: s.sub_(s * 3), "zero_": lambda: s.zero_(), "div_": lambda: s.div_(4),
               "dense_add_": lambda: x.add_(s, alpha=2), "dense_sub_": lambda: x.sub_(s)}[name]()
        assert out is (x if name.startswith("dense") else s)
        results.append(out)
    assert results[0].is_sparse == results[1].is_sparse
    np.testing.assert_allclose(dense_of(results[0]), dense_of(results[1]))
    if results[0].is_sparse:
        assert results[0]._nnz() == results[1]._nnz()


def test_numpy_of_sparse_raises_torch_error():
    for lib in (ember, torch):
        with pytest.raises(TypeError, match="can't convert Sparse layout tensor to numpy"):
            lib.tensor(A).to_sparse().numpy()


# -- CSR ---------------------------------------------------------------------------------------------

def assert_same_csr(e, t):
    assert e.layout is ember.sparse_csr and t.layout is torch.sparse_csr
    assert e.is_sparse_csr and not e.is_sparse
    assert tuple(e.shape) == tuple(t.shape) and e._nnz() == t._nnz()
    np.testing.assert_array_equal(e.crow_indices().numpy(), t.crow_indices().numpy())
    np.testing.assert_array_equal(e.col_indices().numpy(), t.col_indices().numpy())
    np.testing.assert_allclose(e.values().detach().numpy(), t.values().detach().numpy())


@pytest.mark.parametrize("shape", [(4, 5), (1, 3), (5, 1)])
def test_to_sparse_csr_matches_torch(shape):
    e, t = both(random_sparse_array(shape, seed=14))
    assert_same_csr(e.to_sparse_csr(), t.to_sparse_csr())
    assert_same_csr(e.to_sparse(layout=ember.sparse_csr), t.to_sparse(layout=torch.sparse_csr))
    assert_same_csr(e.to_sparse().to_sparse_csr(), t.to_sparse().to_sparse_csr())
    np.testing.assert_array_equal(e.to_sparse_csr().to_dense().numpy(), t.numpy())
    assert_same_sparse(e.to_sparse_csr().to_sparse(), t.to_sparse_csr().to_sparse())
    c = e.to_sparse_csr()
    assert c.to_sparse_csr() is c


def test_sparse_csr_tensor_matches_torch():
    crow, col, values = [0, 2, 2, 3], [0, 3, 1], [1.0, 2.0, 3.0]
    for size in (None, (3, 5)):
        args = () if size is None else (size,)
        e = ember.sparse_csr_tensor(ember.tensor(crow), ember.tensor(col), ember.tensor(values), *args)
        t = torch.sparse_csr_tensor(torch.tensor(crow), torch.tensor(col), torch.tensor(values), *args)
        assert_same_csr(e, t)
        np.testing.assert_array_equal(e.to_dense().numpy(), t.to_dense().numpy())
        assert repr(e).replace("ember.", "torch.") == repr(t)


def test_csr_repr_matches_torch():
    for e, t in ((ember.tensor(A).to_sparse_csr(), torch.tensor(A).to_sparse_csr()),
                 (ember.tensor(A).float().requires_grad_().to_sparse_csr(),
                  torch.tensor(A).float().requires_grad_().to_sparse_csr())):
        assert repr(e).replace("ember.", "torch.") == repr(t)


@pytest.mark.parametrize("name", ["mm", "matmul", "matmul_operator", "matmul_vector", "neg",
                                  "mul_scalar", "add_sparse"])
def test_csr_ops_and_gradients_match_torch(name):
    results = []
    for lib in (ember, torch):
        c = lib.tensor(A).to_sparse_csr()
        b = lib.tensor(B, requires_grad=True)
        x = lib.tensor(X, requires_grad=True)
        out = OPS[name](lib, c, b, x)
        assert out.layout == (lib.strided if name.startswith(("mm", "matmul")) else lib.sparse_csr)
        dense = out.to_dense() if out.layout != lib.strided else out
        (dense * lib.tensor(np.random.default_rng(15).standard_normal(tuple(dense.shape)))).sum().backward() \
            if dense.requires_grad else None
        results.append((dense, b.grad))
    (e_out, e_grad), (t_out, t_grad) = results
    np.testing.assert_allclose(e_out.detach().numpy(), t_out.detach().numpy(), rtol=1e-6, atol=1e-7)
    assert_same_grad(e_grad, t_grad)


def test_csr_gradients_of_dense_input_and_of_csr_leaf():
    grads = []
    for lib in (ember, torch):
        d = lib.tensor(A, requires_grad=True)
        c = d.to_sparse_csr()
        assert type(c.grad_fn).__name__ == "ToSparseCsrBackward0"
        (c @ lib.tensor(B)).sum().backward()
        leaf = lib.tensor(A).to_sparse_csr().requires_grad_()
        (leaf @ lib.tensor(B)).pow(2).sum().backward()
        grads.append((d.grad, leaf.grad))
    for e, t in zip(*grads):
        assert_same_grad(e, t)


def test_csr_unsupported_ops_raise_torch_error_and_checkpoints_round_trip():
    for lib in (ember, torch):
        with pytest.raises(RuntimeError, match="unsupported tensor layout: SparseCsr"):
            lib.tensor(A).to_sparse_csr().exp()
    e = ember.tensor(A).to_sparse_csr()
    buffer = io.BytesIO()
    ember.save({"c": e}, buffer)
    buffer.seek(0)
    assert_same_csr(e, torch.load(buffer)["c"])
    buffer = io.BytesIO()
    torch.save({"c": torch.tensor(X).to_sparse_csr()}, buffer)
    buffer.seek(0)
    assert_same_csr(ember.load(buffer)["c"], torch.tensor(X).to_sparse_csr())


def test_csr_to_dense_gradient_is_csr_as_torch():
    grads = []
    for lib in (ember, torch):
        c = lib.tensor(A).to_sparse_csr().requires_grad_()
        (c.to_dense() * lib.tensor(X)).sum().backward()
        first = c.grad
        c.grad = None
        (c * 2).to_dense().sum().backward()
        grads.append((first, c.grad))
    for e, t in zip(*grads):
        assert e.layout is ember.sparse_csr and t.layout is torch.sparse_csr
        np.testing.assert_allclose(e.to_dense().numpy(), t.to_dense().numpy())


# -- zero-preserving functions ------------------------------------------------------------------------

UNIT = np.array([[0.0, 0.5, 0.0], [0.2, 0.0, -0.3]])


@pytest.mark.parametrize("name,differentiable", [
    ("abs", True), ("sign", True), ("square", True), ("floor", True), ("ceil", True), ("trunc", True),
    ("round", True), ("deg2rad", True), ("rad2deg", True), ("neg", True), ("sin", False),
    ("tan", False), ("sqrt", False), ("tanh", False), ("sinh", False), ("asin", False),
    ("atan", False), ("expm1", False), ("log1p", False), ("asinh", False), ("atanh", False)])
def test_zero_preserving_functions_match_torch(name, differentiable):
    results = []
    for lib in (ember, torch):
        s = lib.tensor(UNIT).to_sparse().requires_grad_()
        out = getattr(s, name)()
        assert out.is_sparse
        if differentiable:
            (out.to_dense() * lib.tensor(X[:2, :3])).sum().backward()
        results.append((out, s.grad))
    (e_out, e_grad), (t_out, t_grad) = results
    assert_same_sparse(e_out, t_out)
    assert_same_grad(e_grad, t_grad)


@pytest.mark.parametrize("exponent", [2, 3, 1.5])
def test_pow_of_sparse_matches_torch(exponent):
    results = []
    for lib in (ember, torch):
        s = lib.tensor(UNIT).to_sparse().requires_grad_()
        out = s.pow(exponent)
        out.to_dense().sum().backward()
        results.append((out, s.grad))
    assert_same_sparse(results[0][0], results[1][0])
    assert_same_grad(results[0][1], results[1][1])


# -- sparse @ sparse ---------------------------------------------------------------------------------

@pytest.mark.parametrize("how", ["sparse.mm", "mm", "matmul", "operator"])
def test_sparse_sparse_product_and_gradients_match_torch(how):
    b = random_sparse_array((4, 3), density=0.5, seed=16)
    weights = np.random.default_rng(17).standard_normal((3, 3))
    results = []
    for lib in (ember, torch):
        s1 = lib.tensor(A).to_sparse().requires_grad_()
        s2 = lib.tensor(b).to_sparse().requires_grad_()
        out = {"sparse.mm": lambda: lib.sparse.mm(s1, s2), "mm": lambda: lib.mm(s1, s2),
               "matmul": lambda: lib.matmul(s1, s2), "operator": lambda: s1 @ s2}[how]()
        (out.to_dense() * lib.tensor(weights)).sum().backward()
        results.append((out, s1.grad, s2.grad))
    (e_out, *e_grads), (t_out, *t_grads) = results
    assert type(e_out.grad_fn).__name__ == type(t_out.grad_fn).__name__
    assert_same_sparse(e_out, t_out)
    for e, t in zip(e_grads, t_grads):
        assert_same_grad(e, t)
        assert e._nnz() == t._nnz()


def test_pickle_and_deepcopy_keep_sparse_tensors():
    import copy
    import pickle
    for original in (ember.tensor(A).to_sparse().requires_grad_(), ember.tensor(A).to_sparse_csr(),
                     ember.sparse_coo_tensor(ember.tensor(UNCOALESCED[0]), ember.tensor(UNCOALESCED[1]))):
        for clone in (pickle.loads(pickle.dumps(original)), copy.deepcopy(original)):
            assert clone.layout is original.layout and clone.requires_grad == original.requires_grad
            np.testing.assert_array_equal(dense_of(clone), dense_of(original))
            if original.is_sparse:
                assert clone.is_coalesced() == original.is_coalesced()


def test_embedding_bag_per_sample_weights_sparse_gradient_matches_torch():
    weight = np.random.default_rng(18).standard_normal((6, 3))
    grads = []
    for lib in (ember, torch):
        w = lib.tensor(weight, requires_grad=True)
        psw = lib.tensor(np.linspace(0.5, 2.0, 7), requires_grad=True)
        out = lib.nn.functional.embedding_bag(lib.tensor([1, 2, 4, 4, 3, 1, 0]), w, lib.tensor([0, 3, 5]),
                                              mode="sum", sparse=True, per_sample_weights=psw)
        (out * lib.tensor(np.arange(9.0).reshape(3, 3))).sum().backward()
        grads.append((w.grad, psw.grad))
    for e, t in zip(*grads):
        assert_same_grad(e, t)


@pytest.mark.parametrize("dims", [1, 0, (0, 1), -1])
def test_tensor_sum_over_dims_of_sparse_matches_torch(dims):
    results = []
    for lib in (ember, torch):
        s = lib.tensor(H).to_sparse(2)
        results.append(s.sum(dims))
    assert results[0].is_sparse == results[1].is_sparse
    np.testing.assert_allclose(dense_of(results[0]), dense_of(results[1]))
    if results[0].is_sparse:
        assert_same_sparse(*results)


def test_check_sparse_tensor_invariants_as_torch():
    for lib in (ember, torch):
        checks = lib.sparse.check_sparse_tensor_invariants
        assert not checks.is_enabled()
        lib.sparse_coo_tensor(lib.tensor([[5]]), lib.tensor([1.0]), (3,))   # unchecked by default
        with checks():
            assert checks.is_enabled()
            with pytest.raises(RuntimeError, match="size is inconsistent with indices"):
                lib.sparse_coo_tensor(lib.tensor([[5]]), lib.tensor([1.0]), (3,))
            with pytest.raises(RuntimeError, match="col_indices"):
                lib.sparse_csr_tensor(lib.tensor([0, 1]), lib.tensor([7]), lib.tensor([1.0]), (1, 3))
            lib.sparse_coo_tensor(lib.tensor([[5]]), lib.tensor([1.0]), (3,), check_invariants=False)
        assert not checks.is_enabled()
        manager = checks()
        with manager:
            with pytest.raises(RuntimeError, match="already activated"):
                manager.__enter__()
        checks.enable()
        try:
            assert checks.is_enabled()
            assert checks(False)(checks.is_enabled)() is False
        finally:
            checks.disable()


def test_relu_of_sparse_matches_torch_and_comparisons_are_not_silent():
    e = ember.relu(ember.tensor(UNIT).to_sparse())
    assert_same_sparse(e, torch.relu(torch.tensor(UNIT).to_sparse()))
    with pytest.raises(NotImplementedError, match="SparseCPU"):
        _ = ember.tensor(UNIT).to_sparse() == ember.tensor(UNIT).to_sparse()


@pytest.mark.parametrize("key", [0, 2, -1, (slice(None), 1), (slice(None), slice(None), 1)])
def test_integer_indexing_of_sparse_matches_torch(key):
    e = ember.tensor(H).to_sparse(2)[key]
    t = torch.tensor(H).to_sparse(2)[key]
    assert_same_sparse(e, t)
    assert_same_sparse(ember.tensor(H).to_sparse(2).select(1, 3), torch.tensor(H).to_sparse(2).select(1, 3))


def test_bmm_of_sparse_and_dense_matches_torch():
    batch = random_sparse_array((2, 3, 4), seed=19)
    right = np.random.default_rng(20).standard_normal((2, 4, 2))
    results = []
    for lib in (ember, torch):
        s = lib.tensor(batch).to_sparse().requires_grad_()
        m = lib.tensor(right, requires_grad=True)
        out = lib.bmm(s, m)
        (out * lib.tensor(np.arange(12.0).reshape(2, 3, 2))).sum().backward()
        results.append((out, s.grad, m.grad))
    (e_out, *e_grads), (t_out, *t_grads) = results
    assert type(e_out.grad_fn).__name__ == type(t_out.grad_fn).__name__ == "BmmBackward0"
    np.testing.assert_allclose(e_out.detach().numpy(), t_out.detach().numpy(), rtol=1e-6, atol=1e-7)
    for e, t in zip(e_grads, t_grads):
        assert_same_grad(e, t)


def test_sparse_coo_tensor_with_dtype_keeps_gradient_and_refuses_other_devices():
    grads = []
    for lib in (ember, torch):
        v = lib.tensor([1.0, 2.0], requires_grad=True)
        s = lib.sparse_coo_tensor(lib.tensor([[0, 2]]), v, (3,), dtype=lib.float64)
        assert s.dtype == lib.float64 and s.requires_grad
        (s.to_dense() * lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)).sum().backward()
        grads.append(v.grad)
    np.testing.assert_allclose(grads[0].numpy(), grads[1].numpy())
    with pytest.raises(NotImplementedError, match="CPU"):
        ember.sparse_coo_tensor([[0]], [1.0], (2,), device="meta")
