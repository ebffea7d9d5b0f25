package tune
