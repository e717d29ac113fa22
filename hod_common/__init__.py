"""Pieces shared by both games' environments: errors, reward schemes, observation layouts,
atomic file writes and the PettingZoo wrapper stack. Nothing here knows any game's rules."""
