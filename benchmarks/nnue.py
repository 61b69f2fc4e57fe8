"""Training speed of `wasp-tune nnue train`'s kernels beside PyTorch on the CPU: positions/s of
full training steps (forward, backward, AdamW, clipping) on the same net, data and batch.

    python benchmarks/nnue.py                       # the issue's two nets, batch 16384, 2 threads
    python benchmarks/nnue.py --net 768-128         # example 1 at N = 128
    python benchmarks/nnue.py --net 768x10hm-1024x8f --batches 4 --threads 1

A net is named `768-N` (example 1), `768-Nx8` (8 output buckets), `768x10hm-Nx8` (example 3's
king buckets), with a trailing `f` for its factoriser and `m` for example 4's layers (the
pairwise product, 16 and 32, CReLU then SCReLU). PyTorch is the anchor only (`pip install
torch==2.13.0`, a CPU build): never a dependency of the package; without it the anchor is
skipped. It runs EmbeddingBag sums over the <= 32 active inputs (and for Chess768 also a dense
one-hot matrix through nn.Linear; inputs precomputed before timing, so its figures leave out the
input decoding that ours includes), the factoriser a second EmbeddingBag over the input modulo
768, each later layer as nn.Linear over every output bucket with the position's bucket picked
by indexing (as bullet's `select`), torch.optim.AdamW and clamping (l0 to +-0.99 with a
factoriser, as ours); the faster is the anchor. Data: random positions (kings and 6 .. 30
pieces anywhere) scored by material, unless --data. Each figure is the best of --repeat timed
runs of --batches steps after a warm-up step.
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


LAYOUT = [0, 1, 2, 3, 4, 4, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7,  # bullet's examples 3 and 4
          8, 8, 8, 8, 8, 8, 8, 8, 9, 9, 9, 9, 9, 9, 9, 9]
NETS = ["768x10hm-1024x8f", "768-512x8"]  # the goals: 200 k/s and 500 k/s


def parse_net(name):
    """(Arch, factoriser) of a name such as 768x10hm-1024x8f (f: a factoriser; m: example 4's
    pairwise product and layers 16 and 32, CReLU)."""
    from wasp.nnue.arch import Arch

    body = name.rstrip("fm")
    factoriser, layers = "f" in name[len(body):], "m" in name[len(body):]
    inputs, _, rest = body.partition("-")
    hidden, _, k = rest.partition("x")
    bucketed = inputs == "768x10hm"
    if inputs not in ("768", "768x10hm") or not hidden.isdigit():
        raise SystemExit(f"--net {name}: not 768-N[xK][f][m] or 768x10hm-N[xK][f][m]")
    arch = Arch("buckets-mirrored" if bucketed else "chess768", LAYOUT if bucketed else
                [0] * 32, int(hidden), "crelu" if layers else "screlu", int(k or 1),
                (16, 32) if layers else ())
    return arch, factoriser


def ours(boards, order, args, arch, factoriser):
    from tuner.nnue import AdamW, FloatNet, Kernels, set_threads

    set_threads(args.threads)
    net = FloatNet.random(arch, seed=1, factoriser=factoriser)
    kernels = Kernels(net)
    moments = {k: (np.zeros_like(a), np.zeros_like(a)) for k, a in net.arrays().items()}
    opt = AdamW(l0_clip=0.99 if factoriser else 0.0)
    state = {"step": 0}

    def step(b):
        idx = order[b % len(order)]
        kernels.run(boards, idx, args.wdl, True)
        state["step"] += 1
        kernels.step(moments, args.lr, state["step"], opt)

    step(0)  # compile or load the kernels
    return best_rate(args.repeat, args.batches, args.batch, step)


def pytorch(boards, order, args, arch, factoriser, dense=False):
    import torch

    from tuner.nnue import data as D

    torch.set_num_threads(args.threads)
    torch.manual_seed(1)
    stm, ntm, counts = D.features(boards, arch)
    pad = arch.features
    stm_f = np.where(stm == pad, D.FEATURES, stm % D.FEATURES)
    ntm_f = np.where(ntm == pad, D.FEATURES, ntm % D.FEATURES)
    k = arch.output_buckets
    bucket = torch.from_numpy(np.minimum((counts - 2) // -(-32 // k), k - 1))
    stm, ntm = torch.from_numpy(stm), torch.from_numpy(ntm)
    stm_f, ntm_f = torch.from_numpy(stm_f), torch.from_numpy(ntm_f)
    score = torch.from_numpy(D.scores(boards).astype(np.float32))
    result = torch.from_numpy(D.results(boards).astype(np.float32))
    n = arch.hidden

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.l0 = torch.nn.EmbeddingBag(pad + 1, n, mode="sum", padding_idx=pad)
            self.l0f = torch.nn.EmbeddingBag(D.FEATURES + 1, n, mode="sum",
                                             padding_idx=D.FEATURES)
            self.w0 = torch.nn.Linear(pad, n)
            self.b0 = torch.nn.Parameter(torch.zeros(n))
            if arch.layers:
                w1, w2 = arch.layers
                self.heads = torch.nn.ModuleList([torch.nn.Linear(n, w1 * k),
                                                  torch.nn.Linear(w1, w2 * k),
                                                  torch.nn.Linear(w2, k)])
            else:
                self.heads = torch.nn.ModuleList([torch.nn.Linear(2 * n, k)])

        def accumulator(self, features, factorised):
            if dense:
                x = torch.zeros(len(features), pad + 1)
                x.scatter_(1, features, 1.0)  # one-hot rows; the padding column dropped
                return self.w0(x[:, :pad])
            acc = self.l0(features) + self.b0
            return acc + self.l0f(factorised) if factoriser else acc

        def forward(self, s, t, sf, tf, b):
            if not arch.layers:
                a = torch.clamp(self.accumulator(s, sf), 0, 1) ** 2
                c = torch.clamp(self.accumulator(t, tf), 0, 1) ** 2
                out = self.heads[0](torch.cat([a, c], dim=1))
                return out.gather(1, b[:, None]).squeeze(1)
            half = n // 2
            x = []
            for acc in (self.accumulator(s, sf), self.accumulator(t, tf)):
                acc = torch.clamp(acc, 0, 1)
                x.append(acc[:, :half] * acc[:, half:])  # example 4's pairwise product
            h = torch.cat(x, dim=1)
            rows = torch.arange(len(b))
            for layer, width in zip(self.heads[:2], arch.layers, strict=True):
                h = torch.clamp(layer(h).view(-1, k, width)[rows, b], 0, 1) ** 2
            return self.heads[2](h).gather(1, b[:, None]).squeeze(1)

    net = Net()
    first = [net.w0] if dense else [net.l0, net.b0] + ([net.l0f] if factoriser else [])
    params = [p for m in first for p in ([m] if isinstance(m, torch.Tensor) else
                                         m.parameters())] + list(net.heads.parameters())
    l0 = {id(p) for m in first[:1] + first[2:] for p in m.parameters()}
    opt = torch.optim.AdamW(params, lr=args.lr, betas=(0.9, 0.999), eps=1e-8,
                            weight_decay=0.01)

    def step(b):
        idx = torch.from_numpy(order[b % len(order)])
        target = args.wdl * result[idx] + (1 - args.wdl) * torch.sigmoid(score[idx] / 400)
        out = net(stm[idx], ntm[idx], stm_f[idx], ntm_f[idx], bucket[idx])
        loss = torch.mean((torch.sigmoid(out) - target) ** 2)
        opt.zero_grad()
        loss.backward()
        opt.step()
        with torch.no_grad():
            for p in params:
                clip = 0.99 if factoriser and id(p) in l0 else 1.98
                p.clamp_(-clip, clip)

    step(0)
    return best_rate(args.repeat, args.batches, args.batch, step)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", nargs="*", default=[], help="bullet text or .bf files")
    ap.add_argument("--positions", type=int, default=200_000, help="random positions")
    ap.add_argument("--net", nargs="*", default=NETS, help="nets to time (default: %(default)s)")
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
    print(f"batch {args.batch}, {len(boards):,} positions, {args.threads} thread(s)")

    def show(name, rates):
        print(f"  {name:24s}{rates[0]:12,.0f} positions/s  {rates[1]:12,.0f} a CPU second",
              flush=True)

    try:
        import torch  # noqa: F401
    except ImportError:
        torch = None
    for name in args.net:
        arch, factoriser = parse_net(name)
        print(f"{arch.describe()}{' + factoriser' if factoriser else ''}:", flush=True)
        rate = ours(boards, order, args, arch, factoriser)
        show("wasp-tune nnue (numba):", rate)
        if torch is None:
            print("  PyTorch (CPU):           skipped (no torch; pip install torch==2.13.0)")
            continue
        anchors = [pytorch(boards, order, args, arch, factoriser)]
        show("PyTorch, EmbeddingBag:", anchors[0])
        if arch.features == 768:
            anchors.append(pytorch(boards, order, args, arch, factoriser, dense=True))
            show("PyTorch, dense one-hot:", anchors[1])
        anchor = max(anchors)
        print(f"  ours / the faster PyTorch: {rate[0] / anchor[0]:.2f}x by the clock, "
              f"{rate[1] / anchor[1]:.2f}x by CPU time", flush=True)
    return 0


if __name__ == "__main__":
    from wasp import kernelcache

    kernelcache.setup(("wasp", "tuner"))
    sys.exit(main())
