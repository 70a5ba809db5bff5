"""TheoBERT masked-language-model evaluation: the automatic scorer (`scoring`), where predictions come from
(`sources`: an imported file, or a local fill-mask model in `fillmask`), runs and results (`services`)."""
