"""Training speed of `wasp-tune nnue train`'s kernels beside PyTorch on the CPU: positions/s of
full training steps (forward, backward, AdamW, clipping) on the same net, data and batch.

    python benchmarks/nnue.py                       # N = 128, batch 16384, 2 threads
    python benchmarks/nnue.py --hidden 256 --batches 10 --threads 1
    python benchmarks/nnue.py --data positions.txt  # bullet text or .bf instead of random

PyTorch is the anchor only (`pip install torch==2.13.0`, a CPU build): never a dependency of
the package; without it the anchor is skipped. It runs two ways, EmbeddingBag sums over the
<= 32 active features and a dense one-hot matrix through nn.Linear (features precomputed before
timing, so its figures leave out the feature decoding that ours includes), with
torch.optim.AdamW and clamping; the faster is the anchor. Data:
random positions (kings and 6 .. 30 pieces anywhere) scored by material, unless --data.
Each figure is the best of --repeat timed runs of --batches steps after a warm-up step.
"""

import argparse
import pathlib
import sys
import time

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
# benchmarks/profile.py would shadow the standard library's `profile`, which torch imports
sys.path[:] = [str(ROOT)] + [p for p in sys.path if pathlib.Path(p or ".").resolve() != HERE]


def best_rate(repeat, batches, batch, step):
    """(positions a wall second, positions a CPU second of the process), the best of `repeat`
    runs of `batches` calls of step(b): on a busy machine the second tells the work apart from
    the waiting."""
    best = (0.0, 0.0)
    for r in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        for b in range(batches):
            step(r * batches + b)
        wall, cpu = time.perf_counter() - t, time.process_time() - c
        best = max(best, (batches * batch / wall, batches * batch / max(cpu, 1e-9)))
    return best


def ours(boards, order, args):
    from tuner.nnue import AdamW, FloatNet, Kernels, set_threads

    set_threads(args.threads)
    net = FloatNet.random(args.hidden, seed=1)
    kernels = Kernels(net)
    moments = {k: (np.zeros_like(a), np.zeros_like(a)) for k, a in net.arrays().items()}
    opt = AdamW()
    state = {"step": 0}

    def step(b):
        idx = order[b % len(order)]
        kernels.run(boards, idx, args.wdl, True)
        state["step"] += 1
        kernels.step(moments, args.lr, state["step"], opt)

    step(0)  # compile or load the kernels
    return best_rate(args.repeat, args.batches, args.batch, step)


def pytorch(boards, order, args, dense=False):
    import torch

    from tuner.nnue import data as D

    torch.set_num_threads(args.threads)
    torch.manual_seed(1)
    stm, ntm, _ = D.features(boards)
    stm = torch.from_numpy(stm)
    ntm = torch.from_numpy(ntm)
    score = torch.from_numpy(D.scores(boards).astype(np.float32))
    result = torch.from_numpy(D.results(boards).astype(np.float32))
    n = args.hidden

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.l0 = torch.nn.EmbeddingBag(D.FEATURES + 1, n, mode="sum",
                                            padding_idx=D.NO_FEATURE)
            self.w0 = torch.nn.Linear(D.FEATURES, n)
            self.b0 = torch.nn.Parameter(torch.zeros(n))
            self.l1 = torch.nn.Linear(2 * n, 1)

        def accumulator(self, features):
            if not dense:
                return self.l0(features) + self.b0
            x = torch.zeros(len(features), D.FEATURES + 1)
            x.scatter_(1, features, 1.0)  # one-hot rows; the padding column dropped
            return self.w0(x[:, :D.FEATURES])

        def forward(self, s, t):
            a = torch.clamp(self.accumulator(s), 0, 1) ** 2
            b = torch.clamp(self.accumulator(t), 0, 1) ** 2
            return self.l1(torch.cat([a, b], dim=1)).squeeze(1)

    net = Net()
    used = [net.w0] if dense else [net.l0, net.b0]
    params = [p for m in used for p in ([m] if isinstance(m, torch.Tensor) else
                                        m.parameters())] + list(net.l1.parameters())
    opt = torch.optim.AdamW(params, lr=args.lr, betas=(0.9, 0.999), eps=1e-8,
                            weight_decay=0.01)

    def step(b):
        idx = torch.from_numpy(order[b % len(order)])
        target = args.wdl * result[idx] + (1 - args.wdl) * torch.sigmoid(score[idx] / 400)
        loss = torch.mean((torch.sigmoid(net(stm[idx], ntm[idx])) - target) ** 2)
        opt.zero_grad()
        loss.backward()
        opt.step()
        with torch.no_grad():
            for p in params:
                p.clamp_(-1.98, 1.98)

    step(0)
    return best_rate(args.repeat, args.batches, args.batch, step)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", nargs="*", default=[], help="bullet text or .bf files")
    ap.add_argument("--positions", type=int, default=200_000, help="random positions")
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--batch", type=int, default=16384)
    ap.add_argument("--batches", type=int, default=6, help="timed steps a run")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--lr", type=float, default=0.001)
    ap.add_argument("--wdl", type=float, default=0.75)
    args = ap.parse_args(argv)

    from tuner.nnue import data as D

    boards = D.load(args.data).boards if args.data else D.random_records(args.positions, 1)
    rng = np.random.default_rng(1)
    perm = rng.permutation(len(boards)).astype(np.int64)
    k = max(1, len(perm) // args.batch)
    order = [perm[i * args.batch:(i + 1) * args.batch] for i in range(k)]
    print(f"(768 -> {args.hidden})x2 -> 1, batch {args.batch}, {len(boards):,} positions, "
          f"{args.threads} thread(s)")
    def show(name, rates):
        print(f"{name:24s}{rates[0]:12,.0f} positions/s  {rates[1]:12,.0f} a CPU second")

    rate = ours(boards, order, args)
    show("wasp-tune nnue (numba):", rate)
    try:
        import torch  # noqa: F401
    except ImportError:
        print("PyTorch (CPU):           skipped (no torch; pip install torch==2.13.0)")
        return 0
    sparse = pytorch(boards, order, args)
    show("PyTorch, EmbeddingBag:", sparse)
    dense = pytorch(boards, order, args, dense=True)
    show("PyTorch, dense one-hot:", dense)
    anchor = max(sparse, dense)
    print(f"ours / the faster PyTorch: {rate[0] / anchor[0]:.2f}x by the clock, "
          f"{rate[1] / anchor[1]:.2f}x by CPU time")
    return 0


if __name__ == "__main__":
    from wasp import kernelcache

    kernelcache.setup(("wasp", "tuner"))
    sys.exit(main())
