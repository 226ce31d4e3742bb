"""Research turns: the coordinator, the dynamic search pipeline with its deep-research
checkpoints, the synthesizer, and the offline model that runs them with no key."""
