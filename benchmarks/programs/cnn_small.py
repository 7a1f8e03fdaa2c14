"""A small CNN classifier, written the way the PyTorch MNIST example writes one: two conv
layers with batch norm, ReLU and max pooling, dropout, two linear layers and log_softmax,
trained by SGD with momentum and weight decay under a StepLR schedule on batches from a shuffling
DataLoader over a TensorDataset, with a test pass under eval() and no_grad that counts the
correct predictions. The 16x16 images (bars, crosses, boxes and blobs, shifted and noisy) are
drawn by a seeded generator.

    python benchmarks/programs/cnn_small.py --lib ember|torch [--steps N] [--threads N]
"""
import argparse
import os
import sys
import time

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--lib", choices=("torch", "ember"), default="torch")
parser.add_argument("--steps", type=int, default=600)
parser.add_argument("--threads", type=int, default=1)
args = parser.parse_args()

if args.lib == "ember":
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "src"))
    import ember as torch
else:
    import torch
nn = torch.nn
F = torch.nn.functional
DataLoader = torch.utils.data.DataLoader
TensorDataset = torch.utils.data.TensorDataset

torch.set_num_threads(args.threads)
torch.manual_seed(1)

SIZE = 16
N_CLASSES = 4


def make_images(n, generator):
    """n noisy 16x16 images of four kinds: a horizontal bar, a vertical bar, a cross, a box."""
    labels = torch.randint(0, N_CLASSES, (n,), generator=generator)
    images = torch.zeros(n, 1, SIZE, SIZE)
    offsets = torch.randint(-3, 4, (n, 2), generator=generator)
    for i in range(n):
        r, c = 8 + offsets[i, 0].item(), 8 + offsets[i, 1].item()
        kind = labels[i].item()
        if kind == 0:
            images[i, 0, r - 1:r + 1, 2:14] = 1.0
        elif kind == 1:
            images[i, 0, 2:14, c - 1:c + 1] = 1.0
        elif kind == 2:
            images[i, 0, r, 3:13] = 1.0
            images[i, 0, 3:13, c] = 1.0
        else:
            images[i, 0, r - 4:r + 4, c - 4] = 1.0
            images[i, 0, r - 4:r + 4, c + 3] = 1.0
            images[i, 0, r - 4, c - 4:c + 4] = 1.0
            images[i, 0, r + 3, c - 4:c + 4] = 1.0
    images += 0.3 * torch.randn(images.shape, generator=generator)
    return (images - 0.1) / 0.4, labels


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(16)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(32)
        self.dropout1 = nn.Dropout(0.25)
        self.dropout2 = nn.Dropout(0.5)
        self.fc1 = nn.Linear(32 * 4 * 4, 64)
        self.fc2 = nn.Linear(64, N_CLASSES)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.max_pool2d(F.relu(self.bn2(self.conv2(x))), 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = self.dropout2(x)
        x = self.fc2(x)
        return F.log_softmax(x, dim=1)


def train(model, train_loader, optimizer, epoch, budget):
    model.train()
    done = 0
    for batch_idx, (data, target) in enumerate(train_loader):
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        done += 1
        if batch_idx % 20 == 0:
            print(f"Train Epoch: {epoch} [{batch_idx * len(data)}/{len(train_loader.dataset)}]"
                  f"\tLoss: {loss.item():.6f}")
        if done == budget:
            break
    return done, loss.item()


def test(model, test_loader):
    model.eval()
    test_loss = 0
    correct = 0
    with torch.no_grad():
        for data, target in test_loader:
            output = model(data)
            test_loss += F.nll_loss(output, target, reduction="sum").item()
            pred = output.argmax(dim=1, keepdim=True)
            correct += pred.eq(target.view_as(pred)).sum().item()
    test_loss /= len(test_loader.dataset)
    print(f"Test set: Average loss: {test_loss:.4f}, Accuracy: {correct}/{len(test_loader.dataset)}")
    return test_loss


generator = torch.Generator().manual_seed(0)
train_images, train_labels = make_images(2048, generator)
test_images, test_labels = make_images(512, generator)
train_loader = DataLoader(TensorDataset(train_images, train_labels), batch_size=64, shuffle=True,
                          generator=torch.Generator().manual_seed(0))
test_loader = DataLoader(TensorDataset(test_images, test_labels), batch_size=256)

model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.7)

start = time.perf_counter()
steps = 0
epoch = 1
while steps < args.steps:
    done, loss = train(model, train_loader, optimizer, epoch, args.steps - steps)
    steps += done
    test(model, test_loader)
    scheduler.step()
    epoch += 1

print(f"final loss {loss:.4f}; {args.steps} steps in {time.perf_counter() - start:.2f} s")
