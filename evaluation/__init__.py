"""Floor 3, evaluation: the tournament library (schedule, play, statistics, report). Its command
line is :mod:`hod.benchmarks.tournament`.
"""
