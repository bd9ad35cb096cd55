"""Entry point of the `classify` adapter: `python3 trainer/versa_classify.py --config run.json` (JSON lines on stdout)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from versa_trainer.common import run_main  # noqa: E402
from versa_trainer.classify import main  # noqa: E402

if __name__ == "__main__":
    run_main(main)
