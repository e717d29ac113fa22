"""Floor 2, what every game's PettingZoo/Gymnasium environments share: the one PettingZoo adapter
(:mod:`hod.adapters.game_env`, bound by each game's ``env.py``), the wrapper stack, option
validation, end-of-game infos, and the registration of the Gymnasium ids (string entry points).
"""
