#!/usr/bin/env python3
"""PyTorch's training images/s on one GPU, for `scalelab-cli bench train --device gpu`.

The model is the PyTorch anchor's (../shared/anchors/torch_anchor.py, the same definitions as
ScaleLab's model zoo), trained eagerly in float32 with TF32 off (as ScaleLab's default) and
cuDNN's autotuner on (ScaleLab picks each convolution's algorithm with cudnnFind), on batches of
random images copied from host memory every step, as ScaleLab's benchmark uploads its prepared
batches. Timing: 5 warm-up steps, then `--windows` windows of max(8, ceil(images / batch))
steps, each between two torch.cuda.synchronize(); one JSON line with the median images/s.
"""
import argparse
import importlib.util
import json
import math
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F


def load_anchor(path):
    if not os.path.exists(path):
        sys.exit(f"error: the PyTorch anchor is not at {path}: pass --anchor with its path")
    spec = importlib.util.spec_from_file_location("torch_anchor", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--anchor", default=os.path.join(os.path.dirname(__file__), "..", "..", "..",
                                                     "shared", "anchors", "torch_anchor.py"))
    ap.add_argument("--model", default="cnn", choices=["mlp", "cnn", "resnet8", "resnet20", "wrn"])
    ap.add_argument("--width", type=int, default=10)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--windows", type=int, default=5)
    ap.add_argument("--images", type=int, default=4096)
    a = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("error: PyTorch sees no GPU")

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    anchor = load_anchor(a.anchor)
    device = torch.device("cuda")
    model = anchor.make_model(a.model, a.width).to(device)
    opt = anchor.sgd(model, a.batch)
    steps = max(8, math.ceil(a.images / a.batch))
    generator = torch.Generator().manual_seed(0)
    batches = [(torch.randn(a.batch, 1, 28, 28, generator=generator),
                torch.randint(0, 10, (a.batch,), generator=generator)) for _ in range(8)]

    def step(i):
        xb, yb = batches[i % len(batches)]
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(xb.to(device)), yb.to(device))
        loss.backward()
        opt.step()

    for i in range(5):
        step(i)
    rates = []
    for _ in range(a.windows):
        torch.cuda.synchronize()
        start = time.perf_counter()
        for i in range(steps):
            step(i)
        torch.cuda.synchronize()
        rates.append(a.batch * steps / (time.perf_counter() - start))
    print(json.dumps(dict(model=a.model, width=a.width, batch=a.batch, steps=steps,
                          images_per_s=round(statistics.median(rates), 1),
                          images_per_s_min=round(min(rates), 1),
                          images_per_s_max=round(max(rates), 1),
                          gpu=torch.cuda.get_device_name(0), torch=torch.__version__)))


if __name__ == "__main__":
    main()
