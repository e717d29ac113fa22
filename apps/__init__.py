"""Floor 5, the applications: the main job (``demo``), playing against the computer in the
terminal (``play_tapeo``, ``play_robada``), and a printed game between bots (``show_game``).
"""
