"""Time travel: the vault as of any event time or commit, what changed, what superseded what;
git history read through `gitio`, snapshots and the precomputed recorded-time index."""
