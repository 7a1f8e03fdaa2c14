"""The benchmark models, each written once against a library argument ``lib`` (``ember`` or
``torch``), so the same code builds an ember model and a torch model.

A model function ``mlp(lib, batch=128, seed=0)`` returns a :class:`Workload`: the modules, a
fixed random batch (the same NumPy arrays for both libraries) and ``step()``, one training
iteration (forward, backward, optimizer step) returning the loss tensors it computed before
updating. Copy one workload's weights into another with :func:`copy_weights` so that both
libraries start from the same parameters.
"""
import numpy as np

SEED = 0


class Workload:
    """One model's training iteration on one library."""

    def __init__(self, lib, modules, step):
        self.lib = lib
        self.modules = modules  # name -> module, the same names in every library
        self.step = step

    def parameter_count(self):
        return sum(p.numel() for m in self.modules.values() for p in m.parameters())


def copy_weights(source, target):
    """Load ``source``'s parameters and buffers into ``target``'s modules, converting each
    tensor through NumPy (``lib.tensor(t.detach().numpy())``)."""
    lib = target.lib
    for name, module in target.modules.items():
        state = source.modules[name].state_dict()
        module.load_state_dict({k: lib.tensor(v.detach().numpy()) for k, v in state.items()})


def _seeded(lib, seed):
    lib.manual_seed(seed)
    return np.random.default_rng(seed)


def _images(lib, rng, batch, shape):
    """Standard normal images in the library's default dtype (drawn in float32 either way)."""
    return lib.from_numpy(rng.standard_normal((batch, *shape), dtype=np.float32)).to(lib.get_default_dtype())


def _labels(lib, rng, shape, classes):
    return lib.from_numpy(rng.integers(0, classes, size=shape, dtype=np.int64))


def _classifier_step(lib, model, optimizer, x, y):
    """One supervised step: cross-entropy of ``model(x)`` against ``y``."""
    criterion = lib.nn.CrossEntropyLoss()

    def step():
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        return (loss,)
    return step


def _classifier(lib, model, rng, batch, shape, lr, channels_last=False):
    x = _images(lib, rng, batch, shape)
    if channels_last:
        model.to(memory_format=lib.channels_last)
        x = x.contiguous(memory_format=lib.channels_last)
    y = _labels(lib, rng, (batch,), 10)
    optimizer = lib.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return Workload(lib, {"model": model}, _classifier_step(lib, model, optimizer, x, y))


def mlp(lib, batch=128, seed=SEED):
    """MLP 784-512-512-10 with ReLU, cross-entropy, SGD with momentum 0.9."""
    rng = _seeded(lib, seed)
    nn = lib.nn
    model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                          nn.Linear(512, 10))
    return _classifier(lib, model, rng, batch, (784,), lr=0.01)


def lenet(lib, batch=64, seed=SEED):
    """LeNet-5 on 1x28x28: conv 1->6 5x5 pad 2, ReLU, maxpool 2, conv 6->16 5x5, ReLU,
    maxpool 2, fully connected 400-120-84-10; SGD with momentum 0.9."""
    rng = _seeded(lib, seed)
    nn = lib.nn
    model = nn.Sequential(
        nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
        nn.Linear(400, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(), nn.Linear(84, 10))
    return _classifier(lib, model, rng, batch, (1, 28, 28), lr=0.01)


def _conv_bn(nn, cin, cout, kernel, stride=1, groups=1):
    return [nn.Conv2d(cin, cout, kernel, stride=stride, padding=kernel // 2, groups=groups,
                      bias=False), nn.BatchNorm2d(cout)]


def _basic_block_class(lib):
    nn = lib.nn

    class BasicBlock(nn.Module):
        """Two 3x3 conv-BN layers with a residual; a 1x1 conv-BN shortcut when the shape
        changes."""

        def __init__(self, cin, cout, stride):
            super().__init__()
            self.body = nn.Sequential(*_conv_bn(nn, cin, cout, 3, stride), nn.ReLU(),
                                      *_conv_bn(nn, cout, cout, 3))
            self.shortcut = (nn.Sequential(*_conv_bn(nn, cin, cout, 1, stride))
                             if stride != 1 or cin != cout else nn.Identity())
            self.relu = nn.ReLU()

        def forward(self, x):
            return self.relu(self.body(x) + self.shortcut(x))
    return BasicBlock


def resnet20(lib, batch=32, seed=SEED, channels_last=False):
    """ResNet-20 for CIFAR 3x32x32: 3 stages of 3 basic blocks (widths 16/32/64), BatchNorm
    in training mode, 1x1-conv shortcuts, global average pooling, fc 10; SGD momentum 0.9."""
    rng = _seeded(lib, seed)
    nn = lib.nn
    block = _basic_block_class(lib)
    layers = [*_conv_bn(nn, 3, 16, 3), nn.ReLU()]
    cin = 16
    for stage, width in enumerate((16, 32, 64)):
        for i in range(3):
            layers.append(block(cin, width, 2 if stage > 0 and i == 0 else 1))
            cin = width
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10)]
    return _classifier(lib, nn.Sequential(*layers), rng, batch, (3, 32, 32), lr=0.1,
                       channels_last=channels_last)


def _inverted_residual_class(lib):
    nn = lib.nn

    class InvertedResidual(nn.Module):
        """MobileNetV2 block: 1x1 expansion (factor t), 3x3 depthwise, 1x1 linear projection;
        a residual when the shape is kept."""

        def __init__(self, cin, cout, stride, t):
            super().__init__()
            hidden = cin * t
            layers = [*_conv_bn(nn, cin, hidden, 1), nn.ReLU6()] if t != 1 else []
            layers += [*_conv_bn(nn, hidden, hidden, 3, stride, groups=hidden), nn.ReLU6(),
                       *_conv_bn(nn, hidden, cout, 1)]
            self.conv = nn.Sequential(*layers)
            self.residual = stride == 1 and cin == cout

        def forward(self, x):
            return x + self.conv(x) if self.residual else self.conv(x)
    return InvertedResidual


MOBILENET_BLOCKS = ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 2, 2))


def mobilenetv2(lib, batch=32, seed=SEED, channels_last=False):
    """MobileNetV2-style network for CIFAR: stem conv 3x3 3->32, inverted residual blocks
    (t, c, n, s) = (1,16,1,1), (6,24,2,2), (6,32,3,2), (6,64,2,2), head 1x1 64->256, fc 10;
    ReLU6 and BatchNorm; SGD momentum 0.9."""
    rng = _seeded(lib, seed)
    nn = lib.nn
    block = _inverted_residual_class(lib)
    layers = [*_conv_bn(nn, 3, 32, 3), nn.ReLU6()]
    cin = 32
    for t, c, n, s in MOBILENET_BLOCKS:
        for i in range(n):
            layers.append(block(cin, c, s if i == 0 else 1, t))
            cin = c
    layers += [*_conv_bn(nn, cin, 256, 1), nn.ReLU6(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
               nn.Linear(256, 10)]
    return _classifier(lib, nn.Sequential(*layers), rng, batch, (3, 32, 32), lr=0.1,
                       channels_last=channels_last)


def _lstm_lm_class(lib):
    nn = lib.nn

    class LSTMLanguageModel(nn.Module):
        """Word-level language model: embedding, 2-layer LSTM, projection to the vocabulary."""

        def __init__(self, vocab, width):
            super().__init__()
            self.embedding = nn.Embedding(vocab, width)
            self.lstm = nn.LSTM(width, width, num_layers=2)
            self.decoder = nn.Linear(width, vocab)

        def forward(self, tokens):
            hidden, _ = self.lstm(self.embedding(tokens))
            return self.decoder(hidden)
    return LSTMLanguageModel


def lstm_lm(lib, batch=20, seq=35, seed=SEED, vocab=10000):
    """Embedding(10000, 200), 2-layer LSTM(200, 200), Linear(200, 10000); sequence 35 x batch
    20 (sequence first), next-token cross-entropy, plain SGD."""
    rng = _seeded(lib, seed)
    model = _lstm_lm_class(lib)(vocab, 200)
    tokens = _labels(lib, rng, (seq, batch), vocab)
    targets = _labels(lib, rng, (seq * batch,), vocab)
    optimizer = lib.optim.SGD(model.parameters(), lr=0.1)
    flat_model = _Flatten(model, vocab)
    return Workload(lib, {"model": model},
                    _classifier_step(lib, flat_model, optimizer, tokens, targets))


class _Flatten:
    """Calls a sequence model and flattens its (seq, batch, vocab) logits to rows."""

    def __init__(self, model, vocab):
        self.model, self.vocab = model, vocab

    def __call__(self, tokens):
        return self.model(tokens).reshape(-1, self.vocab)


def _transformer_lm_class(lib):
    nn = lib.nn

    class TransformerLanguageModel(nn.Module):
        """Decoder-only language model: token and learned position embeddings, pre-norm
        encoder layers under a causal mask, final LayerNorm, projection to the vocabulary."""

        def __init__(self, vocab, seq, width, heads, ff, layers):
            super().__init__()
            self.tokens = nn.Embedding(vocab, width)
            self.positions = nn.Embedding(seq, width)
            self.layers = nn.ModuleList(
                nn.TransformerEncoderLayer(width, heads, ff, dropout=0.0, batch_first=True,
                                           norm_first=True) for _ in range(layers))
            self.norm = nn.LayerNorm(width)
            self.head = nn.Linear(width, vocab)
            self.mask = nn.Transformer.generate_square_subsequent_mask(seq)
            self.position_ids = lib.arange(seq)

        def forward(self, tokens):
            x = self.tokens(tokens) + self.positions(self.position_ids)
            for layer in self.layers:
                x = layer(x, src_mask=self.mask, is_causal=True)
            return self.head(self.norm(x))
    return TransformerLanguageModel


def transformer_lm(lib, batch=16, seq=64, seed=SEED, vocab=1000):
    """Embedding(1000, 128) with learned positions, 2 pre-norm TransformerEncoderLayers
    (d_model 128, 4 heads, feed-forward 512, dropout 0), causal mask; sequence 64, batch 16;
    next-token cross-entropy, Adam."""
    rng = _seeded(lib, seed)
    model = _transformer_lm_class(lib)(vocab, seq, 128, 4, 512, 2)
    tokens = _labels(lib, rng, (batch, seq), vocab)
    targets = _labels(lib, rng, (batch * seq,), vocab)
    optimizer = lib.optim.Adam(model.parameters(), lr=1e-3)
    return Workload(lib, {"model": model},
                    _classifier_step(lib, _Flatten(model, vocab), optimizer, tokens, targets))


def _dcgan_generator(nn, nz):
    def up(cin, cout, stride, padding):
        return [nn.ConvTranspose2d(cin, cout, 4, stride, padding, bias=False),
                nn.BatchNorm2d(cout), nn.ReLU()]
    return nn.Sequential(*up(nz, 256, 1, 0), *up(256, 128, 2, 1), *up(128, 64, 2, 1),
                         nn.ConvTranspose2d(64, 3, 4, 2, 1, bias=False), nn.Tanh())


def _dcgan_discriminator(nn):
    def down(cin, cout, norm=True):
        return [nn.Conv2d(cin, cout, 4, 2, 1, bias=False),
                *([nn.BatchNorm2d(cout)] if norm else []), nn.LeakyReLU(0.2)]
    return nn.Sequential(*down(3, 64, norm=False), *down(64, 128), *down(128, 256),
                         nn.Conv2d(256, 1, 4, 1, 0, bias=False), nn.Flatten())


def dcgan(lib, batch=32, seed=SEED, nz=100):
    """DCGAN at 32x32: ConvTranspose generator 100->256->128->64->3 and conv discriminator
    3->64->128->256->1, BatchNorm, LeakyReLU 0.2, BCEWithLogits, Adam(2e-4, betas (0.5,
    0.999)); one discriminator step and one generator step per iteration."""
    rng = _seeded(lib, seed)
    nn = lib.nn
    generator, discriminator = _dcgan_generator(nn, nz), _dcgan_discriminator(nn)
    noise = _images(lib, rng, batch, (nz, 1, 1))
    real = _images(lib, rng, batch, (3, 32, 32))
    ones, zeros = lib.ones(batch, 1), lib.zeros(batch, 1)
    opt_g = lib.optim.Adam(generator.parameters(), lr=2e-4, betas=(0.5, 0.999))
    opt_d = lib.optim.Adam(discriminator.parameters(), lr=2e-4, betas=(0.5, 0.999))
    criterion = nn.BCEWithLogitsLoss()

    def step():
        fake = generator(noise)
        opt_d.zero_grad()
        loss_d = criterion(discriminator(real), ones) + criterion(discriminator(fake.detach()),
                                                                  zeros)
        loss_d.backward()
        opt_d.step()
        opt_g.zero_grad()
        loss_g = criterion(discriminator(fake), ones)
        loss_g.backward()
        opt_g.step()
        return loss_d, loss_g
    return Workload(lib, {"generator": generator, "discriminator": discriminator}, step)


def _channels_last(build):
    """``build``'s model with its 4-D weights and input images in channels-last memory format
    (torch's ``model.to(memory_format=torch.channels_last)`` recipe)."""
    def channels_last(lib, **kwargs):
        return build(lib, channels_last=True, **kwargs)
    channels_last.__doc__ = f"{build.__name__}, channels-last."
    return channels_last


MODELS = {"mlp": mlp, "lenet": lenet, "resnet20": resnet20, "mobilenetv2": mobilenetv2,
          "lstm_lm": lstm_lm, "transformer_lm": transformer_lm, "dcgan": dcgan,
          "resnet20_channels_last": _channels_last(resnet20),
          "mobilenetv2_channels_last": _channels_last(mobilenetv2)}
