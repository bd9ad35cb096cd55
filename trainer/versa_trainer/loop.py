"""The epoch loop the PyTorch adapters (detect, classify, semantic) share, and the weight averaging it keeps."""
import copy
import math
import time

from .protocol import emit

PROGRESS_EVERY_S = 2.0


class EMA(object):
    """Exponential moving average of the weights (YOLOv5's ModelEMA: decay ramps up over the first updates)."""

    def __init__(self, torch, model, decay=0.9999, tau=2000):
        self.torch = torch
        self.ema = copy.deepcopy(model).eval()
        for p in self.ema.parameters():
            p.requires_grad_(False)
        self.updates = 0
        self.decay = lambda x: decay * (1 - math.exp(-x / tau))

    def update(self, model):
        with self.torch.no_grad():
            self.updates += 1
            d = self.decay(self.updates)
            msd = model.state_dict()
            for k, v in self.ema.state_dict().items():
                if v.dtype.is_floating_point:
                    v.mul_(d).add_(msd[k].detach(), alpha=1 - d)
                else:
                    v.copy_(msd[k])


def fit(model, ema, optimizer, train_size, batch, epochs, budget, rng, clock, learning_rate, step, evaluate,
        partial_batches=False, clip_grad=None, ties_to_later=True):
    """
    Trains `epochs` passes over `train_size` items in batches of `batch`, shuffled by `rng`, and stops early once the
    time `budget` (seconds, or None) is spent. Per batch: `learning_rate(iteration, total, fraction)` sets the rate
    (`fraction`: the larger of iterations done and budget spent), `step(indices)` returns the loss tensor and any
    named parts (floats) to average over the epoch; the optimiser steps and `ema` follows the weights. Per epoch:
    `evaluate()` returns the row's metrics and the fitness that picks the best epoch (ties go to the later one unless
    not `ties_to_later`), and an `epoch` event is emitted. Without `partial_batches` the last incomplete batch of an epoch is skipped.
    Returns (history rows, (best fitness, best EMA state dict, best epoch)).
    """
    per_epoch = math.ceil(train_size / batch) if partial_batches else max(1, train_size // batch)
    total = epochs * per_epoch
    history, best, iteration, last_report = [], (-math.inf, None, 0), 0, time.monotonic()
    for epoch in range(1, epochs + 1):
        model.train()
        order = rng.permutation(train_size)
        sums, steps = {}, 0
        for b in range(per_epoch):
            if budget and b > 0 and clock.elapsed() >= budget:
                break
            fraction = max(iteration / total, clock.elapsed() / budget if budget else 0)
            lr = learning_rate(iteration, total, fraction)
            for group in optimizer.param_groups:
                group["lr"] = lr
            loss, parts = step(order[b * batch : (b + 1) * batch])
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            if clip_grad:
                ema.torch.nn.utils.clip_grad_norm_(model.parameters(), clip_grad)
            optimizer.step()
            ema.update(model)
            for name, value in dict({"train_loss": float(loss)}, **parts).items():
                sums[name] = sums.get(name, 0.0) + value
            steps += 1
            iteration += 1
            if time.monotonic() - last_report > PROGRESS_EVERY_S:
                last_report = time.monotonic()
                done = max(iteration / total, clock.elapsed() / budget if budget else 0)
                emit("progress", progress=min(0.99, done), eta_seconds=clock.eta(done), epoch=epoch, message="epoch %d/%d" % (epoch, epochs))
        metrics, fitness = evaluate()
        row = dict({"epoch": epoch}, **{name: value / max(1, steps) for name, value in sums.items()})
        row.update(metrics)
        row.update(lr=lr, time=round(clock.elapsed(), 3))
        history.append(row)
        if fitness > best[0] or (ties_to_later and fitness == best[0]):
            best = (fitness, copy.deepcopy(ema.ema.state_dict()), epoch)
        done = max(epoch / epochs, clock.elapsed() / budget if budget else 0)
        emit("epoch", epochs=epochs, progress=min(0.99, done), eta_seconds=clock.eta(done), **row)
        if budget and clock.elapsed() >= budget:
            break
    return history, best
