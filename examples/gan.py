"""A generative adversarial network, as in the PyTorch paper's listing: two models, two Adam
optimizers, ``detach()`` so the discriminator's step leaves the generator alone, and a binary
cross-entropy loss. The generator learns to turn noise into samples of N(4, 1.25^2).

    python examples/gan.py [--epochs N] [--steps-per-epoch N]     (or GAN_EPOCHS=N)
"""
import argparse
import os

import ember
import ember.nn as nn
import ember.optim as optim

TARGET_MEAN, TARGET_STD = 4.0, 1.25
NOISE_DIM, BATCH = 8, 64


def create_generator():
    return nn.Sequential(nn.Linear(NOISE_DIM, 32), nn.LeakyReLU(0.2), nn.Linear(32, 32),
                         nn.LeakyReLU(0.2), nn.Linear(32, 1))


def create_discriminator():
    return nn.Sequential(nn.Linear(1, 32), nn.LeakyReLU(0.2), nn.Linear(32, 32),
                         nn.LeakyReLU(0.2), nn.Linear(32, 1), nn.Sigmoid())


def get_real_sample(n=BATCH):
    return TARGET_MEAN + TARGET_STD * ember.randn(n, 1)


def get_noise(n=BATCH):
    return ember.randn(n, NOISE_DIM)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=int(os.environ.get("GAN_EPOCHS", 30)))
    parser.add_argument("--steps-per-epoch", type=int, default=50)
    args = parser.parse_args()
    ember.manual_seed(0)

    discriminator = create_discriminator()
    generator = create_generator()
    optimD = optim.Adam(discriminator.parameters(), lr=2e-3, betas=(0.5, 0.999))
    optimG = optim.Adam(generator.parameters(), lr=2e-3, betas=(0.5, 0.999))
    loss = nn.BCELoss()
    real_label, fake_label = ember.ones(BATCH, 1), ember.zeros(BATCH, 1)

    def step(real_sample):
        # (1) Update the discriminator: real samples are 1, generated ones 0
        optimD.zero_grad()
        errD_real = loss(discriminator(real_sample), real_label)
        errD_real.backward()
        fake = generator(get_noise())
        errD_fake = loss(discriminator(fake.detach()), fake_label)
        errD_fake.backward()
        optimD.step()
        # (2) Update the generator: make the discriminator call its samples real
        optimG.zero_grad()
        errG = loss(discriminator(fake), real_label)
        errG.backward()
        optimG.step()
        return (errD_real + errD_fake).item(), errG.item()

    for epoch in range(1, args.epochs + 1):
        d_total = g_total = 0.0
        for _ in range(args.steps_per_epoch):
            d_loss, g_loss = step(get_real_sample())
            d_total += d_loss
            g_total += g_loss
        n = args.steps_per_epoch
        print(f"epoch {epoch:3d}   loss_D {d_total / n:.4f}   loss_G {g_total / n:.4f}")

    with ember.no_grad():
        samples = generator(get_noise(4000))
    mean, std = samples.mean().item(), samples.std().item()
    print(f"generated mean {mean:.3f} std {std:.3f} "
          f"(target mean {TARGET_MEAN:.3f} std {TARGET_STD:.3f})")


if __name__ == "__main__":
    main()
