"""What this interpreter can train with: prints one JSON object (Versa lists adapters as available or not from it)."""
import json
import shutil
import sys

out = {"python": sys.version.split()[0], "executable": sys.executable}
for module in ("numpy", "PIL", "torch", "torchvision", "sklearn"):
    try:
        mod = __import__(module)
        out[module] = getattr(mod, "__version__", "yes")
    except Exception as err:  # noqa: BLE001 - any import failure means "not usable"
        out[module] = None
        out[module + "_error"] = "%s: %s" % (type(err).__name__, err)
out["cuda"] = False
if out.get("torch"):
    import torch

    out["cuda"] = bool(torch.cuda.is_available())
out["yolo"] = shutil.which("yolo")
try:
    import ultralytics

    out["ultralytics"] = ultralytics.__version__
except Exception:  # noqa: BLE001
    out["ultralytics"] = None
print(json.dumps(out))
