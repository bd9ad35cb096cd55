"""What every adapter shares: the run configuration, its parameters, seeding and threads (the protocol: protocol.py)."""
import json
import os
import random
import sys
import time

from .protocol import PROTOCOL, adapter_defaults, emit


def load_config(argv):
    """`<entry> --config run.json`: the run's parameters, written by Versa (or by hand for a direct run)."""
    if len(argv) != 3 or argv[1] != "--config":
        sys.stderr.write("usage: %s --config run.json\n" % argv[0])
        sys.exit(2)
    with open(argv[2], "r", encoding="utf-8") as handle:
        config = json.load(handle)
    for key in ("data_dir", "out_dir"):
        if key not in config:
            raise SystemExit("config lacks %s" % key)
    os.makedirs(config["out_dir"], exist_ok=True)
    return config


def run_params(adapter, config, extra=None):
    """The run's parameters: the adapter's defaults (defined by the server, contract.json), then the trainer's own
    settings that are no API parameter (`extra`), then what the configuration sets."""
    params = dict(adapter_defaults(adapter), **(extra or {}))
    params.update({k: v for k, v in config.items() if k in params and v is not None})
    return params


def cpu_threads():
    """Cores this process may use (affinity and cgroup quotas respected where Python can see them)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count() or 1
    try:
        with open("/sys/fs/cgroup/cpu.max", "r", encoding="utf-8") as handle:
            quota, period = handle.read().split()
            if quota != "max":
                cores = max(1, min(cores, int(int(quota) / int(period))))
    except (OSError, ValueError):
        pass
    override = os.environ.get("VERSA_TRAIN_THREADS")
    return max(1, int(override)) if override else max(1, cores)


def seed_everything(seed):
    random.seed(seed)
    try:
        import numpy

        numpy.random.seed(seed % (2**32))
    except ImportError:
        pass
    try:
        import torch

        torch.manual_seed(seed)
        torch.use_deterministic_algorithms(True, warn_only=True)
    except ImportError:
        pass


def setup_torch(config):
    """Threads and device; returns (torch, device string). Same seed on CPU gives the same numbers."""
    import torch

    threads = cpu_threads()
    torch.set_num_threads(threads)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass
    requested = config.get("device", "auto")
    if requested in ("auto", None):
        device = "cuda" if torch.cuda.is_available() else "cpu"
    else:
        device = requested
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise SystemExit("device %s requested but CUDA is not available" % device)
    seed_everything(int(config.get("seed", 0)))
    return torch, device, threads


def environment(torch_module=None, device="cpu", threads=None):
    import platform

    env = {"python": platform.python_version(), "device": device, "threads": threads or cpu_threads(), "protocol": PROTOCOL}
    if torch_module is not None:
        env["torch"] = torch_module.__version__
    return env


class Clock:
    """Elapsed time and an ETA from the fraction done."""

    def __init__(self):
        self.start = time.monotonic()

    def elapsed(self):
        return time.monotonic() - self.start

    def eta(self, fraction):
        if fraction <= 0:
            return None
        return max(0.0, self.elapsed() * (1 - fraction) / fraction)


def read_dataset(data_dir):
    with open(os.path.join(data_dir, "dataset.json"), "r", encoding="utf-8") as handle:
        return json.load(handle)


def run_main(main):
    """Runs an adapter's main; any failure becomes a `failed` event and exit status 1."""
    try:
        main(sys.argv)
    except SystemExit as exit_:
        if exit_.code not in (0, None):
            emit("failed", message=str(exit_.code))
            sys.exit(1)
        raise
    except KeyboardInterrupt:
        sys.exit(130)
    except Exception as err:  # noqa: BLE001 - reported to Versa, then re-raised for the traceback on stderr
        emit("failed", message="%s: %s" % (type(err).__name__, err))
        raise
