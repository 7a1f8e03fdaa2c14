"""What remembering the modifier of each in-place change would cost (issue: errors that point
at the cause). A 100-op in-place chain (mul_, add_, clamp_, cycling) on a 16-element float32
tensor, timed with the modifier recording off (the default) and on (what anomaly detection
turns on), interleaved, against the forward per-op time of benchmarks/overhead.py's chain.

    python benchmarks/inplace_provenance.py [--repeats N]
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import ember
from benchmarks.overhead import N_OPS, framework_forward, measure
from ember.autograd.graph import modifier_recording


def inplace_chain(recording):
    x = ember.tensor([0.5] * 16)

    def run():
        modifier_recording.enabled = recording
        try:
            for i in range(N_OPS):
                step = i % 3
                if step == 0:
                    x.mul_(0.9)
                elif step == 1:
                    x.add_(0.1)
                else:
                    x.clamp_(-1.0, 1.0)
        finally:
            modifier_recording.enabled = False
    return run


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=100)
    parser.add_argument("--inner", type=int, default=5, help="chains per timed sample")
    args = parser.parse_args()
    medians = measure({"in-place, not recorded": inplace_chain(False),
                       "in-place, recorded": inplace_chain(True),
                       "overhead.py chain, forward": framework_forward(ember)},
                      args.repeats, args.inner)
    for name, us in medians.items():
        print(f"{name:<28}{us:8.3f} µs/op")
    cost = medians["in-place, recorded"] - medians["in-place, not recorded"]
    print(f"recording costs {cost:.3f} µs per in-place op: "
          f"{100 * cost / medians['in-place, not recorded']:.1f}% of an in-place op, "
          f"{100 * cost / medians['overhead.py chain, forward']:.1f}% of a forward op of the "
          "overhead chain")


if __name__ == "__main__":
    main()
