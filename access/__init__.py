"""Who may do what (access.policy), below every app so that all of them can ask it."""
