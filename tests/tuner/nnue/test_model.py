"""The trainer's kernels: gradients against finite differences, sums independent of threads,
and the quantised net against the float one."""

import chess
import numpy as np
import pytest

from tuner.nnue import data as D
from tuner.nnue.model import PARAMS, SCALE, FloatNet, Kernels, evaluate, set_threads
from wasp.nnue import netfile


def _net(hidden, seed, dtype=np.float64):
    net = FloatNet.random(hidden, seed, dtype)
    net.l0w *= 4  # accumulators spread over (0, 1) and beyond: every SCReLU branch is used
    net.l0b += 0.4
    net.l1w *= 8
    return net


def test_gradients_match_finite_differences():
    boards = D.random_records(300, seed=11)
    idx = np.arange(len(boards), dtype=np.int64)
    net = _net(6, seed=2)
    kernels = Kernels(net)
    kernels.run(boards, idx, 0.6, True)
    grads = kernels.gradients()
    probe = Kernels(net, train=False)

    def loss():
        return probe.run(boards, idx, 0.6, False) / len(idx)

    rng = np.random.default_rng(3)
    checked = 0
    for name in PARAMS:
        flat = getattr(net, name).reshape(-1)
        g = grads[name].reshape(-1)
        for i in rng.choice(flat.size, min(flat.size, 25), replace=False):
            old = flat[i]
            flat[i] = old + 1e-6
            up = loss()
            flat[i] = old - 1e-6
            down = loss()
            flat[i] = old
            numeric = (up - down) / 2e-6
            assert abs(numeric - g[i]) <= 1e-6 * max(1.0, abs(numeric)) + 1e-9, (name, i)
            checked += abs(numeric) > 1e-7
    assert checked > 40  # most probes see a gradient (not all zero by saturation)


def test_loss_matches_a_numpy_forward_pass():
    boards = D.random_records(50, seed=4)
    net = _net(5, seed=6)
    loss, out = evaluate(net, boards, wdl=0.3)
    stm, ntm, counts = D.features(boards)
    acc = net.l0b + np.stack([net.l0w[stm[j, :counts[j]]].sum(0) for j in range(50)])
    other = net.l0b + np.stack([net.l0w[ntm[j, :counts[j]]].sum(0) for j in range(50)])
    h = np.concatenate([np.clip(acc, 0, 1) ** 2, np.clip(other, 0, 1) ** 2], axis=1)
    want = h @ net.l1w + net.l1b[0]
    assert np.allclose(out, want)
    target = 0.3 * D.results(boards) + 0.7 / (1 + np.exp(-D.scores(boards) / SCALE))
    assert np.isclose(loss, np.mean((1 / (1 + np.exp(-want)) - target) ** 2))


def test_chunk_sums_do_not_depend_on_threads():
    boards = D.random_records(3000, seed=8)
    idx = np.arange(len(boards), dtype=np.int64)
    results = []
    for threads in (1, 2):
        set_threads(threads)
        kernels = Kernels(_net(16, seed=1, dtype=np.float32))
        loss = kernels.run(boards, idx, 0.75, True)
        results.append((loss, kernels.gradients()))
    set_threads()
    assert results[0][0] == results[1][0]
    for name in PARAMS:
        assert np.array_equal(results[0][1][name], results[1][1][name])


def _tdiv(a, b):
    """Integer division truncating toward zero, as Rust's."""
    q = np.abs(a) // np.abs(b)
    return np.where((a < 0) != (b < 0), -q, q)


def numpy_net_output(net: netfile.Net, stm, ntm, counts):
    """bullet's integer inference of the simple example over a read net file."""
    qa, qb = netfile.QA, netfile.QB
    l0w = net.l0w.astype(np.int64)
    out = []
    for j in range(len(counts)):
        us = net.l0b.astype(np.int64) + l0w[stm[j, :counts[j]]].sum(0)
        them = net.l0b.astype(np.int64) + l0w[ntm[j, :counts[j]]].sum(0)
        n = net.hidden
        s = (np.clip(us, 0, qa) ** 2 * net.l1w[:n]).sum() + (
            np.clip(them, 0, qa) ** 2 * net.l1w[n:]).sum()
        out.append((_tdiv(s, qa) + net.l1b) * netfile.SCALE)
    return _tdiv(np.array(out, dtype=np.int64), qa * qb)


def test_exported_net_plays_like_the_float_net(tmp_path):
    boards = D.random_records(400, seed=9)
    net = _net(32, seed=5, dtype=np.float32)
    net.l0w *= 0.25
    for a in net.arrays().values():
        np.clip(a, -netfile.WEIGHT_CLIP, netfile.WEIGHT_CLIP, out=a)
    path = tmp_path / "net.nnue"
    netfile.write(net.quantised(), path)
    assert path.stat().st_size == netfile.file_size(32)
    read = netfile.read(path)
    stm, ntm, counts = D.features(boards)
    quantised = numpy_net_output(read, stm, ntm, counts)
    # the integers are the float forward pass of the rounded weights, up to the truncations
    rounded = FloatNet(read.l0w / netfile.QA, read.l0b / netfile.QA, read.l1w / netfile.QB,
                       np.array([read.l1b / (netfile.QA * netfile.QB)]))
    _, exact = evaluate(rounded, boards)
    assert np.abs(quantised - exact * SCALE).max() <= 2
    # and close to the trained float net: the rounding of l1w to 1/64 costs a few centipawns
    _, out = evaluate(net, boards)
    diff = np.abs(quantised - out * SCALE)
    assert np.std(out * SCALE) > 100  # a net whose outputs differ from position to position
    assert diff.mean() < 0.05 * np.std(out * SCALE) and diff.max() < 40


def test_training_steps_match_pytorchs_adamw_when_torch_is_installed():
    """An independent check of gradients and optimiser: PyTorch's autograd and AdamW (an
    anchor for this test only, never a dependency) take the same 30 steps from the same net."""
    torch = pytest.importorskip("torch")
    from tuner.nnue.model import AdamW

    boards = D.random_records(5000, seed=1)
    net = FloatNet.random(16, seed=3)
    net.l0b += 0.1
    stm, ntm, _ = D.features(boards)
    torch_params = [torch.nn.Parameter(torch.from_numpy(a.copy())) for a in
                    (np.vstack([net.l0w, np.zeros((1, 16), np.float32)]), net.l0b, net.l1w,
                     net.l1b)]
    w0, b0, w1, b1 = torch_params
    opt = torch.optim.AdamW(torch_params, lr=0.01, betas=(0.9, 0.999), eps=1e-8,
                            weight_decay=0.01)
    score = torch.from_numpy(D.scores(boards).astype(np.float32))
    result = torch.from_numpy(D.results(boards).astype(np.float32))
    kernels = Kernels(net)
    moments = {k: (np.zeros_like(a), np.zeros_like(a)) for k, a in net.arrays().items()}
    rng = np.random.default_rng(0)
    for step in range(1, 31):
        idx = rng.choice(len(boards), 500, replace=False).astype(np.int64)
        kernels.run(boards, idx, 0.75, True)
        kernels.step(moments, 0.01, step, AdamW())
        h = torch.cat([torch.clamp(w0[torch.from_numpy(f[idx])].sum(1) + b0, 0, 1) ** 2
                       for f in (stm, ntm)], dim=1)
        t = torch.from_numpy(idx)
        target = 0.75 * result[t] + 0.25 * torch.sigmoid(score[t] / SCALE)
        loss = torch.mean((torch.sigmoid(h @ w1 + b1) - target) ** 2)
        opt.zero_grad()
        loss.backward()
        w0.grad[D.NO_FEATURE] = 0  # the padding row stays zero
        opt.step()
        with torch.no_grad():
            for p in torch_params:
                p.clamp_(-netfile.WEIGHT_CLIP, netfile.WEIGHT_CLIP)
            w0[D.NO_FEATURE] = 0
    ours = [net.l0w, net.l0b, net.l1w, net.l1b]
    theirs = [w0.detach().numpy()[:D.FEATURES], b0.detach().numpy(), w1.detach().numpy(),
              b1.detach().numpy()]
    for a, b in zip(ours, theirs, strict=True):
        assert np.abs(a - b).max() < 1e-4
    assert np.abs(net.l0w - FloatNet.random(16, seed=3).l0w).max() > 0.05  # they moved


def test_a_negative_index_is_the_record_mirrored_left_to_right(tmp_path):
    fens = ["r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w - - 0 1",
            "8/8/4k3/8/2Q5/8/5K2/8 b - - 0 60",
            "rnbqkb1r/pp3ppp/4pn2/2pp4/3P4/2P1PN2/PP1N1PPP/R1BQKB1R b - - 0 5"]
    mirrored = [chess.Board(f).transform(chess.flip_horizontal).fen() for f in fens]
    for name, group in (("a", fens), ("b", mirrored)):
        (tmp_path / name).write_text("".join(f"{f} | {40 * i - 30} | 0.5\n"
                                             for i, f in enumerate(group)))
    boards = D.parse_text(tmp_path / "a")
    want_loss, want = evaluate(_net(7, seed=5), D.parse_text(tmp_path / "b"), wdl=0.4)
    loss, out = evaluate(_net(7, seed=5), boards, wdl=0.4, idx=~np.arange(3))
    assert np.allclose(out, want) and np.isclose(loss, want_loss)
    assert not np.allclose(evaluate(_net(7, seed=5), boards)[1], want)  # not symmetric anyway
