"""memvault.toml: the vault's settings (`core`), and curate's table (`curate`), checked when read."""
