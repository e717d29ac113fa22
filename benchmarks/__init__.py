"""Floor 5, command lines that measure: the tournament (``tournament``), the environments' speed
against PettingZoo and OpenSpiel (``throughput``, ``env_speed``). Installed as ``hod.benchmarks``.
"""
