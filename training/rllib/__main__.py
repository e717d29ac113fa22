"""``python -m hod.training.rllib``: see :mod:`hod.training.rllib.train`."""
import sys

from hod.training.rllib.train import main

sys.exit(main())
