"""Floor 2, the pieces both games' PettingZoo/Gymnasium adapters share: the wrapper stack, option
validation, end-of-game infos, and the registration of the Gymnasium ids (string entry points).
"""
