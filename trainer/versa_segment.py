"""Entry point of the `versa-segment` adapter (semantic segmentation): `python3 trainer/versa_segment.py --config run.json` (JSON lines on stdout)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from versa_trainer.common import run_main  # noqa: E402
from versa_trainer.semantic import main  # noqa: E402

if __name__ == "__main__":
    run_main(main)
