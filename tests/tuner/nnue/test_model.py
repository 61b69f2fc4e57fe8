"""The trainer's kernels: gradients against finite differences for every architecture, sums
independent of threads, and each saved net read by the engine against the trainer."""

import random

import chess
import numpy as np
import pytest

from tuner.nnue import data as D
from tuner.nnue.model import SCALE, FloatNet, Kernels, evaluate, set_threads
from wasp.board import Position
from wasp.nnue import arch as A
from wasp.nnue import netfile
from wasp.nnue.accumulator import nn_array
from wasp.nnue.arch import Arch
from wasp.nnue.network import output

LAYOUT = [0, 1, 2, 3, 4, 4, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7,  # bullet's example 3 and 4
          8, 8, 8, 8, 8, 8, 8, 8, 9, 9, 9, 9, 9, 9, 9, 9]
ARCHES = {  # (architecture, factoriser): bullet's progression, narrow
    "1 simple": (Arch(hidden=16), False),
    "1 simple, three column blocks": (Arch(hidden=384), False),
    "2 output buckets, CReLU": (Arch(hidden=16, activation="crelu", output_buckets=4), False),
    "3 king buckets": (Arch("buckets-mirrored", LAYOUT, 16, output_buckets=8), False),
    "3 king buckets + factoriser": (Arch("buckets-mirrored", LAYOUT, 16, output_buckets=8),
                                    True),
    "4 multi-layer + factoriser": (Arch("buckets-mirrored", LAYOUT, 16, "crelu", 8, (16, 32)),
                                   True),
}


def _net(hidden, seed, dtype=np.float64):
    net = FloatNet.random(hidden, seed, dtype)
    p = net.params
    p["l0w"] *= 4  # accumulators spread over (0, 1) and beyond: every SCReLU branch is used
    p["l0b"] += 0.4
    p["l1w"] *= 8
    return net


def _spread(arch, factoriser, seed, dtype=np.float64):
    """A net of `arch` whose activations use every branch (below 0, inside, above 1)."""
    net = FloatNet.random(arch, seed, dtype, factoriser)
    rng = np.random.default_rng(seed)
    for name, a in net.params.items():
        a += rng.normal(0, 0.3 if name.startswith("l0") else 0.5, a.shape).astype(dtype)
    if arch.layers:
        net.params["l0b"] += 0.5
    return net


@pytest.mark.parametrize("name", ARCHES)
def test_gradients_match_finite_differences(name):
    arch, factoriser = ARCHES[name]
    boards = D.random_records(200, seed=11)
    idx = np.arange(len(boards), dtype=np.int64)
    idx[::3] = ~idx[::3]  # some mirrored left to right
    net = _spread(arch, factoriser, seed=2)
    kernels = Kernels(net)
    kernels.run(boards, idx, 0.6, True)
    grads = kernels.gradients()
    assert set(grads) == set(net.params) and ("l0f" in grads) == factoriser
    probe = Kernels(net, train=False)

    def loss():
        return probe.run(boards, idx, 0.6, False) / len(idx)

    rng = np.random.default_rng(3)
    checked = 0
    for param, values in net.params.items():
        flat = values.reshape(-1)
        g = grads[param].reshape(-1)
        for i in rng.choice(flat.size, min(flat.size, 15), replace=False):
            old = flat[i]
            flat[i] = old + 1e-6
            up = loss()
            flat[i] = old - 1e-6
            down = loss()
            flat[i] = old
            numeric = (up - down) / 2e-6
            assert abs(numeric - g[i]) <= 1e-6 * max(1.0, abs(numeric)) + 1e-9, (param, i)
            checked += abs(numeric) > 1e-7
    assert checked > 0.5 * 15 * len(net.params)  # most probes see a gradient


def test_the_factoriser_gradient_is_the_sum_of_the_buckets_rows():
    arch, _ = ARCHES["3 king buckets + factoriser"]
    net = _spread(arch, True, seed=4)
    kernels = Kernels(net)
    kernels.run(D.random_records(300, seed=5), np.arange(300, dtype=np.int64), 0.5, True)
    g = kernels.gradients()
    buckets = g["l0w"].reshape(arch.input_buckets, D.FEATURES, arch.hidden)
    assert np.allclose(g["l0f"], buckets.sum(axis=0))
    assert (np.abs(buckets).sum(axis=(1, 2)) > 0).sum() >= 3  # several buckets were used


def test_loss_matches_a_numpy_forward_pass():
    boards = D.random_records(50, seed=4)
    net = _net(16, seed=6)
    p = net.params
    loss, out = evaluate(net, boards, wdl=0.3)
    stm, ntm, counts = D.features(boards)
    acc = p["l0b"] + np.stack([p["l0w"][stm[j, :counts[j]]].sum(0) for j in range(50)])
    other = p["l0b"] + np.stack([p["l0w"][ntm[j, :counts[j]]].sum(0) for j in range(50)])
    h = np.concatenate([np.clip(acc, 0, 1) ** 2, np.clip(other, 0, 1) ** 2], axis=1)
    want = h @ p["l1w"][0] + p["l1b"][0]
    assert np.allclose(out, want)
    target = 0.3 * D.results(boards) + 0.7 / (1 + np.exp(-D.scores(boards) / SCALE))
    assert np.isclose(loss, np.mean((1 / (1 + np.exp(-want)) - target) ** 2))


@pytest.mark.parametrize("name,fused,blocked", [("1 simple, three column blocks", True, False),
                                                ("1 simple, three column blocks", True, True),
                                                ("1 simple, three column blocks", False, None),
                                                ("4 multi-layer + factoriser", None, None)])
def test_losses_and_gradients_do_not_depend_on_threads(name, fused, blocked):
    arch, factoriser = ARCHES[name]
    boards = D.random_records(3000, seed=8)
    idx = np.arange(len(boards), dtype=np.int64)
    results = []
    for threads in (1, 2):
        set_threads(threads)
        kernels = Kernels(_spread(arch, factoriser, seed=1, dtype=np.float32), fused=fused,
                          blocked=blocked)
        loss = kernels.run(boards, idx, 0.75, True)
        results.append((loss, kernels.gradients()))
    set_threads()
    assert results[0][0] == results[1][0]
    for param, g in results[0][1].items():
        assert np.array_equal(g, results[1][1][param])


@pytest.mark.parametrize("blocked", [False, True])
@pytest.mark.parametrize("name", ["1 simple, three column blocks", "2 output buckets, CReLU"])
def test_the_fused_pass_and_the_column_blocks_agree(name, blocked):
    """A Chess768 net small enough for the fused pass gives the losses, outputs and gradients
    of the column-block passes (to rounding), and the same AdamW step, its gradient scattered
    a position at a time or a block of positions at a time."""
    from tuner.nnue.model import AdamW, fits_cache

    arch, factoriser = ARCHES[name]
    assert fits_cache(arch)
    boards = D.random_records(500, seed=6)
    idx = np.arange(500, dtype=np.int64)
    idx[::4] = ~idx[::4]
    nets, results = [], []
    for fused in (True, False):
        net = _spread(arch, factoriser, seed=7)
        kernels = Kernels(net, fused=fused, blocked=blocked)
        out = np.empty(len(idx))
        loss = kernels.run(boards, idx, 0.4, True, out)
        grads = kernels.gradients()
        moments = {k: (np.zeros_like(a), np.zeros_like(a)) for k, a in net.params.items()}
        kernels.step(moments, 0.01, 1, AdamW())
        nets.append(net)
        results.append((loss, out, grads))
    assert np.isclose(results[0][0], results[1][0], rtol=1e-12)
    assert np.allclose(results[0][1], results[1][1], rtol=1e-12, atol=1e-12)
    for param, g in results[0][2].items():
        assert np.allclose(g, results[1][2][param], rtol=1e-9, atol=1e-14), param
    for param, a in nets[0].params.items():
        assert np.allclose(a, nets[1].params[param], rtol=1e-9, atol=1e-12), param


def test_a_second_run_before_a_step_gives_the_same_gradients():
    arch, factoriser = ARCHES["3 king buckets + factoriser"]
    kernels = Kernels(_spread(arch, factoriser, seed=3))
    boards = D.random_records(400, seed=9)
    idx = np.arange(400, dtype=np.int64)
    kernels.run(boards, idx, 0.5, True)
    first = kernels.gradients()
    kernels.run(boards, idx, 0.5, True)
    for param, g in kernels.gradients().items():
        assert np.array_equal(g, first[param]), param


def test_adamw_is_dense_rows_no_position_touched_still_move():
    """As bullet's AdamW: every weight moves each step, the rows of inputs absent from the
    batch by weight decay alone (no moments yet) or by their moments' decay."""
    from tuner.nnue.model import AdamW

    net = _net(16, seed=2, dtype=np.float32)
    kernels = Kernels(net)
    moments = {k: (np.zeros_like(a), np.zeros_like(a)) for k, a in net.params.items()}
    batches = [D.random_records(40, seed=s) for s in (1, 2)]
    seen = []
    for boards in batches:
        stm, ntm, _ = D.features(boards)
        seen.append(set(stm[stm < D.FEATURES].tolist()) | set(ntm[ntm < D.FEATURES].tolist()))
    never = sorted(set(range(D.FEATURES)) - seen[0] - seen[1])
    first_only = sorted(seen[0] - seen[1])
    assert never and first_only
    for step, boards in enumerate(batches, 1):
        before = net.params["l0w"].copy()
        m_before = moments["l0w"][0].copy()
        kernels.run(boards, np.arange(len(boards), dtype=np.int64), 0.5, True)
        kernels.step(moments, 0.01, step, AdamW())
    after = net.params["l0w"]
    assert np.allclose(after[never] - before[never], -0.01 * 0.01 * before[never], rtol=1e-3,
                       atol=1e-10)
    m = moments["l0w"][0]
    assert np.abs(m_before[first_only]).max() > 0
    assert np.allclose(m[first_only], 0.9 * m_before[first_only], rtol=1e-6, atol=0)
    decay_only = -0.01 * 0.01 * before[first_only]
    assert np.abs(after[first_only] - before[first_only] - decay_only).max() > 1e-4


def _tdiv(a, b):
    """Integer division truncating toward zero, as Rust's."""
    q = np.abs(a) // np.abs(b)
    return np.where((a < 0) != (b < 0), -q, q)


def quantised_outputs(net: A.QuantisedNet, boards):
    """The quantised net's output (centipawns, side to move) of each record, as bullet's
    examples compute it, over the trainer's input lists: examples 1-3 in integers, example 4
    with L1's sums exact and the rest in float64 (docs/nnue.md)."""
    arch, t = net.arch, net.tensors
    qa, qb, scale, n = arch.qa, arch.qb, arch.scale, arch.hidden
    stm, ntm, counts = D.features(boards, arch)
    l0w, l0b = t["l0w"].astype(np.int64), t["l0b"].astype(np.int64)
    out = []
    for j, count in enumerate(counts):
        b = min((count - 2) // -(-32 // arch.output_buckets), arch.output_buckets - 1)
        accs = [l0b + l0w[f[j, :count]].sum(0) for f in (stm, ntm)]
        if not arch.layers:
            w = t["l1w"].reshape(arch.output_buckets, 2 * n)[b].astype(np.int64)
            x = np.clip(np.concatenate(accs), 0, qa)
            total = int(((x if arch.activation == "crelu" else x * x) * w).sum())
            if arch.activation == "screlu":
                total = int(_tdiv(total, qa))
            out.append(int(_tdiv((total + int(t["l1b"][b])) * scale, qa * qb)))
            continue
        l1, l2 = arch.layers
        x = np.concatenate([np.clip(a[:n // 2], 0, qa) * np.clip(a[n // 2:], 0, qa)
                            for a in accs])
        h1 = np.clip((t["l1w"][l1 * b:l1 * (b + 1)].astype(np.int64) @ x) / (qa * qa * qb)
                     + t["l1b"][l1 * b:l1 * (b + 1)], 0, 1) ** 2
        h2 = np.clip(t["l2w"][l2 * b:l2 * (b + 1)].astype(np.float64) @ h1
                     + t["l2b"][l2 * b:l2 * (b + 1)], 0, 1) ** 2
        out.append(int((t["l3w"][b].astype(np.float64) @ h2 + t["l3b"][b]) * scale))
    return np.array(out)


def random_positions_as_text(path, games=6, seed=3):
    """Random legal games' positions as bullet text (kings wander over files and buckets),
    scored by material from White's view; their FENs."""
    rng = random.Random(seed)
    values = {chess.PAWN: 100, chess.KNIGHT: 300, chess.BISHOP: 300, chess.ROOK: 500,
              chess.QUEEN: 900, chess.KING: 0}
    fens, lines = [], []
    for _ in range(games):
        board = chess.Board()
        for _ in range(rng.randint(40, 140)):
            moves = list(board.legal_moves)
            if not moves:
                break
            board.push(rng.choice(moves))
            score = sum(values[p.piece_type] * (1 if p.color else -1)
                        for p in board.piece_map().values())
            fens.append(board.fen())
            lines.append(f"{board.fen()} | {score} | {rng.choice(['1.0', '0.5', '0.0'])}\n")
    path.write_text("".join(lines))
    return fens


@pytest.mark.parametrize("name", ARCHES)
def test_a_trained_nets_file_plays_in_the_engine_as_the_trainer_predicts(tmp_path, name):
    """Trained a few steps, saved with NET.json's arch beside it and read by the engine's
    loader: the engine's output is the quantised net's over the trainer's inputs (examples
    1-3 to the integer; example 4 within 1, its float64 sums in another order), and close to
    the trainer's float output."""
    from tuner.nnue.model import AdamW

    arch, factoriser = ARCHES[name]
    fens = random_positions_as_text(tmp_path / "d.txt")
    boards = D.parse_text(tmp_path / "d.txt")
    net = FloatNet.random(arch, seed=1, factoriser=factoriser)
    kernels = Kernels(net)
    moments = {k: (np.zeros_like(a), np.zeros_like(a)) for k, a in net.params.items()}
    rng = np.random.default_rng(0)
    for step in range(1, 41):
        kernels.run(boards, rng.choice(len(boards), 128).astype(np.int64), 0.5, True)
        kernels.step(moments, 0.01, step, AdamW(l0_clip=0.99 if factoriser else 0.0))
    path = tmp_path / "net.nnue"
    net.save(path)
    A.write_meta(path, arch)
    read = netfile.read_net(path)
    assert read.arch == arch
    want = quantised_outputs(read, boards)
    NN = nn_array(read)
    engine = np.array([output(NN, Position(fen).S) for fen in fens])
    if arch.layers:
        assert np.abs(engine - want).max() <= 1
    else:
        assert np.array_equal(engine, want)
    _, floats = evaluate(net, boards)
    assert np.std(want) > 20  # outputs that differ from position to position
    assert np.abs(want - floats * SCALE).mean() < 0.1 * np.std(want)


def test_training_steps_match_pytorchs_adamw_when_torch_is_installed():
    """An independent check of gradients and optimiser: PyTorch's autograd and AdamW (an
    anchor for this test only, never a dependency) take the same 30 steps from the same net."""
    torch = pytest.importorskip("torch")
    from tuner.nnue.model import AdamW

    boards = D.random_records(5000, seed=1)
    net = FloatNet.random(16, seed=3)
    ps = net.params
    ps["l0b"] += 0.1
    stm, ntm, _ = D.features(boards)
    torch_params = [torch.nn.Parameter(torch.from_numpy(a.copy())) for a in
                    (np.vstack([ps["l0w"], np.zeros((1, 16), np.float32)]), ps["l0b"],
                     ps["l1w"][0], ps["l1b"])]
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
    ours = [ps["l0w"], ps["l0b"], ps["l1w"][0], ps["l1b"]]
    theirs = [w0.detach().numpy()[:D.FEATURES], b0.detach().numpy(), w1.detach().numpy(),
              b1.detach().numpy()]
    for a, b in zip(ours, theirs, strict=True):
        assert np.abs(a - b).max() < 1e-4
    assert np.abs(ps["l0w"] - FloatNet.random(16, seed=3).params["l0w"]).max() > 0.05


def test_a_negative_index_is_the_record_mirrored_left_to_right(tmp_path):
    fens = ["r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w - - 0 1",
            "8/8/4k3/8/2Q5/8/5K2/8 b - - 0 60",
            "rnbqkb1r/pp3ppp/4pn2/2pp4/3P4/2P1PN2/PP1N1PPP/R1BQKB1R b - - 0 5"]
    mirrored = [chess.Board(f).transform(chess.flip_horizontal).fen() for f in fens]
    for name, group in (("a", fens), ("b", mirrored)):
        (tmp_path / name).write_text("".join(f"{f} | {40 * i - 30} | 0.5\n"
                                             for i, f in enumerate(group)))
    boards = D.parse_text(tmp_path / "a")
    want_loss, want = evaluate(_net(16, seed=5), D.parse_text(tmp_path / "b"), wdl=0.4)
    loss, out = evaluate(_net(16, seed=5), boards, wdl=0.4, idx=~np.arange(3))
    assert np.allclose(out, want) and np.isclose(loss, want_loss)
    assert not np.allclose(evaluate(_net(16, seed=5), boards)[1], want)  # not symmetric anyway
